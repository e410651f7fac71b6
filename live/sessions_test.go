package live

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
)

// lookupCounter answers Authenticate after release is closed and
// counts the calls; fail makes it fail as an unreachable server would.
type lookupCounter struct {
	calls   atomic.Int32
	release chan struct{}
	fail    atomic.Bool
}

func (a *lookupCounter) Authenticate(_ context.Context, token string) (Identity, error) {
	a.calls.Add(1)
	<-a.release
	if a.fail.Load() {
		return Identity{}, errors.New("connection refused")
	}
	if token == "bad" {
		return Identity{}, schema.Errorf(schema.CodeInvalidSessionToken, "Invalid session token")
	}
	return Identity{UserID: "u-" + token}, nil
}

func (a *lookupCounter) ReadFilter(Identity, string, string, map[string]any) (service.ReadFilter, error) {
	return service.ReadFilter{}, nil
}

func (a *lookupCounter) FieldType(string, string) (schema.Type, bool) { return "", false }

// TestConcurrentLookupsOfOneTokenShareOne: many subscribers of one session
// resolving it at once make one lookup.
func TestConcurrentLookupsOfOneTokenShareOne(t *testing.T) {
	auth := &lookupCounter{release: make(chan struct{})}
	s := newSessions(auth, time.Minute, time.Now)
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if id, err := s.get(context.Background(), "tok"); err != nil || id.UserID != "u-tok" {
				t.Errorf("get: %v %v", id, err)
			}
		}()
	}
	// Let the lookups pile up behind the first, then answer.
	for auth.calls.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	close(auth.release)
	wg.Wait()
	if n := auth.calls.Load(); n != 1 {
		// Late goroutines may find the cached answer; none may ask again
		// while one lookup is under way, so more than one call means a
		// lookup was not shared.
		t.Errorf("%d lookups for one token, want 1", n)
	}
}

// TestFailedLookupsAreRememberedBriefly: a failure to find out is not
// asked again for every event, and is asked again once lookupFailureTTL
// has passed (an injected clock, not a sleep).
func TestFailedLookupsAreRememberedBriefly(t *testing.T) {
	auth := &lookupCounter{release: make(chan struct{})}
	close(auth.release)
	auth.fail.Store(true)
	var mu sync.Mutex
	now := time.Unix(1_000_000, 0)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	s := newSessions(auth, time.Minute, clock)
	for range 10 {
		if _, err := s.get(context.Background(), "tok"); err == nil {
			t.Fatal("a failed lookup answered an identity")
		}
	}
	if n := auth.calls.Load(); n != 1 {
		t.Fatalf("%d lookups while the failure is remembered, want 1", n)
	}
	auth.fail.Store(false)
	mu.Lock()
	now = now.Add(lookupFailureTTL)
	mu.Unlock()
	if id, err := s.get(context.Background(), "tok"); err != nil || id.UserID != "u-tok" {
		t.Fatalf("after the failure expired: %v %v", id, err)
	}
	if n := auth.calls.Load(); n != 2 {
		t.Errorf("%d lookups, want 2", n)
	}
	// A forget (a role change) makes the next use ask again at once.
	s.forgetUser("")
	s.get(context.Background(), "tok")
	if n := auth.calls.Load(); n != 3 {
		t.Errorf("%d lookups after a forget, want 3", n)
	}
}
