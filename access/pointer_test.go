package access

import (
	"fmt"
	"testing"

	"github.com/quarrydata/quarry/matcher"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/where"
)

// matchesWhere is the per-object evaluation the service used before the
// rule was compiled: parse and compile the where for each object.
func matchesWhere(w map[string]any, types FieldTypes, obj schema.Object) bool {
	tree, err := where.Parse(w, where.Options{FieldType: types})
	if err != nil {
		return false
	}
	m, err := matcher.Compile(tree, nil)
	return err == nil && m.Match(obj)
}

// TestScopeAllowsMatchesWhere: the compiled check agrees with parsing and
// matching the scope's where, for every value shape a field can hold.
func TestScopeAllowsMatchesWhere(t *testing.T) {
	me, other := "u1", "u2"
	values := map[string]any{
		"missing":        nil,
		"pointer to me":  schema.Pointer(ClassUser, me),
		"pointer other":  schema.Pointer(ClassUser, other),
		"object to me":   map[string]any{"__type": "Object", "className": ClassUser, "objectId": me, "username": "x"},
		"wrong class":    schema.Pointer("Team", me),
		"no __type":      map[string]any{"className": ClassUser, "objectId": me},
		"file":           map[string]any{"__type": "File", "name": me},
		"id string":      me,
		"array with me":  []any{"x", schema.Pointer(ClassUser, other), schema.Pointer(ClassUser, me)},
		"array no me":    []any{schema.Pointer(ClassUser, other), map[string]any{"className": ClassUser, "objectId": me}},
		"nested array":   []any{[]any{schema.Pointer(ClassUser, me)}},
		"empty array":    []any{},
		"null":           "null",
		"number":         1.0,
		"pointer no id":  map[string]any{"__type": "Pointer", "className": ClassUser},
		"object nesting": map[string]any{"owner": schema.Pointer(ClassUser, me)},
	}
	typeSets := map[string]FieldTypes{
		"unknown": nil,
		"pointer": func(string) (schema.Type, bool) { return schema.TypePointer, true },
		"array":   func(string) (schema.Type, bool) { return schema.TypeArray, true },
		"relation": func(f string) (schema.Type, bool) {
			if f == "b" {
				return schema.TypeRelation, true
			}
			return schema.TypePointer, true
		},
	}
	fieldSets := [][]string{{"a"}, {"a", "b"}, {"a.owner"}, {"bad-name"}, {"limit", "a"}}
	for tn, types := range typeSets {
		for _, fields := range fieldSets {
			rule := compilePointer(fields, types)
			for _, user := range []string{me, ""} {
				s := Scope{rule: rule, userID: user}
				for an, av := range values {
					for bn, bv := range values {
						obj := schema.Object{"objectId": "o"}
						if av != nil {
							obj["a"] = av
						}
						if bv != nil {
							obj["b"] = bv
						}
						want := matchesWhere(s.Where(), types, obj)
						if got := s.Allows(obj); got != want {
							t.Errorf("types %s fields %v user %q a=%s b=%s: Allows %v, where says %v", tn, fields, user, an, bn, got, want)
						}
					}
				}
			}
		}
	}
}

func TestScopeWhere(t *testing.T) {
	rule := compilePointer([]string{"owner", "editors"}, nil)
	for _, tc := range []struct {
		scope Scope
		want  string
	}{
		{Scope{}, "map[]"},
		{Scope{rule: rule, userID: ""}, "map[objectId:map[$in:[]]]"},
		{Scope{rule: compilePointer([]string{"owner"}, nil), userID: "u"}, "map[owner:map[__type:Pointer className:_User objectId:u]]"},
		{Scope{rule: rule, userID: "u"}, "map[$or:[map[owner:map[__type:Pointer className:_User objectId:u]] map[editors:map[__type:Pointer className:_User objectId:u]]]]"},
	} {
		if got := fmt.Sprint(tc.scope.Where()); got != tc.want {
			t.Errorf("Where() = %s, want %s", got, tc.want)
		}
	}
}

func TestPointsToUser(t *testing.T) {
	for _, tc := range []struct {
		name string
		obj  schema.Object
		want bool
	}{
		{"pointer", schema.Object{"owner": schema.Pointer(ClassUser, "u")}, true},
		{"without __type", schema.Object{"owner": map[string]any{"className": ClassUser, "objectId": "u"}}, true},
		{"other user", schema.Object{"owner": schema.Pointer(ClassUser, "v")}, false},
		{"array", schema.Object{"editors": []any{1.0, schema.Pointer(ClassUser, "u")}}, true},
		{"unlisted field", schema.Object{"other": schema.Pointer(ClassUser, "u")}, false},
		{"wrong class", schema.Object{"owner": schema.Pointer("Team", "u")}, false},
	} {
		if got := PointsToUser(tc.obj, []string{"owner", "editors"}, "u"); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	if PointsToUser(schema.Object{"owner": map[string]any{"className": ClassUser, "objectId": ""}}, []string{"owner"}, "") {
		t.Error("a public caller is no one's owner")
	}
}

// pointerPolicy is a class readable only through two pointer permissions.
func pointerPolicy() *Policy {
	return Compile("Doc", map[string]any{
		"get": map[string]any{}, "find": map[string]any{},
		"readUserFields": []any{"owner", "editors"},
	}, func(string) (schema.Type, bool) { return schema.TypePointer, true })
}

// TestPointerPermissionCheckAllocs: once the policy is compiled, testing
// an object parses nothing and allocates nothing.
func TestPointerPermissionCheckAllocs(t *testing.T) {
	r, err := pointerPolicy().Read(Caller{UserID: "u1"}, OpFind)
	if err != nil {
		t.Fatal(err)
	}
	obj := schema.Object{"objectId": "o", "owner": schema.Pointer(ClassUser, "u2"),
		"editors": []any{schema.Pointer(ClassUser, "u3"), schema.Pointer(ClassUser, "u1")}}
	if !r.Visible(obj) {
		t.Fatal("an editor cannot see the object")
	}
	if n := testing.AllocsPerRun(100, func() { r.Visible(obj) }); n != 0 {
		t.Errorf("Visible allocates %v times per object, want 0", n)
	}
}

// BenchmarkPointerPermissionCheck measures one object's pointer-permission
// check with the policy compiled once; compare BenchmarkPointerPermissionParsePerObject,
// the former parse-and-compile per object.
func BenchmarkPointerPermissionCheck(b *testing.B) {
	r, err := pointerPolicy().Read(Caller{UserID: "u1"}, OpFind)
	if err != nil {
		b.Fatal(err)
	}
	objs := benchObjects()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		r.Visible(objs[i%len(objs)])
	}
}

func BenchmarkPointerPermissionParsePerObject(b *testing.B) {
	r, err := pointerPolicy().Read(Caller{UserID: "u1"}, OpFind)
	if err != nil {
		b.Fatal(err)
	}
	w := r.Scope().Where()
	objs := benchObjects()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		matchesWhere(w, nil, objs[i%len(objs)])
	}
}

func benchObjects() []schema.Object {
	objs := make([]schema.Object, 64)
	for i := range objs {
		objs[i] = schema.Object{"objectId": fmt.Sprint("o", i), "owner": schema.Pointer(ClassUser, fmt.Sprint("u", i%5)),
			"editors": []any{schema.Pointer(ClassUser, fmt.Sprint("u", i%7)), schema.Pointer(ClassUser, fmt.Sprint("u", i%3))}}
	}
	return objs
}
