package service_test

import (
	"fmt"
	"testing"

	"github.com/quarrydata/quarry/service"
)

// TestCountGuardedByFlag: a count of an indexed equality by a caller
// whose view depends on ACLs (the class holds objects without public
// read) counts what that caller would find, however the objects' ACLs
// mix: public ones counted without being read, the others tested. The
// count must equal the size of the same find, for every caller, every
// value, and after ACL changes and deletes.
func TestCountGuardedByFlag(t *testing.T) {
	s := openTestService(t, service.Options{})
	master := service.Auth{Master: true}
	if err := s.EnsureIndex("CgItem", "cat"); err != nil {
		t.Fatal(err)
	}
	acls := []map[string]any{
		nil, // no ACL: public
		{"*": map[string]any{"read": true}},
		{"u1": map[string]any{"read": true}},
		{"u2": map[string]any{"read": true, "write": true}},
		{"role:Staff": map[string]any{"read": true}},
		{"*": map[string]any{"write": true}}, // writable by all, readable by none
		{},
	}
	var ids []string
	for i := 0; i < 70; i++ {
		body := map[string]any{"cat": fmt.Sprintf("c%d", i%3), "n": float64(i)}
		if acl := acls[i%len(acls)]; acl != nil {
			body["ACL"] = acl
		}
		r, err := s.Create(master, "CgItem", body)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ObjectID)
	}
	callers := map[string]service.Auth{
		"master": master, "public": {}, "u1": {UserID: "u1"}, "u2": {UserID: "u2"},
		"staff": {UserID: "u3", Roles: []string{"role:Staff"}},
	}
	check := func(stage string) {
		t.Helper()
		for name, auth := range callers {
			for _, w := range []map[string]any{
				{"cat": "c0"}, {"cat": "c2"}, {"cat": "none"},
				{"cat": map[string]any{"$in": []any{"c0", "c1"}}},
				{"objectId": ids[2]}, {"objectId": map[string]any{"$in": []any{ids[2], ids[3], ids[7]}}},
				{},
			} {
				cnt, err := s.Find(auth, "CgItem", service.FindParams{Where: w, Count: true, Limit: 0, ReplyOnly: true})
				if err != nil {
					t.Fatalf("%s %s count %v: %v", stage, name, w, err)
				}
				all, err := s.Find(auth, "CgItem", service.FindParams{Where: w, Limit: 1000})
				if err != nil {
					t.Fatal(err)
				}
				if cnt.Count != len(all.Results) {
					t.Errorf("%s: %s counts %d where %v, finds %d", stage, name, cnt.Count, w, len(all.Results))
				}
			}
		}
	}
	check("mixed ACLs")
	// A public object made private, a private one made public, one deleted.
	if _, err := s.Update(master, "CgItem", ids[0], map[string]any{"ACL": map[string]any{"u2": map[string]any{"read": true}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Update(master, "CgItem", ids[2], map[string]any{"ACL": map[string]any{"*": map[string]any{"read": true}}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(master, "CgItem", ids[3]); err != nil {
		t.Fatal(err)
	}
	check("after changes")
	// The public sees c0's public objects only: a value it could get
	// wrong by counting the index alone.
	pub, err := s.Find(service.Auth{}, "CgItem", service.FindParams{Where: map[string]any{"cat": "c0"}, Count: true})
	if err != nil {
		t.Fatal(err)
	}
	mst, err := s.Find(master, "CgItem", service.FindParams{Where: map[string]any{"cat": "c0"}, Count: true})
	if err != nil {
		t.Fatal(err)
	}
	if pub.Count >= mst.Count || pub.Count == 0 {
		t.Errorf("public count %d, master %d: the restricted objects were not told apart", pub.Count, mst.Count)
	}
}
