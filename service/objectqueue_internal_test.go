package service

import (
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/store"
)

// gatedStore holds the first Commit after arm until release, records what
// every Commit held, and fails the Commits failAt names.
type gatedStore struct {
	store.Adapter
	mu      sync.Mutex
	armed   bool
	held    chan struct{} // closed once a Commit waits at the gate
	gate    chan struct{}
	commits [][]store.Record
	failAt  map[int]bool // 0-based Commit numbers after arm to fail
	after   int          // Commits since arm
}

func (g *gatedStore) arm(failAt ...int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.armed, g.held, g.gate, g.after = true, make(chan struct{}), make(chan struct{}), 0
	g.commits, g.failAt = nil, map[int]bool{}
	for _, n := range failAt {
		g.failAt[n] = true
	}
}

var errGatedCommit = errors.New("gated store: refused")

func (g *gatedStore) Commit(records []store.Record) error {
	g.mu.Lock()
	if !g.armed {
		g.mu.Unlock()
		return g.Adapter.Commit(records)
	}
	n := g.after
	g.after++
	g.commits = append(g.commits, records)
	fail := g.failAt[n]
	g.mu.Unlock()
	if n == 0 {
		close(g.held)
		<-g.gate
	}
	if fail {
		return errGatedCommit
	}
	return g.Adapter.Commit(records)
}

// objectRecords counts commit i's records of class's object id.
func (g *gatedStore) objectRecords(i int, class, id string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := 0
	for _, r := range g.commits[i] {
		if r.Kind == store.KindObject && r.Class == class && r.Key == id {
			n++
		}
	}
	return n
}

// queued is how many updates of class/id wait for a run.
func (s *Service) queued(class, id string) int {
	q := &s.objectQueues
	q.mu.Lock()
	defer q.mu.Unlock()
	if o := q.objects[class+"\x00"+id]; o != nil {
		return len(o.waiting)
	}
	return 0
}

// openGated opens a service on a gated embedded store, its changes sent
// to changes.
func openGated(t *testing.T, changes chan<- Change) (*Service, *gatedStore) {
	t.Helper()
	a, err := store.Open(filepath.Join(t.TempDir(), "q.db"))
	if err != nil {
		t.Fatal(err)
	}
	g := &gatedStore{Adapter: a}
	s, err := Open(g, Options{AllowClientClassCreation: true, OnChange: func(c Change) { changes <- c }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.CloseChanges(time.Second); a.Close() })
	return s, g
}

func increment() map[string]any {
	return map[string]any{"n": map[string]any{"__op": "Increment", "amount": 1.0}}
}

// queuedOutcome is one update's answer.
type queuedOutcome struct {
	res UpdateResult
	err error
}

// queueBehindHeld sends first, waits until its commit is held at the
// gate, then sends each of rest, each once the one before is queued, so
// they queue in that order; it returns their answers' channels.
func queueBehindHeld(t *testing.T, s *Service, g *gatedStore, class, id string, first queuedUpdateCase, rest []queuedUpdateCase) []chan queuedOutcome {
	t.Helper()
	send := func(c queuedUpdateCase) chan queuedOutcome {
		out := make(chan queuedOutcome, 1)
		go func() {
			res, err := s.Update(c.auth, class, id, c.body)
			out <- queuedOutcome{res, err}
		}()
		return out
	}
	outs := []chan queuedOutcome{send(first)}
	<-g.held
	for i, c := range rest {
		outs = append(outs, send(c))
		// Until it is queued: it cannot run before the gate opens. The
		// bound only ends a test whose updates never queue.
		for deadline := time.Now().Add(20 * time.Second); s.queued(class, id) < i+1; waitBriefly() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: never queued behind the held commit", c.name)
			}
		}
	}
	return outs
}

type queuedUpdateCase struct {
	name string
	auth Auth
	body map[string]any
	code int     // the error code it must get; 0: committed
	n    float64 // the n its reply echoes (committed Increments)
}

// TestQueuedUpdatesCommitInRuns: updates of one object that queue behind
// a commit of it are decided in one run, each on the version the one
// before left, each with its own caller's rights and its own answer, and
// committed together; an update adding a field commits alone; every
// version is told as its own change, each change's original the version
// before it.
func TestQueuedUpdatesCommitInRuns(t *testing.T) {
	changes := make(chan Change, 64)
	s, g := openGated(t, changes)
	master := Auth{Master: true}
	res, err := s.Create(master, "Counter", map[string]any{"n": 0.0, "ACL": map[string]any{"u1": map[string]any{"read": true, "write": true}}})
	if err != nil {
		t.Fatal(err)
	}
	id := res.ObjectID
	<-changes
	g.arm()
	first := queuedUpdateCase{name: "first, held at the gate", auth: master, body: increment(), n: 1}
	rest := []queuedUpdateCase{
		{name: "master Increment", auth: master, body: increment(), n: 2},
		{name: "a user the ACL refuses", auth: Auth{UserID: "u2"}, body: increment(), code: schema.CodeObjectNotFound},
		{name: "a value of the wrong type", auth: master, body: map[string]any{"n": "ten"}, code: schema.CodeIncorrectType},
		{name: "the user the ACL allows", auth: Auth{UserID: "u1"}, body: increment(), n: 3},
		{name: "a new field: alone", auth: master, body: map[string]any{"extra": "e"}},
		{name: "after the new field", auth: master, body: increment(), n: 4},
	}
	outs := queueBehindHeld(t, s, g, "Counter", id, first, rest)
	close(g.gate)
	for i, c := range append([]queuedUpdateCase{first}, rest...) {
		out := <-outs[i]
		switch {
		case c.code != 0:
			if pe, ok := schema.AsError(out.err); !ok || pe.Code != c.code {
				t.Errorf("%s: %v, want code %d", c.name, out.err, c.code)
			}
		case out.err != nil:
			t.Errorf("%s: %v", c.name, out.err)
		case c.n != 0 && out.res.Echo["n"] != c.n:
			t.Errorf("%s: echoed n %v, want %v", c.name, out.res.Echo["n"], c.n)
		}
	}
	// The first alone; the two Increments decided in the run together;
	// the new field alone; the Increment after it.
	for i, want := range []int{1, 2, 1, 1} {
		if got := g.objectRecords(i, "Counter", id); got != want {
			t.Errorf("commit %d holds %d versions of the object, want %d", i, got, want)
		}
	}
	obj, _ := s.Data().Collection("Counter", false).Get(id)
	if obj["n"] != 4.0 || obj["extra"] != "e" {
		t.Errorf("stored %v, want n 4 and extra e", obj)
	}
	var prev schema.Object
	for i := range 5 {
		c := <-changes
		if i > 0 && (c.Original["n"] != prev["n"] || c.Original["extra"] != prev["extra"]) {
			t.Errorf("change %d: original %v, want the version before, %v", i, c.Original, prev)
		}
		prev = c.Object
	}
	if prev["n"] != 4.0 {
		t.Errorf("the last change holds %v", prev)
	}
}

// TestQueuedRunFailsWhole: a run whose commit fails answers every update
// of it with the error and keeps none of them; the object's next update
// is decided on the version before the run.
func TestQueuedRunFailsWhole(t *testing.T) {
	changes := make(chan Change, 64)
	s, g := openGated(t, changes)
	master := Auth{Master: true}
	res, err := s.Create(master, "Counter", map[string]any{"n": 0.0})
	if err != nil {
		t.Fatal(err)
	}
	id := res.ObjectID
	g.arm(1) // the run's commit fails
	inc := queuedUpdateCase{auth: master, body: increment()}
	outs := queueBehindHeld(t, s, g, "Counter", id, inc, []queuedUpdateCase{inc, inc, inc})
	close(g.gate)
	if out := <-outs[0]; out.err != nil || out.res.Echo["n"] != 1.0 {
		t.Fatalf("the first: %v %v", out.res.Echo, out.err)
	}
	for i, out := range outs[1:] {
		if o := <-out; !errors.Is(o.err, errGatedCommit) {
			t.Errorf("update %d of the failed run: %v %v, want the commit's error", i, o.res.Echo, o.err)
		}
	}
	if g.objectRecords(1, "Counter", id) != 3 {
		t.Errorf("the run's commit held %d versions, want 3", g.objectRecords(1, "Counter", id))
	}
	next, err := s.Update(master, "Counter", id, increment())
	if err != nil || next.Echo["n"] != 2.0 {
		t.Fatalf("after the failed run: %v %v, want n 2", next.Echo, err)
	}
}

// waitBriefly yields while a test polls for a state another goroutine
// reaches (never an assertion on time).
func waitBriefly() { time.Sleep(100 * time.Microsecond) }
