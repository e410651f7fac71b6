package cloud

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/dop251/goja"
	"github.com/dop251/goja_nodejs/buffer"
	"github.com/dop251/goja_nodejs/console"
	"github.com/dop251/goja_nodejs/eventloop"
	"github.com/dop251/goja_nodejs/require"

	"github.com/quarrydata/quarry/schema"
)

//go:embed prelude.js
var prelude string

// preludeProgram is compiled once and shared by every runtime.
var preludeProgram = goja.MustCompile("quarry-prelude.js", prelude, true)

// JSOptions configure the JavaScript runtimes.
type JSOptions struct {
	// Main is the entry file (the cloud option); require() resolves the
	// app's relative files from its folder.
	Main string
	// Size is the number of runtimes loaded at start (GOMAXPROCS when 0).
	// The pool grows on demand up to MaxSize (4 × Size, at least 8) so that
	// cloud code calling the SDK, which may run more triggers, never waits
	// on itself.
	Size    int
	MaxSize int
}

// Scripts is a pool of JavaScript runtimes, each one with main.js loaded.
type Scripts struct {
	reg  *Registry
	main string
	req  *require.Registry
	log  *slog.Logger

	idle chan *jsRuntime
	mu   sync.Mutex
	// missing is the first file require() could not find, for the
	// start-up error (goja_nodejs only says "Invalid module").
	missing string
	live    int
	max     int
}

// jsRuntime is one goja runtime on its own event loop. handlers are what
// this runtime's main.js defined ("kind:name"); only the loop touches them.
type jsRuntime struct {
	loop     *eventloop.EventLoop
	vm       *goja.Runtime // for Interrupt only, from other goroutines
	handlers map[string]goja.Value
	invoke   goja.Callable
	// One call at a time: its answer, and the job's message callback.
	done          chan map[string]any
	failed        chan error
	doneFn, msgFn goja.Value
	message       func(string)
}

// LoadJS loads opts.Main into a pool of runtimes and defines its
// functions, jobs and triggers in reg. A script that fails to load (a
// syntax error, an exception at top level) is an error naming its file
// and line.
func LoadJS(reg *Registry, opts JSOptions) (*Scripts, error) {
	main, err := filepath.Abs(opts.Main)
	if err != nil {
		return nil, err
	}
	if opts.Size <= 0 {
		opts.Size = runtime.GOMAXPROCS(0)
	}
	if opts.MaxSize < opts.Size {
		opts.MaxSize = max(4*opts.Size, 8)
	}
	s := &Scripts{reg: reg, main: main, log: reg.log, idle: make(chan *jsRuntime, opts.MaxSize), max: opts.MaxSize}
	s.req = require.NewRegistry(require.WithLoader(s.load))
	s.req.RegisterNativeModule(console.ModuleName, console.RequireWithPrinter(printer{s.log}))
	for i := 0; i < opts.Size; i++ {
		rt, err := s.newRuntime(i == 0)
		if err != nil {
			s.Close()
			return nil, err
		}
		s.live++
		s.idle <- rt
	}
	return s, nil
}

// newRuntime starts a runtime and loads main.js; the first one also
// defines the handlers in the registry.
func (s *Scripts) newRuntime(register bool) (*jsRuntime, error) {
	rt := &jsRuntime{handlers: map[string]goja.Value{}}
	rt.loop = eventloop.NewEventLoop(eventloop.EnableConsole(false), eventloop.WithRegistry(s.req))
	rt.loop.Start()
	errc := make(chan error, 1)
	rt.loop.RunOnLoop(func(vm *goja.Runtime) {
		rt.vm = vm
		errc <- s.setup(rt, vm, register)
	})
	if err := <-errc; err != nil {
		rt.loop.Terminate()
		return nil, err
	}
	return rt, nil
}

func (s *Scripts) setup(rt *jsRuntime, vm *goja.Runtime, register bool) (err error) {
	defer func() {
		if v := recover(); v != nil {
			msg := strings.TrimPrefix(fmt.Sprint(v), "GoError: ")
			s.mu.Lock()
			if strings.HasPrefix(msg, "Invalid module") && s.missing != "" {
				msg = "cannot find module " + s.missing
			}
			s.mu.Unlock()
			err = fmt.Errorf("cloud code %s: %s", s.main, msg)
		}
	}()
	vm.SetFieldNameMapper(goja.UncapFieldNameMapper())
	vm.Set("console", require.Require(vm, console.ModuleName))
	buffer.Enable(vm)
	vm.Set("__quarry", s.natives(rt, vm, register))
	if _, err := vm.RunProgram(preludeProgram); err != nil {
		return fmt.Errorf("cloud code prelude: %w", err)
	}
	inv, ok := goja.AssertFunction(vm.Get("__quarryInvoke"))
	if !ok {
		return errors.New("cloud code prelude: no invoke function")
	}
	rt.invoke = inv
	rt.answerTo(vm)
	require.Require(vm, s.main) // panics (recovered above) when main.js fails to load
	return nil
}

// load reads the app's files for require(), remembering a missing one.
func (s *Scripts) load(path string) ([]byte, error) {
	b, err := require.DefaultSourceLoader(path)
	if errors.Is(err, require.ModuleFileDoesNotExistError) {
		s.mu.Lock()
		if s.missing == "" {
			s.missing = path
		}
		s.mu.Unlock()
	}
	return b, err
}

// Close stops every idle runtime; a nil Scripts does nothing.
func (s *Scripts) Close() {
	if s == nil {
		return
	}
	for {
		select {
		case rt := <-s.idle:
			rt.loop.Terminate()
		default:
			return
		}
	}
}

// acquire takes an idle runtime, starts a new one when none is idle and
// the pool may grow, or waits until ctx ends.
func (s *Scripts) acquire(ctx context.Context) (*jsRuntime, error) {
	select {
	case rt := <-s.idle:
		return rt, nil
	default:
	}
	s.mu.Lock()
	grow := s.live < s.max
	if grow {
		s.live++
	}
	s.mu.Unlock()
	if grow {
		rt, err := s.newRuntime(false)
		if err != nil {
			s.drop()
			return nil, err
		}
		return rt, nil
	}
	select {
	case rt := <-s.idle:
		return rt, nil
	case <-ctx.Done():
		return nil, schema.Errorf(schema.CodeTimeout, "Script timed out: every cloud code runtime stayed busy.")
	}
}

func (s *Scripts) release(rt *jsRuntime) { s.idle <- rt }

// drop forgets a runtime that was stopped (or never started).
func (s *Scripts) drop() {
	s.mu.Lock()
	s.live--
	s.mu.Unlock()
}

// call runs the handler key ("kind:name") with a request and waits for
// its answer (at once for a handler that returns no promise, else when the
// promise settles), exported to Go values with numbers as float64, as
// encoding/json gives them. Past ctx's deadline the script is interrupted
// (124) and its runtime replaced, so the pool stays usable.
func (s *Scripts) call(ctx context.Context, kind, key string, req map[string]any, message func(string)) (map[string]any, error) {
	rt, err := s.acquire(ctx)
	if err != nil {
		return nil, err
	}
	// The runtime is ours alone until released: its answer channels and
	// callbacks are made once, when it starts (see answerTo).
	done, failed := rt.done, rt.failed
	rt.loop.RunOnLoop(func(vm *goja.Runtime) {
		vm.ClearInterrupt()
		rt.message = message
		h, ok := rt.handlers[key]
		if !ok {
			failed <- schema.Errorf(schema.CodeScriptFailed, "cloud code handler %s is not defined in every runtime", key)
			return
		}
		if _, err := rt.invoke(goja.Undefined(), vm.ToValue(kind), h, vm.ToValue(req), rt.doneFn, rt.msgFn); err != nil {
			failed <- scriptError(err)
		}
	})
	select {
	case out := <-done:
		s.release(rt)
		return out, nil
	case err := <-failed:
		s.release(rt)
		return nil, err
	case <-ctx.Done():
		rt.vm.Interrupt("timeout")
		s.drop()
		go rt.loop.Terminate()
		return nil, schema.Errorf(schema.CodeTimeout, "Script timed out after %s.", s.reg.timeout)
	}
}

// answerTo makes a runtime's answer channels and the done and message
// callbacks every call passes to the prelude (on the runtime's loop).
func (rt *jsRuntime) answerTo(vm *goja.Runtime) {
	rt.done, rt.failed = make(chan map[string]any, 1), make(chan error, 1)
	rt.doneFn = vm.ToValue(func(out goja.Value) {
		m, ok := jsonNumbers(out.Export()).(map[string]any)
		if !ok {
			m = map[string]any{}
		}
		rt.done <- m
	})
	rt.msgFn = vm.ToValue(func(m string) {
		if rt.message != nil {
			rt.message(m)
		}
	})
}

// jsonNumbers gives exported values the number type encoding/json
// decodes to (float64): goja exports whole numbers as int64.
func jsonNumbers(v any) any {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case map[string]any:
		for k, e := range x {
			switch e.(type) {
			case int64, map[string]any, []any:
				x[k] = jsonNumbers(e)
			}
		}
	case []any:
		for i, e := range x {
			x[i] = jsonNumbers(e)
		}
	}
	return v
}

// scriptError turns a goja failure into a Parse error without a stack.
func scriptError(err error) error {
	var ex *goja.Exception
	if errors.As(err, &ex) {
		return schema.Errorf(schema.CodeScriptFailed, "%s", ex.Value().String())
	}
	var intr *goja.InterruptedError
	if errors.As(err, &intr) {
		return schema.Errorf(schema.CodeTimeout, "Script timed out.")
	}
	return schema.Errorf(schema.CodeScriptFailed, "%s", err.Error())
}

// printer sends console output to the server log.
type printer struct{ log *slog.Logger }

func (p printer) Log(s string)   { p.log.Info(s, "source", "cloud") }
func (p printer) Warn(s string)  { p.log.Warn(s, "source", "cloud") }
func (p printer) Error(s string) { p.log.Error(s, "source", "cloud") }
