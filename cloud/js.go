package cloud

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"time"

	"github.com/dlclark/regexp2/v2"
	"github.com/dop251/goja"
	"github.com/dop251/goja_nodejs/buffer"
	"github.com/dop251/goja_nodejs/console"
	"github.com/dop251/goja_nodejs/eventloop"
	"github.com/dop251/goja_nodejs/require"

	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
)

// preludeFS holds the prelude, the global Parse object every runtime
// starts with, cut by concern into the files preludeParts lists.
//
//go:embed prelude/*.js
var preludeFS embed.FS

// preludeParts are the prelude's files in the order they are joined: the
// body of one function, opened in core.js and closed in invoke.js, so
// that the parts share its private scope.
var preludeParts = []string{"core.js", "objects.js", "query.js", "geo.js", "sdkobjects.js", "sdkquery.js", "cloud.js", "sdkglobal.js", "node.js", "esm.js", "invoke.js"}

// preludeProgram is compiled once and shared by every runtime.
var preludeProgram = goja.MustCompile(preludeName, joinPrelude(), true)

// preludeName is the prelude's file name in stacks.
const preludeName = "quarry-prelude.js"

func joinPrelude() string {
	var b strings.Builder
	for _, name := range preludeParts {
		part, err := preludeFS.ReadFile("prelude/" + name)
		if err != nil {
			panic(err) // a part listed but not embedded: a build mistake
		}
		b.Write(part)
	}
	return b.String()
}

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
	// MaxMemory bounds how much the heap may grow while one call runs
	// (cloudCodeMaxMemory, see memoryGuard): past it the call fails with
	// 141 and its runtime is replaced. 0 is DefaultMaxMemory; negative
	// sets no bound.
	MaxMemory int64
	// Env names the environment variables process.env shows
	// (cloudCodeEnv); none by default.
	Env []string
	// AppID and ServerURL are Parse.applicationId and Parse.serverURL.
	AppID, ServerURL string
	// MasterKey is Parse.masterKey, as Parse Server initializes the SDK
	// cloud code runs with (apps send it in their own HTTP calls).
	MasterKey string
}

// Scripts is a pool of JavaScript runtimes, each one with main.js loaded.
type Scripts struct {
	reg  *Registry
	main string
	// dir is main.js's folder, realDir the same with links resolved:
	// require() reads nothing outside them and node_modules (inCloud).
	dir, realDir string
	req          *require.Registry
	log          *slog.Logger

	idle chan *jsRuntime
	mu   sync.Mutex
	// missing is the first file require() could not find, for the
	// start-up error (goja_nodejs only says "Invalid module").
	missing string
	live    int
	max     int
	// size is the pool's size at start, which replace keeps it at.
	size   int
	closed bool
	// mem bounds each call's memory; nil when maxMemory is not positive.
	mem       *memoryGuard
	maxMemory int64
	env       []string // process.env's variables (JSOptions.Env)
	appID     string
	serverURL string
	masterKey string
}

// jsRuntime is one goja runtime and its event loop. The loop is not left
// running: whoever checked the runtime out of the pool runs it on their
// own goroutine (EventLoop.Run), so a handler that answers at once costs
// no goroutine hand-off; the loop turns only while timers or HTTP
// requests are pending. handlers are what this runtime's main.js defined
// ("kind:name").
type jsRuntime struct {
	loop     *eventloop.EventLoop
	vm       *goja.Runtime
	handlers map[string]goja.Value
	invoke   goja.Callable
	// timers and inflight count the timers and Parse.Cloud.httpRequest
	// calls not yet done; only the goroutine running the loop touches them.
	// queued says loop jobs may wait for the loop's next turn (an answered
	// request clears its keep-alive timer that way).
	timers, inflight int
	queued           bool
	// loading is main.js's completion while its top-level await runs.
	loading *goja.Promise
	// One call at a time: what it runs, its answer, and the job's message
	// callback. run and the callbacks are made once per runtime, so that
	// a call allocates none of them.
	kind, handler goja.Value
	req           map[string]any
	answered      bool
	out           map[string]any
	failed        error
	doneFn, msgFn goja.Value
	message       func(string)
	run           func(*goja.Runtime)
	kinds         map[string]goja.Value // the kind names as JS strings
	// The watchdog interrupts a call past its deadline or its memory
	// (jswatchdog.go). mu orders the timer's ticks with arm and disarm;
	// the rest is the current call's state.
	watchdog    *time.Timer
	mem         *memoryGuard
	mu          sync.Mutex
	armed       bool
	deadline    time.Time
	stopped     stopReason
	heapStart   uint64 // the call's first heap reading (0: none yet)
	peakRunning int64  // the most calls seen running at once since
	heapSample  [1]metrics.Sample
	unwatch     func() bool
	cancelFn    func()
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
	if opts.MaxMemory == 0 {
		opts.MaxMemory = DefaultMaxMemory
	}
	s := &Scripts{reg: reg, main: main, dir: filepath.Dir(main), log: reg.log, idle: make(chan *jsRuntime, opts.MaxSize), max: opts.MaxSize,
		size: opts.Size, maxMemory: opts.MaxMemory, env: opts.Env,
		appID: opts.AppID, serverURL: opts.ServerURL, masterKey: opts.MasterKey}
	s.realDir, _ = filepath.EvalSymlinks(s.dir)
	if opts.MaxMemory > 0 {
		s.mem = &memoryGuard{allowance: uint64(opts.MaxMemory)}
	}
	s.req = require.NewRegistry(require.WithLoader(s.load))
	s.req.RegisterNativeModule(console.ModuleName, console.RequireWithPrinter(printer{s.log}))
	s.registerNode()
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
	rt := &jsRuntime{handlers: map[string]goja.Value{}, kinds: map[string]goja.Value{}, mem: s.mem}
	rt.loop = eventloop.NewEventLoop(eventloop.EnableConsole(false), eventloop.WithRegistry(s.req))
	rt.run = rt.runCall
	rt.cancelFn = rt.cancel
	rt.watchdog = time.AfterFunc(time.Hour, rt.tick)
	rt.watchdog.Stop()
	var err error
	rt.loop.Run(func(vm *goja.Runtime) {
		rt.vm = vm
		err = s.setup(rt, vm, register)
	})
	if err == nil && rt.loading != nil {
		err = s.awaitMain(rt)
	}
	if err != nil {
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
	vm.SetMaxCallStackSize(maxCallDepth)
	vm.Set("console", require.Require(vm, console.ModuleName))
	s.enableRequire(vm)
	buffer.Enable(vm)
	enableNode(vm)
	natives := s.natives(rt, vm, register)
	natives["node"] = s.nodeNatives(vm)
	natives["promiseState"] = promiseState
	natives["appId"], natives["serverURL"], natives["masterKey"] = s.appID, s.serverURL, s.masterKey
	vm.Set("__quarry", natives)
	if _, err := vm.RunProgram(preludeProgram); err != nil {
		return fmt.Errorf("cloud code prelude: %w", err)
	}
	inv, ok := goja.AssertFunction(vm.Get("__quarryInvoke"))
	if !ok {
		return errors.New("cloud code prelude: no invoke function")
	}
	rt.invoke = inv
	rt.answerTo(vm)
	exports := require.Require(vm, s.main) // panics (recovered above) when main.js fails to load
	rt.loading = pendingModule(vm, exports)
	return nil
}

// load reads the app's files for require(), remembering a missing one.
func (s *Scripts) load(path string) ([]byte, error) {
	if !s.inCloud(path) {
		return nil, errOutsideCloud
	}
	b, err := require.DefaultSourceLoader(path)
	if errors.Is(err, require.ModuleFileDoesNotExistError) {
		s.mu.Lock()
		if s.missing == "" {
			s.missing = path
		}
		s.mu.Unlock()
	}
	if err != nil {
		return nil, err
	}
	return scriptSource(path, b)
}

// regexpMatchBound bounds each match of a backtracking regular expression
// (goja runs those on regexp2, in one call the watchdog cannot interrupt:
// '^(a+)+\\1$' on 28 a's and a '!' never returns). A match past it ends
// as no match; a call past cloudCodeTimeout meanwhile is then stopped by
// the watchdog (124). regexp2 reads the bound from a package variable when
// a pattern is compiled, so it is one for the process, set before any
// runtime exists; no sane match needs a second.
const regexpMatchBound = time.Second

func init() { regexp2.DefaultMatchTimeout = regexpMatchBound }

// Close stops every idle runtime; a nil Scripts does nothing.
func (s *Scripts) Close() {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
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

// call runs the handler key ("kind:name") with a request on the calling
// goroutine and returns its answer (at once for a handler that returns no
// promise, else when the promise settles), exported to Go values with
// numbers as float64, as encoding/json gives them. Past ctx's deadline the
// script is interrupted (124) and its runtime replaced, so the pool stays
// usable.
func (s *Scripts) call(ctx context.Context, kind, key string, req map[string]any, message func(string)) (map[string]any, error) {
	rt, err := s.acquire(ctx)
	if err != nil {
		return nil, err
	}
	h, ok := rt.handlers[key]
	if !ok {
		s.release(rt)
		return nil, schema.Errorf(schema.CodeScriptFailed, "cloud code handler %s is not defined in every runtime", key)
	}
	// The watchdog stops a runaway script, or a loop waiting on a timer
	// past the deadline, or a script past its memory; the runtime is then
	// not reused (its globals may hold the memory).
	rt.arm(ctx)
	kept := false
	defer func() {
		if kept {
			return
		}
		rt.disarm()
		if v := recover(); v != nil {
			// A Go panic left the loop marked running: forget the runtime
			// and let the registry's guard answer.
			s.drop()
			panic(v)
		}
		s.discard(rt) // stopped by the watchdog
	}()
	rt.vm.ClearInterrupt()
	kv, ok := rt.kinds[kind]
	if !ok {
		kv = rt.vm.ToValue(kind)
		rt.kinds[kind] = kv
	}
	req["triggerName"] = boxedKind(kind)
	if kind == "job" {
		req["message"] = rt.msgFn
	}
	rt.kind, rt.handler, rt.req = kv, h, req
	rt.answered, rt.out, rt.failed, rt.message = false, nil, nil, message
	rt.loop.Run(rt.run)
	if why := rt.disarm(); why != notStopped {
		if why == stoppedMemory {
			s.reg.stats.memoryStops.Add(1)
			s.log.Warn("cloud code exceeded its memory limit; the runtime is replaced", "handler", key, "limit", formatBytes(s.maxMemory))
		}
		return nil, s.stopError(why)
	}
	kept = true
	out, failed, answered := rt.out, rt.failed, rt.answered
	rt.handler, rt.req, rt.out, rt.failed, rt.message = nil, nil, nil, nil, nil
	if rt.busy() {
		go s.drain(rt) // timers or requests the handler left behind
	} else {
		s.release(rt)
	}
	if !answered {
		return nil, schema.Errorf(schema.CodeScriptFailed, "cloud code %s: the handler's promise never settled", key)
	}
	return out, failed
}

// runCall is the current call's turn of the loop (rt.run).
func (rt *jsRuntime) runCall(vm *goja.Runtime) {
	if _, err := rt.invoke(goja.Undefined(), rt.kind, rt.handler, vm.ToValue(rt.req), rt.doneFn); err != nil && !rt.answered {
		rt.answer(nil, scriptError(err))
	}
}

// boxedKinds are the kind names as interface values, made once: putting
// a string into a map[string]any allocates.
var boxedKinds = func() map[string]any {
	m := map[string]any{"function": "function", "job": "job"}
	for k := service.TriggerKind(0); k < service.NumTriggerKinds; k++ {
		m[k.String()] = k.String()
	}
	return m
}()

func boxedKind(kind string) any {
	if b, ok := boxedKinds[kind]; ok {
		return b
	}
	return kind
}

// busy reports whether timers, HTTP requests or loop jobs are still
// pending.
func (rt *jsRuntime) busy() bool {
	return rt.timers > 0 || rt.inflight > 0 || rt.queued
}

// drain runs what a handler left pending (fire-and-forget timers and
// requests, as Node would run them after the reply) for at most the
// registry's timeout, then returns the runtime to the pool, or replaces
// it when its work did not end in time.
func (s *Scripts) drain(rt *jsRuntime) {
	ctx, cancel := context.WithTimeout(context.Background(), s.reg.timeout)
	defer cancel()
	rt.arm(ctx)
	defer func() {
		if v := recover(); v != nil {
			s.log.Error("cloud code panicked in a timer", "panic", fmt.Sprint(v))
			rt.disarm()
			s.discard(rt)
		}
	}()
	rt.vm.ClearInterrupt()
	rt.queued = false
	rt.loop.Run(func(*goja.Runtime) {})
	if rt.queued && rt.timers == 0 && rt.inflight == 0 {
		// Run ends once no timer is left; a job queued in its last turn
		// (a keep-alive cleared) takes one more.
		rt.queued = false
		rt.loop.Run(func(*goja.Runtime) {})
	}
	if why := rt.disarm(); why != notStopped || rt.busy() {
		if why == stoppedMemory {
			s.reg.stats.memoryStops.Add(1)
			s.log.Warn("cloud code: a timer exceeded the memory limit; the runtime is replaced", "limit", formatBytes(s.maxMemory))
		} else {
			s.log.Warn("cloud code: timers or requests still pending after the timeout; the runtime is replaced")
		}
		s.discard(rt)
		return
	}
	s.release(rt)
}

// discard stops a runtime that may be in any state and forgets it; a
// freshly loaded one takes its place, so that the pool keeps its size and
// what the old one held becomes garbage.
func (s *Scripts) discard(rt *jsRuntime) {
	s.drop()
	go func() {
		rt.loop.Terminate()
		s.replace()
	}()
}

// replace loads a runtime into the pool when it holds fewer than it
// started with (acquire grows it on demand past that).
func (s *Scripts) replace() {
	s.mu.Lock()
	fill := !s.closed && s.live < s.size
	if fill {
		s.live++
	}
	s.mu.Unlock()
	if !fill {
		return
	}
	rt, err := s.newRuntime(false)
	if err != nil {
		s.drop()
		s.log.Error("cloud code: a replacement runtime did not load", "error", err.Error())
		return
	}
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		rt.loop.Terminate()
		return
	}
	s.release(rt)
}

// answer records the call's answer and ends the loop's turn: the caller
// has what it waits for (timers still pending run later, see drain).
func (rt *jsRuntime) answer(out map[string]any, err error) {
	rt.answered, rt.out, rt.failed = true, out, err
	rt.loop.StopNoWait()
}

// answerTo makes the done and message callbacks every call passes to the
// prelude, once per runtime. They take goja.FunctionCall so that goja
// calls them without reflection.
func (rt *jsRuntime) answerTo(vm *goja.Runtime) {
	rt.doneFn = vm.ToValue(func(c goja.FunctionCall) goja.Value {
		m, _ := jsonNumbers(c.Argument(0).Export()).(map[string]any) // nil: nothing changed
		rt.answer(m, nil)
		return goja.Undefined()
	})
	rt.msgFn = vm.ToValue(func(c goja.FunctionCall) goja.Value {
		if rt.message != nil {
			rt.message(c.Argument(0).String())
		}
		return goja.Undefined()
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
	var deep *goja.StackOverflowError
	if errors.As(err, &deep) {
		return schema.Errorf(schema.CodeScriptFailed, "Maximum call stack size exceeded (%d calls deep).", maxCallDepth)
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
