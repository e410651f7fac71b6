package idempotency_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/quarrydata/quarry/idempotency"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
	"github.com/quarrydata/quarry/store"
)

// openService opens a service on a new on-disk buntdb store, closed when
// the test ends, with its clock at *now.
func openService(t *testing.T, now *time.Time) *service.Service {
	t.Helper()
	a, err := store.Open(filepath.Join(t.TempDir(), "q.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	s, err := service.Open(a, service.Options{Now: func() time.Time { return *now }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.CloseChanges(0) }) // before the store closes
	return s
}

// TestRequestIDsExpire: a claimed id is refused with 159 until its TTL
// passes (on the injected clock), a released id may be claimed again, and
// expired entries are swept by later claims so the class stays near its
// live size.
func TestRequestIDsExpire(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := openService(t, &now)
	r := idempotency.New(s)
	const ttl = 5 * time.Minute
	type step struct {
		name    string
		advance time.Duration // the clock moves first
		claim   []string      // claimed in order
		release string
		dup     bool // the last claim is refused with 159
		kept    int  // entries afterwards; <0: not checked
	}
	var old []string
	for i := range 40 {
		old = append(old, fmt.Sprint("old-", i))
	}
	steps := []step{
		{name: "first claim", claim: []string{"a"}, kept: 1},
		{name: "a repeat is refused", claim: []string{"a"}, dup: true, kept: 1},
		{name: "other ids", claim: old, kept: 41},
		// 41 expired: this claim deletes the old "a" and sweeps 16 more.
		{name: "a claim after the TTL", advance: ttl + time.Second, claim: []string{"a"}, kept: 41 - 17 + 1},
		// Each claim sweeps up to 16 expired entries.
		{name: "later claims sweep", claim: []string{"new-0", "new-1", "new-2"}, kept: 4},
		{name: "a released id", release: "new-0", kept: 3},
		{name: "may be claimed again", claim: []string{"new-0"}, kept: 4},
		{name: "releasing an unknown id", release: "never", kept: 4},
	}
	for _, st := range steps {
		now = now.Add(st.advance)
		var err error
		for _, id := range st.claim {
			if err = r.ClaimRequest(id, ttl); err != nil && !st.dup {
				t.Fatalf("%s: claim %s: %v", st.name, id, err)
			}
		}
		if st.dup {
			if pe, ok := schema.AsError(err); !ok || pe.Code != idempotency.CodeDuplicateRequest || pe.Message != "Duplicate request" {
				t.Fatalf("%s: %v, want 159 Duplicate request", st.name, err)
			}
		}
		if st.release != "" {
			if err := r.ReleaseRequest(st.release); err != nil {
				t.Fatalf("%s: %v", st.name, err)
			}
		}
		if n := s.Data().Collection(idempotency.ClassIdempotency, false).Len(); n != st.kept {
			t.Fatalf("%s: %d entries kept, want %d", st.name, n, st.kept)
		}
	}
}
