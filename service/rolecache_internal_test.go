package service

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/store"
)

// The role cache keeps at most roleCacheUsers users however many are
// asked about, and its answers follow role writes: a user added to a
// role, to a parent role, or removed, gets the new names on the next
// lookup, whether the user was cached or evicted meanwhile.
func TestRoleCacheBoundedAndCurrent(t *testing.T) {
	a, err := store.Open(filepath.Join(t.TempDir(), "q.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	s, err := Open(a, Options{})
	if err != nil {
		t.Fatal(err)
	}
	master := Auth{Master: true}
	users := func(op string, ids ...string) map[string]any {
		ptrs := make([]any, len(ids))
		for i, id := range ids {
			ptrs[i] = schema.Pointer(classUser, id)
		}
		return map[string]any{"__op": op, "objects": ptrs}
	}
	acl := map[string]any{"*": map[string]any{"read": true}}
	staff, err := s.Create(master, classRole, map[string]any{"name": "staff", "ACL": acl, "users": users("AddRelation", "u0", "u1")})
	if err != nil {
		t.Fatal(err)
	}
	cached := func() int {
		s.roles.mu.Lock()
		defer s.roles.mu.Unlock()
		if s.roles.users == nil {
			return 0
		}
		return s.roles.users.Len()
	}
	check := func(step, user string, want ...string) {
		t.Helper()
		got := slices.Clone(s.rolesOf(user))
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s: roles of %s = %q, want %q", step, user, got, want)
		}
	}

	check("start", "u0", "role:staff")
	check("start", "u1", "role:staff")
	check("start", "u2")
	// Many users seen once: the cache stays at its bound.
	for i := range roleCacheUsers + 500 {
		s.rolesOf(fmt.Sprintf("passer-%d", i))
		if n := cached(); n > roleCacheUsers {
			t.Fatalf("after %d users the cache holds %d, bound %d", i+1, n, roleCacheUsers)
		}
	}
	if n := cached(); n != roleCacheUsers {
		t.Fatalf("cache holds %d users, want %d", n, roleCacheUsers)
	}
	// u0 and u1 were evicted; their answers are computed again, unchanged.
	check("evicted", "u0", "role:staff")
	check("evicted", "u1", "role:staff")

	steps := []struct {
		name  string
		write func() error
		want  map[string][]string
	}{
		{"add u2", func() error {
			_, err := s.Update(master, classRole, staff.ObjectID, map[string]any{"users": users("AddRelation", "u2")})
			return err
		}, map[string][]string{"u0": {"role:staff"}, "u1": {"role:staff"}, "u2": {"role:staff"}}},
		{"parent role", func() error {
			_, err := s.Create(master, classRole, map[string]any{"name": "admin", "ACL": acl,
				"roles": map[string]any{"__op": "AddRelation", "objects": []any{schema.Pointer(classRole, staff.ObjectID)}}})
			return err
		}, map[string][]string{"u0": {"role:admin", "role:staff"}, "u2": {"role:admin", "role:staff"}, "u3": nil}},
		{"remove u0", func() error {
			_, err := s.Update(master, classRole, staff.ObjectID, map[string]any{"users": users("RemoveRelation", "u0")})
			return err
		}, map[string][]string{"u0": nil, "u1": {"role:admin", "role:staff"}, "u2": {"role:admin", "role:staff"}}},
	}
	for _, st := range steps {
		if err := st.write(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		for user, want := range st.want {
			check(st.name, user, want...)
			check(st.name+" (cached)", user, want...)
		}
	}
}
