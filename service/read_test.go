package service

import (
	"reflect"
	"testing"

	"github.com/quarrydata/quarry/schema"
)

// TestViewAgreesWithPresent checks that the shared reply form of a query
// result is exactly present's copy, for objects and callers where present
// strips or adds something and where it changes nothing.
func TestViewAgreesWithPresent(t *testing.T) {
	s := openMemory(t)
	master := Auth{Master: true}
	if _, err := s.Create(master, "Plain", map[string]any{"n": 1.0, "tags": []any{"a"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(master, "WithRel", map[string]any{"n": 1.0,
		"rel": map[string]any{"__op": "AddRelation", "objects": []any{schema.Pointer("Plain", "x")}}}); err != nil {
		t.Fatal(err)
	}
	u, err := s.Create(master, classUser, map[string]any{"username": "ann", "password": "pw", "email": "ann@example.com",
		"authData": map[string]any{"anonymous": map[string]any{"id": "a1"}}})
	if err != nil {
		t.Fatal(err)
	}
	callers := map[string]Auth{"master": master, "public": {}, "self": {UserID: u.ObjectID}}
	for _, class := range []string{"Plain", "WithRel", classUser} {
		for name, auth := range callers {
			for _, opts := range []ReadOptions{{}, {Keys: []string{"n"}}, {ExcludeKeys: []string{"n"}}} {
				g, err := s.guardRead(auth, class, opFind)
				if err != nil {
					t.Fatal(err)
				}
				s.data.Collection(class, false).Scan(func(obj schema.Object) bool {
					want := s.present(class, obj, opts, g)
					got := s.view(class, obj, opts, g, s.canShare(class, opts))
					if !reflect.DeepEqual(got, want) {
						t.Errorf("%s as %s %+v:\n view    %v\n present %v", class, name, opts, got, want)
					}
					return true
				})
			}
		}
	}
}

// TestSharedResultsSurviveInclude runs a query whose results share the
// stored objects, then one with include (which writes into its results),
// and checks that the stored objects did not change.
func TestSharedResultsSurviveInclude(t *testing.T) {
	s := openMemory(t)
	master := Auth{Master: true}
	target, err := s.Create(master, "Target", map[string]any{"name": "t"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(master, "Holder", map[string]any{"ref": schema.Pointer("Target", target.ObjectID)}); err != nil {
		t.Fatal(err)
	}
	plain, err := s.Find(Auth{}, "Holder", FindParams{Limit: 10})
	if err != nil || len(plain.Results) != 1 {
		t.Fatalf("find: %v %v", plain, err)
	}
	before := plain.Results[0]["ref"]
	inc, err := s.Find(Auth{}, "Holder", FindParams{Limit: 10, Read: ReadOptions{Include: []string{"ref"}}})
	if err != nil || len(inc.Results) != 1 {
		t.Fatalf("include: %v %v", inc, err)
	}
	if got := inc.Results[0]["ref"].(map[string]any)["name"]; got != "t" {
		t.Fatalf("include did not expand: %v", inc.Results[0])
	}
	again, err := s.Find(Auth{}, "Holder", FindParams{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again.Results[0]["ref"], before) || !reflect.DeepEqual(before, schema.Pointer("Target", target.ObjectID)) {
		t.Fatalf("stored pointer changed: %v", again.Results[0]["ref"])
	}
}

// TestGetReturnsACopy: a get's result is the caller's to change (the
// transport adds a user's own token to it), so it never shares the stored
// object, while a find's page may.
func TestGetReturnsACopy(t *testing.T) {
	s := openMemory(t)
	master := Auth{Master: true}
	obj, err := s.Create(master, "Plain", map[string]any{"n": 1.0})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(master, "Plain", obj.ObjectID, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got["sessionToken"] = "r:mine"
	again, err := s.Get(master, "Plain", obj.ObjectID, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, leaked := again["sessionToken"]; leaked {
		t.Fatal("a change to a get's result reached the stored object")
	}
	page, err := s.Find(master, "Plain", FindParams{Limit: 1})
	if err != nil || len(page.Results) != 1 {
		t.Fatalf("find: %v %v", page, err)
	}
	stored, _ := s.data.Collection("Plain", false).Get(obj.ObjectID)
	if reflect.ValueOf(page.Results[0]).Pointer() != reflect.ValueOf(stored).Pointer() {
		t.Fatal("a find's plain result is expected to share the stored object")
	}
}

// TestRelationFieldsFollowSchema reads a class before and after it gains a
// Relation field: the per-class cache of shown relation fields must follow
// the schema.
func TestRelationFieldsFollowSchema(t *testing.T) {
	s := openMemory(t)
	master := Auth{Master: true}
	obj, err := s.Create(master, "Grows", map[string]any{"n": 1.0})
	if err != nil {
		t.Fatal(err)
	}
	before, err := s.Get(master, "Grows", obj.ObjectID, ReadOptions{})
	if err != nil || before["fans"] != nil {
		t.Fatalf("before: %v %v", before, err)
	}
	if _, err := s.Update(master, "Grows", obj.ObjectID, map[string]any{
		"fans": map[string]any{"__op": "AddRelation", "objects": []any{schema.Pointer("_User", "u1")}}}); err != nil {
		t.Fatal(err)
	}
	after, err := s.Get(master, "Grows", obj.ObjectID, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]any{"__type": "Relation", "className": "_User"}; !reflect.DeepEqual(after["fans"], want) {
		t.Fatalf("after: fans = %v, want %v", after["fans"], want)
	}
}

// TestKeysKeepRelationMarkers: as Parse Server does, a projection never
// hides a Relation field's marker, whether the object is read with keys or
// projected again after an include.
func TestKeysKeepRelationMarkers(t *testing.T) {
	s := openMemory(t)
	master := Auth{Master: true}
	target, err := s.Create(master, "Target", map[string]any{"name": "t"})
	if err != nil {
		t.Fatal(err)
	}
	obj, err := s.Create(master, "Holder", map[string]any{"n": 1.0, "ref": schema.Pointer("Target", target.ObjectID),
		"fans": map[string]any{"__op": "AddRelation", "objects": []any{schema.Pointer("_User", "u1")}}})
	if err != nil {
		t.Fatal(err)
	}
	marker := map[string]any{"__type": "Relation", "className": "_User"}
	for _, opts := range []ReadOptions{
		{Keys: []string{"n"}},
		{Keys: []string{"ref.name"}, Include: []string{"ref"}},
	} {
		got, err := s.Get(master, "Holder", obj.ObjectID, opts)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got["fans"], marker) {
			t.Errorf("%+v: fans = %v, want the Relation marker", opts, got["fans"])
		}
		if len(opts.Include) == 0 && got["ref"] != nil {
			t.Errorf("%+v: ref = %v, projected away", opts, got["ref"])
		}
	}
}

// TestCustomClassesHoldNoInternalKeys pins what mayHoldInternalKeys relies
// on: no caller, the master key included, can write a key with a leading
// underscore into a custom class, at creation or by update.
func TestCustomClassesHoldNoInternalKeys(t *testing.T) {
	s := openMemory(t)
	master := Auth{Master: true}
	if _, err := s.Create(master, "Custom", map[string]any{"_secret": "x"}); !isCode(err, schema.CodeInvalidKeyName) {
		t.Fatalf("create with _secret: %v", err)
	}
	obj, err := s.Create(master, "Custom", map[string]any{"n": 1.0})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Update(master, "Custom", obj.ObjectID, map[string]any{"_secret": "x"}); !isCode(err, schema.CodeInvalidKeyName) {
		t.Fatalf("update with _secret: %v", err)
	}
	if mayHoldInternalKeys("Custom") || !mayHoldInternalKeys(classUser) {
		t.Fatal("mayHoldInternalKeys misclassifies classes")
	}
}

func isCode(err error, code int) bool {
	pe, ok := schema.AsError(err)
	return ok && pe.Code == code
}
