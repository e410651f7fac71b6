package cache_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/quarrydata/quarry/cache"
	"github.com/quarrydata/quarry/live/redistest"
)

// open connects two processes' caches to the local Redis under a prefix
// of this test's own.
func open(t *testing.T, ttl time.Duration) (*cache.Cache, *cache.Cache) {
	t.Helper()
	redistest.Require(t, "the cacheAdapter tests")
	prefix := "quarry-test-cache-" + strconv.FormatUint(rand.Uint64(), 36) + ":"
	t.Cleanup(func() { redistest.DropKeys(t, prefix) })
	var out [2]*cache.Cache
	for i := range out {
		c, err := cache.Open(cache.Options{URL: redistest.URL, Prefix: prefix, TTL: ttl})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		out[i] = c
	}
	return out[0], out[1]
}

func TestSessions(t *testing.T) {
	ctx := context.Background()
	a, b := open(t, time.Minute)
	future := time.Now().Add(time.Hour).UTC().Truncate(time.Millisecond)
	cases := []struct {
		name    string
		token   string
		put     *cache.Session
		revoke  bool // SessionsWritten before the lookup
		wantHit bool
	}{
		{"a cached session is shared", "r:1", &cache.Session{UserID: "u1", Expires: future}, false, true},
		{"one that never expires", "r:2", &cache.Session{UserID: "u2"}, false, true},
		{"an expired one is a miss", "r:3", &cache.Session{UserID: "u3", Expires: time.Now().Add(-time.Second)}, false, false},
		{"nothing cached", "r:4", nil, false, false},
		{"a written session is a miss", "r:5", &cache.Session{UserID: "u5"}, true, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.put != nil {
				if err := a.PutSession(ctx, c.token, *c.put); err != nil {
					t.Fatal(err)
				}
			}
			if c.revoke {
				if err := a.SessionsWritten(ctx, "u5", c.token); err != nil {
					t.Fatal(err)
				}
			}
			got, hit, err := b.Session(ctx, c.token)
			if err != nil || hit != c.wantHit || (hit && (got.UserID != c.put.UserID || !got.Expires.Equal(c.put.Expires))) {
				t.Errorf("Session = %+v, %v, %v; want hit %v of %+v", got, hit, err, c.wantHit, c.put)
			}
		})
	}
}

// A lookup that began before a session was written must not cache its
// older answer after the write: the revocation mark stays.
func TestSessionWrittenDuringALookup(t *testing.T) {
	ctx := context.Background()
	a, b := open(t, time.Minute)
	if _, hit, _ := b.Session(ctx, "r:t"); hit {
		t.Fatal("hit before anything was cached")
	}
	// b now asks the REST server; meanwhile a logs the session out.
	if err := a.SessionsWritten(ctx, "u", "r:t"); err != nil {
		t.Fatal(err)
	}
	if err := b.PutSession(ctx, "r:t", cache.Session{UserID: "u"}); err != nil {
		t.Fatal(err)
	}
	if s, hit, err := a.Session(ctx, "r:t"); hit || err != nil {
		t.Errorf("the logged-out session is cached: %+v %v", s, err)
	}
}

func TestRoles(t *testing.T) {
	ctx := context.Background()
	a, b := open(t, time.Minute)
	_, gen, hit, err := b.Roles(ctx, "u1")
	if hit || err != nil {
		t.Fatalf("hit %v err %v before anything was cached", hit, err)
	}
	if err := b.PutRoles(ctx, "u1", gen, []string{"role:a", "role:b"}); err != nil {
		t.Fatal(err)
	}
	if roles, _, hit, err := a.Roles(ctx, "u1"); !hit || err != nil || !slices.Equal(roles, []string{"role:a", "role:b"}) {
		t.Fatalf("Roles = %v %v %v", roles, hit, err)
	}
	// An answer fetched before a role change, stored after it, is stale.
	_, before, _, _ := b.Roles(ctx, "u2")
	if err := a.RolesChanged(ctx); err != nil {
		t.Fatal(err)
	}
	if _, _, hit, _ := a.Roles(ctx, "u1"); hit {
		t.Error("u1's roles still cached after a role change")
	}
	if err := b.PutRoles(ctx, "u2", before, []string{"role:old"}); err != nil {
		t.Fatal(err)
	}
	if roles, _, hit, _ := a.Roles(ctx, "u2"); hit {
		t.Errorf("an answer from before the role change is used: %v", roles)
	}
	// No roles is an answer too.
	_, now, _, _ := b.Roles(ctx, "u3")
	if err := b.PutRoles(ctx, "u3", now, nil); err != nil {
		t.Fatal(err)
	}
	if roles, _, hit, _ := a.Roles(ctx, "u3"); !hit || len(roles) != 0 {
		t.Errorf("Roles(u3) = %v, %v; want a hit with none", roles, hit)
	}
}

func TestSchema(t *testing.T) {
	ctx := context.Background()
	a, b := open(t, time.Minute)
	_, gen, hit, err := b.Schema(ctx, "Message")
	if hit || err != nil {
		t.Fatalf("hit %v err %v before anything was cached", hit, err)
	}
	want := map[string]string{"text": "String", "n": "Number"}
	fetched := time.Now().Add(-time.Second).UTC()
	if err := a.PutSchema(ctx, "Message", gen, want, fetched); err != nil {
		t.Fatal(err)
	}
	if got, _, hit, err := b.Schema(ctx, "Message"); !hit || err != nil || len(got.Fields) != 2 || got.Fields["n"] != "Number" || !got.Fetched.Equal(fetched) {
		t.Errorf("Schema = %v %v %v", got, hit, err)
	}
	// An answer already older than the schema TTL is not stored.
	_, oldGen, _, _ := b.Schema(ctx, "Old")
	if err := a.PutSchema(ctx, "Old", oldGen, want, time.Now().Add(-2*cache.DefaultSchemaTTL)); err != nil {
		t.Fatal(err)
	}
	if got, _, hit, _ := b.Schema(ctx, "Old"); hit {
		t.Errorf("a stale schema was stored: %v", got)
	}
	// A class with no fields is an answer too.
	_, emptyGen, _, _ := b.Schema(ctx, "Empty")
	if err := a.PutSchema(ctx, "Empty", emptyGen, nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	if got, _, hit, _ := b.Schema(ctx, "Empty"); !hit || len(got.Fields) != 0 {
		t.Errorf("Schema(Empty) = %v, %v; want a hit with no fields", got, hit)
	}
}

// A schema change makes the class's cached entry a miss at once, and an
// answer fetched before the change, stored after it, is never used; other
// classes keep theirs.
func TestSchemaChanged(t *testing.T) {
	ctx := context.Background()
	a, b := open(t, time.Minute)
	fields := map[string]string{"n": "Number"}
	for _, class := range []string{"Message", "Other"} {
		_, gen, _, _ := b.Schema(ctx, class)
		if err := b.PutSchema(ctx, class, gen, fields, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	_, before, _, _ := b.Schema(ctx, "Lookup") // b asks a REST server meanwhile
	if err := a.SchemaChanged(ctx, "Message", "Lookup"); err != nil {
		t.Fatal(err)
	}
	if err := b.PutSchema(ctx, "Lookup", before, fields, time.Now()); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		class   string
		wantHit bool
	}{
		{"Message", false}, // changed: its entry is stale
		{"Lookup", false},  // fetched across the change
		{"Other", true},    // untouched
	}
	for _, c := range cases {
		if got, _, hit, err := a.Schema(ctx, c.class); hit != c.wantHit || err != nil {
			t.Errorf("Schema(%s) = %v, %v, %v; want hit %v", c.class, got, hit, err, c.wantHit)
		}
	}
	// After the change, a new lookup caches again.
	_, gen, _, _ := b.Schema(ctx, "Message")
	if err := b.PutSchema(ctx, "Message", gen, map[string]string{"n": "Date"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if got, _, hit, _ := a.Schema(ctx, "Message"); !hit || got.Fields["n"] != "Date" {
		t.Errorf("after the change, Schema(Message) = %v, %v; want the new answer", got, hit)
	}
}

// Invalidations reach every subscribed process, in order.
func TestInvalidationsReachEveryProcess(t *testing.T) {
	ctx := context.Background()
	a, b := open(t, time.Minute)
	got := make(chan cache.Invalidation, 8)
	for _, c := range []*cache.Cache{a, b} {
		if err := c.Subscribe(ctx, func(inv cache.Invalidation) { got <- inv }); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.SessionsWritten(ctx, "u1", "r:1"); err != nil {
		t.Fatal(err)
	}
	if err := b.RolesChanged(ctx); err != nil {
		t.Fatal(err)
	}
	if err := a.SchemaChanged(ctx, "Message"); err != nil {
		t.Fatal(err)
	}
	var users, roles, schemas int
	for range 6 {
		select {
		case inv := <-got:
			switch {
			case inv.UserID == "u1" && !inv.AllRoles && inv.Classes == nil:
				users++
			case inv.AllRoles && inv.UserID == "" && inv.Classes == nil:
				roles++
			case slices.Equal(inv.Classes, []string{"Message"}) && !inv.AllRoles && inv.UserID == "":
				schemas++
			default:
				t.Errorf("unexpected %+v", inv)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("after 5 s: %d user, %d role and %d schema invalidations of 2 each", users, roles, schemas)
		}
	}
	if users != 2 || roles != 2 || schemas != 2 {
		t.Errorf("%d user, %d role and %d schema invalidations, want 2 each", users, roles, schemas)
	}
}

// TestInvalidateBatch: a batch of session and role writes is invalidated
// in one round trip: every token is a miss afterwards, each user's
// processes are told once, and a role write makes one message for all.
func TestInvalidateBatch(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name      string
		w         cache.Written
		wantMsgs  []string // in order, before the sentinel
		rolesGone bool
	}{
		{"two sessions of one user", cache.Written{Sessions: map[string][]string{"u1": {"r:1", "r:2"}}},
			[]string{"user u1"}, false},
		{"sessions and a role", cache.Written{Sessions: map[string][]string{"u1": {"r:1"}, "u2": {"r:2"}}, Roles: true},
			[]string{"all roles"}, true},
		{"nothing", cache.Written{}, nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, b := open(t, time.Minute)
			got := make(chan cache.Invalidation, 8)
			if err := b.Subscribe(ctx, func(inv cache.Invalidation) { got <- inv }); err != nil {
				t.Fatal(err)
			}
			for _, tok := range []string{"r:1", "r:2"} {
				if err := a.PutSession(ctx, tok, cache.Session{UserID: "u1"}); err != nil {
					t.Fatal(err)
				}
			}
			_, gen, _, _ := a.Roles(ctx, "u1")
			if err := a.PutRoles(ctx, "u1", gen, []string{"role:x"}); err != nil {
				t.Fatal(err)
			}
			if err := a.Invalidate(ctx, c.w); err != nil {
				t.Fatal(err)
			}
			for _, tokens := range c.w.Sessions {
				for _, tok := range tokens {
					if _, hit, _ := b.Session(ctx, tok); hit {
						t.Errorf("%s still cached", tok)
					}
				}
			}
			if _, _, hit, _ := b.Roles(ctx, "u1"); hit == c.rolesGone {
				t.Errorf("roles cached: %v, want %v", hit, !c.rolesGone)
			}
			// A sentinel published after the batch: what comes before it
			// is all the batch said.
			if err := a.SchemaChanged(ctx, "Sentinel"); err != nil {
				t.Fatal(err)
			}
			var msgs []string
			for inv := range got {
				if slices.Equal(inv.Classes, []string{"Sentinel"}) {
					break
				}
				switch {
				case inv.AllRoles:
					msgs = append(msgs, "all roles")
				default:
					msgs = append(msgs, "user "+inv.UserID)
				}
			}
			if !slices.Equal(msgs, c.wantMsgs) {
				t.Errorf("messages %q, want %q", msgs, c.wantMsgs)
			}
		})
	}
}
