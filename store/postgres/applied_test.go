package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/quarrydata/quarry/store"
	"github.com/quarrydata/quarry/store/postgres/pgtest"
)

// TestCatchUp: after CatchUp returns on B, B's follower has handed over
// every commit A made before the call, for many concurrent callers at
// once (who share head reads), each checking what it was owed.
func TestCatchUp(t *testing.T) {
	uri := pgtest.NewDatabase(t)
	a, b := open(t, uri), open(t, uri)
	loadAll(t, b)
	var mu sync.Mutex
	seen := map[string]bool{}
	stop, err := b.Follow(b.Position(), func(fc store.ForeignCommit) {
		mu.Lock()
		defer mu.Unlock()
		for _, r := range fc.Records {
			seen[r.Key] = true
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	const callers, rounds = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, callers)
	for c := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds {
				key := fmt.Sprintf("c%d-%d", c, i)
				if err := a.Commit([]store.Record{obj("C", key, fmt.Sprintf(`{"objectId":%q}`, key))}); err != nil {
					errs <- err
					return
				}
				if err := b.CatchUp(context.Background()); err != nil {
					errs <- err
					return
				}
				mu.Lock()
				ok := seen[key]
				mu.Unlock()
				if !ok {
					errs <- fmt.Errorf("CatchUp returned before %s, committed before the call, was followed", key)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestCatchUpWithoutFollower returns at once: nothing would ever apply
// the commits it would wait for.
func TestCatchUpWithoutFollower(t *testing.T) {
	uri := pgtest.NewDatabase(t)
	a, b := open(t, uri), open(t, uri)
	commit(t, a, obj("C", "x", `{"objectId":"x"}`))
	if err := b.CatchUp(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestFollowWithOwn hands over own commits too, in their place among the
// others' and marked Own.
func TestFollowWithOwn(t *testing.T) {
	uri := pgtest.NewDatabase(t)
	a, b := open(t, uri), open(t, uri)
	loadAll(t, b)
	var mu sync.Mutex
	var got []string
	stop, err := b.FollowWithOwn(b.Position(), func(fc store.ForeignCommit) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, fmt.Sprint(fc.Records[0].Key, fc.Own))
	})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	commit(t, a, obj("C", "a1", `{"objectId":"a1"}`))
	commit(t, b, obj("C", "b1", `{"objectId":"b1"}`))
	commit(t, a, obj("C", "a2", `{"objectId":"a2"}`))
	if err := b.CatchUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := "[a1false b1true a2false]"; fmt.Sprint(got) != want {
		t.Fatalf("followed %v, want %v", got, want)
	}
}
