package cloud_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/quarrydata/quarry/bench/cputime"
	"github.com/quarrydata/quarry/cloud"
	"github.com/quarrydata/quarry/service"
	"github.com/quarrydata/quarry/store"
)

// The cost of cloud code on the write and read paths, in process on an
// in-memory store so that the trigger's own cost is not lost in an fsync.
// Compare Create_NoTrigger with Create_BeforeSave_Go and _JS: the issue's
// goal is a no-op trigger adding under 20 µs. Besides wall time each
// benchmark reports cpu-µs/op, the process's CPU time (every thread, the
// garbage collector's too) over the loop: on a shared machine wall time
// also counts the time other processes held the cores.

const noopCloud = `
Parse.Cloud.beforeSave("Item", () => {});
Parse.Cloud.beforeFind("Item", () => {});
Parse.Cloud.define("ping", () => "pong");
`

func open(b *testing.B, reg *cloud.Registry) *service.Service {
	b.Helper()
	a, err := store.Open(store.MemoryURI)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { a.Close() })
	opts := service.Options{AllowClientClassCreation: true}
	if reg != nil {
		opts.Hooks = reg
	}
	s, err := service.Open(a, opts)
	if err != nil {
		b.Fatal(err)
	}
	if reg != nil {
		reg.Attach(s)
	}
	return s
}

func jsRegistry(b *testing.B) *cloud.Registry {
	b.Helper()
	main := filepath.Join(b.TempDir(), "main.js")
	if err := os.WriteFile(main, []byte(noopCloud), 0o600); err != nil {
		b.Fatal(err)
	}
	reg := cloud.New(slog.New(slog.NewTextHandler(io.Discard, nil)), 0)
	scripts, err := cloud.LoadJS(reg, cloud.JSOptions{Main: main})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(scripts.Close)
	return reg
}

// loop runs op b.N times and reports allocations and CPU time per op.
func loop(b *testing.B, op func() error) {
	b.ReportAllocs()
	start := cputime.Used()
	for b.Loop() {
		if err := op(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cputime.Used()-start)/float64(b.N)/1e3, "cpu-µs/op")
}

func benchCreate(b *testing.B, s *service.Service) {
	body := map[string]any{"n": 1.0}
	loop(b, func() error {
		_, err := s.Create(service.Auth{}, "Item", body)
		return err
	})
}

func BenchmarkCreate_NoTrigger(b *testing.B) { benchCreate(b, open(b, nil)) }

func BenchmarkCreate_BeforeSave_Go(b *testing.B) {
	reg := cloud.New(nil, 0)
	reg.BeforeSave("Item", func(context.Context, *cloud.TriggerRequest) error { return nil })
	benchCreate(b, open(b, reg))
}

func BenchmarkCreate_BeforeSave_JS(b *testing.B) { benchCreate(b, open(b, jsRegistry(b))) }

func benchFind(b *testing.B, s *service.Service) {
	for range 50 {
		if _, err := s.Create(service.Auth{Master: true}, "Item", map[string]any{"n": 1.0}); err != nil {
			b.Fatal(err)
		}
	}
	loop(b, func() error {
		_, err := s.Find(service.Auth{}, "Item", service.FindParams{Limit: 10})
		return err
	})
}

func BenchmarkFind_NoTrigger(b *testing.B) { benchFind(b, open(b, nil)) }

func BenchmarkFind_BeforeFind_JS(b *testing.B) { benchFind(b, open(b, jsRegistry(b))) }

// BenchmarkFunction_JS is a function call's round trip inside the server
// (the HTTP layer aside): validators, a runtime from the pool, the result.
func BenchmarkFunction_JS(b *testing.B) {
	reg := jsRegistry(b)
	open(b, reg)
	loop(b, func() error {
		_, err := reg.RunFunction(service.Auth{}, "ping", nil)
		return err
	})
}

// The trigger alone, as the service calls it on a create and a find: what
// a no-op JavaScript trigger adds, without the store's own cost and noise.
func BenchmarkTrigger_BeforeSave_JS(b *testing.B) {
	reg := jsRegistry(b)
	open(b, reg)
	loop(b, func() error {
		return reg.Trigger(&service.TriggerRequest{Kind: service.BeforeSave, Class: "Item", Object: map[string]any{"n": 1.0}})
	})
}

func BenchmarkTrigger_BeforeFind_JS(b *testing.B) {
	reg := jsRegistry(b)
	open(b, reg)
	loop(b, func() error {
		return reg.Find(&service.FindRequest{Kind: service.BeforeFind, Class: "Item", Params: &service.FindParams{Limit: 10}})
	})
}

// BenchmarkLoadJS_OneRuntime is a runtime's start: the prelude (the SDK
// and the Node modules) and a small main.js (the goal: ≤ 50 ms).
func BenchmarkLoadJS_OneRuntime(b *testing.B) {
	main := filepath.Join(b.TempDir(), "main.js")
	if err := os.WriteFile(main, []byte(noopCloud), 0o600); err != nil {
		b.Fatal(err)
	}
	loop(b, func() error {
		scripts, err := cloud.LoadJS(cloud.New(slog.New(slog.NewTextHandler(io.Discard, nil)), 0), cloud.JSOptions{Main: main, Size: 1})
		scripts.Close()
		return err
	})
}
