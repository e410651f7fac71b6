package service

import "testing"

// TestPolicyCachedPerSchemaVersion: a class's access policy is compiled
// once per schema version, recompiled when the CLP changes, and never
// cached for a class that does not exist.
func TestPolicyCachedPerSchemaVersion(t *testing.T) {
	s := openMemory(t)
	master := Auth{Master: true}
	if _, err := s.Create(master, "Doc", map[string]any{"n": 1.0}); err != nil {
		t.Fatal(err)
	}
	p1 := s.policy("Doc")
	if p2 := s.policy("Doc"); p2 != p1 {
		t.Error("the policy was compiled again for the same schema")
	}
	if _, err := s.ReadFilter(Auth{UserID: "u"}, "Doc", ReadFind); err != nil {
		t.Fatalf("open class: %v", err)
	}
	clp := map[string]any{"find": map[string]any{}, "get": map[string]any{"*": true}}
	if _, err := s.UpdateSchema(master, "Doc", map[string]any{"classLevelPermissions": clp}); err != nil {
		t.Fatal(err)
	}
	if s.policy("Doc") == p1 {
		t.Error("a CLP change kept the old policy")
	}
	if _, err := s.ReadFilter(Auth{UserID: "u"}, "Doc", ReadFind); err == nil {
		t.Error("find is closed by the new CLP")
	}
	s.policy("NoSuchClass")
	if _, ok := s.policies.Load("NoSuchClass"); ok {
		t.Error("a missing class's policy was cached")
	}
}
