package postgres_test

import (
	"errors"
	"testing"
	"time"

	"github.com/quarrydata/quarry/store"
	"github.com/quarrydata/quarry/store/postgres"
	"github.com/quarrydata/quarry/store/postgres/pgtest"
)

// TestCommitInDoubt: a commit whose connection is cut around its COMMIT
// is answered only once the adapter knows whether it committed, and then
// truthfully: committed (the reply was cut) succeeds, not committed (the
// COMMIT was cut) fails as unavailable; the adapter is unavailable while
// the database cannot be reached and available again after.
func TestCommitInDoubt(t *testing.T) {
	for _, tc := range []struct {
		name      string
		arm       func(*pgtest.Proxy) <-chan struct{}
		committed bool
	}{
		{"reply cut", (*pgtest.Proxy).CutAtCommit, true},
		{"commit cut", (*pgtest.Proxy).CutBeforeCommit, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			uri := pgtest.NewDatabase(t)
			proxy := pgtest.NewProxy(t, uri)
			a := open(t, proxy.URI(uri))
			loadAll(t, a)
			// Another adapter commits meanwhile: the lookup must find this
			// adapter's row among others.
			other := open(t, uri)
			loadAll(t, other)
			commit(t, other, sch("C", `{"className":"C","fields":{"n":{"type":"Number"}}}`))
			cut := tc.arm(proxy)
			done := make(chan error, 1)
			go func() { done <- a.Commit([]store.Record{obj("C", "doubt", `{"n":1}`)}) }()
			<-cut
			commit(t, other, obj("C", "other", `{"n":2}`))
			waitAvailable(t, a, false)
			select {
			case err := <-done:
				t.Fatalf("the commit was answered (%v) before the database could tell whether it committed", err)
			default:
			}
			proxy.Restore()
			err := <-done
			if tc.committed && err != nil {
				t.Fatalf("commit that committed: %v", err)
			}
			if !tc.committed && !errors.Is(err, store.ErrUnavailable) {
				t.Fatalf("commit that did not commit: %v, want an error wrapping store.ErrUnavailable", err)
			}
			waitAvailable(t, a, true)
			found := false
			for _, r := range loadAll(t, open(t, uri)) {
				found = found || r.Key == "doubt"
			}
			if found != tc.committed {
				t.Errorf("stored: %v, want %v", found, tc.committed)
			}
			commit(t, a, obj("C", "after", `{"n":3}`))
		})
	}
}

// waitAvailable waits until a's Unavailable says available (or not).
func waitAvailable(t *testing.T, a *postgres.Adapter, available bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for (a.Unavailable() == nil) != available {
		if time.Now().After(deadline) {
			t.Fatalf("Unavailable() = %v after 30 s, want available %v", a.Unavailable(), available)
		}
		// The probes' backoff is at most 2 s; nothing signals its result.
		time.Sleep(10 * time.Millisecond)
	}
	if err := a.Unavailable(); err != nil && !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("Unavailable() = %v, does not wrap store.ErrUnavailable", err)
	}
}
