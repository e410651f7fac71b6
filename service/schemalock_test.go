package service_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
	"github.com/quarrydata/quarry/store"
)

// TestIndexBuildHoldsNoLock holds an index build of a big class in the
// index's build hook and meanwhile reads and writes that class (new
// fields included, which decide under the schema lock) and another one:
// each call returning while the build is held is the proof. The planner
// must not see the half-built index; once built, it must hold the writes
// made during the build (the indexed find equals a scan of every object).
func TestIndexBuildHoldsNoLock(t *testing.T) {
	s := openTestService(t, service.Options{AllowClientClassCreation: true})
	master := service.Auth{Master: true}
	const n = 3000
	var ids []string
	for i := range n {
		r, err := s.Create(master, "Big", map[string]any{"n": float64(i % 50)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ObjectID)
	}
	paused, resume := make(chan struct{}), make(chan struct{})
	var once sync.Once
	s.Data().SetBuildHook(func(class, path string) {
		if class == "Big" && path == "n" {
			once.Do(func() { close(paused) })
			<-resume
		}
	})
	defer s.Data().SetBuildHook(nil)
	built := make(chan error, 1)
	go func() { built <- s.EnsureIndex("Big", "n") }()
	<-paused

	if s.Data().Collection("Big", false).HasIndex("n") {
		t.Fatal("the planner sees the index while it is built")
	}
	steps := []struct {
		name string
		do   func(i int) error
	}{
		{"update the class being indexed", func(i int) error {
			_, err := s.Update(master, "Big", ids[i*7], map[string]any{"n": float64(100 + i%3)})
			return err
		}},
		{"delete from it", func(i int) error { return s.Delete(master, "Big", ids[i*7+1]) }},
		{"create in it with a new field", func(i int) error {
			_, err := s.Create(master, "Big", map[string]any{"n": float64(i % 4), fmt.Sprintf("f%d", i%3): "x"})
			return err
		}},
		{"read it by id", func(i int) error {
			_, err := s.Get(master, "Big", ids[i*7+2], service.ReadOptions{})
			return err
		}},
		{"find in it", func(i int) error {
			_, err := s.Find(master, "Big", service.FindParams{Where: map[string]any{"n": float64(i % 50)}, Limit: 5})
			return err
		}},
		{"create another class", func(i int) error {
			_, err := s.Create(master, "Other", map[string]any{fmt.Sprintf("g%d", i%5): float64(i)})
			return err
		}},
		{"index another class", func(i int) error { return s.EnsureIndex("Other", fmt.Sprintf("g%d", i%5)) }},
		{"find in another class", func(i int) error {
			_, err := s.Find(master, "Other", service.FindParams{Limit: 5})
			return err
		}},
	}
	for i := range 40 {
		for _, st := range steps {
			if err := st.do(i); err != nil {
				t.Fatalf("%s while the index builds: %v", st.name, err)
			}
		}
	}
	close(resume)
	if err := <-built; err != nil {
		t.Fatal(err)
	}
	if !s.Data().Collection("Big", false).HasIndex("n") {
		t.Fatal("the index was not published")
	}
	// Differential: the planner's indexed answers against every object.
	all, err := s.Find(master, "Big", service.FindParams{Limit: 100000})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []float64{0, 1, 3, 49, 100, 101, 102} {
		want := 0
		for _, o := range all.Results {
			if o["n"] == v {
				want++
			}
		}
		res, err := s.Find(master, "Big", service.FindParams{Where: map[string]any{"n": v}, Limit: 100000, Explain: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Results) != want {
			t.Fatalf("n = %v: the indexed find has %d objects, a scan %d (plan %v)", v, len(res.Results), want, res.Explain)
		}
	}
}

// pausingStore holds the commits of a class's schema until released.
type pausingStore struct {
	store.Adapter
	mu     sync.Mutex
	class  string
	paused chan struct{}
	resume chan struct{}
	fail   error // what the held commit returns instead of committing
}

func (p *pausingStore) arm(class string) (paused, resume chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.class, p.paused, p.resume = class, make(chan struct{}), make(chan struct{})
	return p.paused, p.resume
}

func (p *pausingStore) Commit(records []store.Record) error {
	p.mu.Lock()
	class, paused, resume := p.class, p.paused, p.resume
	if class != "" {
		for _, r := range records {
			if r.Kind == store.KindSchema && r.Class == class {
				p.class = "" // once
				fail := p.fail
				p.mu.Unlock()
				close(paused)
				<-resume
				if fail != nil {
					return fail
				}
				return p.Adapter.Commit(records)
			}
		}
	}
	p.mu.Unlock()
	return p.Adapter.Commit(records)
}

// TestFieldCommitOutsideSchemaLock holds the commit of a write that adds
// a field (as a slow fsync would) and meanwhile makes the schema
// decisions of other classes and the writes of the same class that add
// nothing: each returning is the proof that the commit holds no lock
// they need. A write deciding the same field with another type waits for
// the held commit and then loses to it.
func TestFieldCommitOutsideSchemaLock(t *testing.T) {
	a, err := store.Open(filepath.Join(t.TempDir(), "q.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	ps := &pausingStore{Adapter: a}
	s, err := service.Open(ps, service.Options{AllowClientClassCreation: true})
	if err != nil {
		t.Fatal(err)
	}
	master := service.Auth{Master: true}
	if _, err := s.Create(master, "Slow", map[string]any{"a": 1.0}); err != nil {
		t.Fatal(err)
	}
	paused, resume := ps.arm("Slow")
	held := make(chan error, 1)
	go func() {
		_, err := s.Create(master, "Slow", map[string]any{"a": 2.0, "b": 1.0})
		held <- err
	}()
	<-paused
	if _, err := s.Create(master, "Slow", map[string]any{"a": 3.0}); err != nil {
		t.Fatalf("a write of known fields of the class: %v", err)
	}
	if _, err := s.Create(master, "Fast", map[string]any{"c": "x"}); err != nil {
		t.Fatalf("a write adding a field to another class: %v", err)
	}
	if err := s.EnsureIndex("Fast", "c"); err != nil {
		t.Fatalf("an index declaration on another class: %v", err)
	}
	if err := s.SetMeta("k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	if f := s.Class("Slow").Fields["b"]; f.Type != "" {
		t.Fatalf("the field shows before its commit: %v", f)
	}
	conflicting := make(chan error, 1)
	go func() {
		_, err := s.Create(master, "Slow", map[string]any{"b": "a string"})
		conflicting <- err
	}()
	close(resume)
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	err = <-conflicting
	var se *schema.Error
	if !errors.As(err, &se) || se.Code != schema.CodeIncorrectType {
		t.Fatalf("the conflicting write: %v, want an incorrect type error", err)
	}
	if f := s.Class("Slow").Fields["b"]; f.Type != schema.TypeNumber {
		t.Fatalf("b is %q", f.Type)
	}
}

// TestMetaReadDuringSetMeta reads settings and the GraphQL configuration
// while they change (run it with -race): every read sees one whole
// committed value.
func TestMetaReadDuringSetMeta(t *testing.T) {
	s := openTestService(t, service.Options{})
	master := service.Auth{Master: true}
	const writes = 200
	var wg sync.WaitGroup
	stop := make(chan struct{})
	errs := make(chan error, 4)
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				g := s.GraphQLSettings()
				if g.Err != nil {
					errs <- g.Err
					return
				}
				list, _ := g.Config["disabledForClasses"].([]any)
				if g.Raw != nil && len(list) != 1 {
					errs <- fmt.Errorf("a read saw %v", g.Config)
					return
				}
				if v, ok := s.Meta("k"); ok && len(v) == 0 {
					errs <- fmt.Errorf("an empty setting")
					return
				}
			}
		}()
	}
	for i := range writes {
		if err := s.SetGraphQLConfig(master, map[string]any{"disabledForClasses": []any{fmt.Sprintf("C%d", i)}}); err != nil {
			t.Fatal(err)
		}
		if err := s.SetMeta("k", []byte(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
	cfg, err := s.GraphQLConfig()
	if err != nil || fmt.Sprint(cfg["disabledForClasses"]) != fmt.Sprintf("[C%d]", writes-1) {
		t.Fatalf("last config %v %v", cfg, err)
	}
}

// TestFailedFieldCommitPublishesNothing: a write whose commit fails
// leaves the schema as it was and its class free for the next decision.
func TestFailedFieldCommitPublishesNothing(t *testing.T) {
	a, err := store.Open(filepath.Join(t.TempDir(), "q.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	ps := &pausingStore{Adapter: a}
	s, err := service.Open(ps, service.Options{AllowClientClassCreation: true})
	if err != nil {
		t.Fatal(err)
	}
	master := service.Auth{Master: true}
	if _, err := s.Create(master, "Slow", map[string]any{"a": 1.0}); err != nil {
		t.Fatal(err)
	}
	_, resume := ps.arm("Slow")
	ps.mu.Lock()
	ps.fail = errors.New("disk gone")
	ps.mu.Unlock()
	close(resume)
	if _, err := s.Create(master, "Slow", map[string]any{"b": 1.0}); err == nil {
		t.Fatal("the failed commit reported success")
	}
	if _, ok := s.Class("Slow").Fields["b"]; ok {
		t.Fatal("a field whose commit failed is in the schema")
	}
	if _, err := s.Create(master, "Slow", map[string]any{"b": "text"}); err != nil {
		t.Fatalf("the next decision on the class: %v", err)
	}
	if f := s.Class("Slow").Fields["b"]; f.Type != schema.TypeString {
		t.Fatalf("b is %q", f.Type)
	}
}
