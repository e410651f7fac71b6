package cloud_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/quarrydata/quarry/cloud"
	"github.com/quarrydata/quarry/service"
	"github.com/quarrydata/quarry/store"
)

// The cost of cloud code on the write and read paths, in process on an
// in-memory store so that the trigger's own cost is not lost in an fsync.
// Compare Create_NoTrigger with Create_BeforeSave_Go and _JS: the issue's
// goal is a no-op trigger adding under 20 µs.

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

func benchCreate(b *testing.B, s *service.Service) {
	body := map[string]any{"n": 1.0}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Create(service.Auth{}, "Item", body); err != nil {
			b.Fatal(err)
		}
	}
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
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Find(service.Auth{}, "Item", service.FindParams{Limit: 10}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFind_NoTrigger(b *testing.B) { benchFind(b, open(b, nil)) }

func BenchmarkFind_BeforeFind_JS(b *testing.B) { benchFind(b, open(b, jsRegistry(b))) }

// BenchmarkFunction_JS is a function call's round trip inside the server
// (the HTTP layer aside): validators, a runtime from the pool, the result.
func BenchmarkFunction_JS(b *testing.B) {
	reg := jsRegistry(b)
	open(b, reg)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := reg.RunFunction(service.Auth{}, "ping", nil); err != nil {
			b.Fatal(err)
		}
	}
}

// The trigger alone, as the service calls it on a create and a find: what
// a no-op JavaScript trigger adds, without the store's own cost and noise.
func BenchmarkTrigger_BeforeSave_JS(b *testing.B) {
	reg := jsRegistry(b)
	open(b, reg)
	b.ReportAllocs()
	for b.Loop() {
		req := &service.TriggerRequest{Kind: service.BeforeSave, Class: "Item", Object: map[string]any{"n": 1.0}}
		if err := reg.Trigger(req); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTrigger_BeforeFind_JS(b *testing.B) {
	reg := jsRegistry(b)
	open(b, reg)
	b.ReportAllocs()
	for b.Loop() {
		req := &service.FindRequest{Kind: service.BeforeFind, Class: "Item", Params: &service.FindParams{Limit: 10}}
		if err := reg.Find(req); err != nil {
			b.Fatal(err)
		}
	}
}
