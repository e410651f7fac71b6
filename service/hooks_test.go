package service

import (
	"reflect"
	"testing"

	"github.com/quarrydata/quarry/schema"
)

func TestFoldChanges(t *testing.T) {
	inc := map[string]any{"__op": "Increment", "amount": 1.0}
	del := map[string]any{"__op": "Delete"}
	cases := []struct {
		name        string
		method      Method
		body        map[string]any
		before      schema.Object
		after       schema.Object
		wantBody    map[string]any
		wantChanged map[string]any
	}{
		{name: "untouched", method: MethodUpdate, body: map[string]any{"n": inc},
			before: schema.Object{"n": 2.0}, after: schema.Object{"n": 2.0},
			wantBody: map[string]any{"n": inc}, wantChanged: map[string]any{}},
		{name: "set beside an increment", method: MethodUpdate, body: map[string]any{"n": inc},
			before: schema.Object{"n": 2.0}, after: schema.Object{"n": 2.0, "tag": "x"},
			wantBody: map[string]any{"n": inc, "tag": "x"}, wantChanged: map[string]any{"tag": "x"}},
		{name: "overrides the client", method: MethodCreate, body: map[string]any{"name": "a"},
			before: schema.Object{"name": "a"}, after: schema.Object{"name": "A"},
			wantBody: map[string]any{"name": "A"}, wantChanged: map[string]any{"name": "A"}},
		{name: "unset on create drops the key", method: MethodCreate, body: map[string]any{"name": "a", "tmp": 1.0},
			before: schema.Object{"name": "a", "tmp": 1.0}, after: schema.Object{"name": "a"},
			wantBody: map[string]any{"name": "a"}, wantChanged: map[string]any{}},
		{name: "unset on update deletes", method: MethodUpdate, body: map[string]any{},
			before: schema.Object{"old": true}, after: schema.Object{},
			wantBody: map[string]any{"old": del}, wantChanged: map[string]any{}},
		{name: "system keys are the server's", method: MethodUpdate, body: map[string]any{},
			before: schema.Object{"objectId": "a", "updatedAt": "t1"}, after: schema.Object{"objectId": "b", "createdAt": "t0"},
			wantBody: map[string]any{}, wantChanged: map[string]any{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			op := &WriteOp{Method: c.method, Body: c.body}
			changed := foldChanges(op, c.before, c.after)
			if !reflect.DeepEqual(op.Body, c.wantBody) {
				t.Errorf("body %v, want %v", op.Body, c.wantBody)
			}
			if !reflect.DeepEqual(changed, c.wantChanged) {
				t.Errorf("changed %v, want %v", changed, c.wantChanged)
			}
		})
	}
}

func TestHookViewHidesInternalFields(t *testing.T) {
	got := hookView(schema.Object{"a": 1.0, "_hashed_password": "x", "password": "p", "_email_lc": "e"})
	if want := (schema.Object{"a": 1.0}); !reflect.DeepEqual(got, want) {
		t.Errorf("hookView = %v, want %v", got, want)
	}
	if hookView(nil) != nil {
		t.Error("hookView(nil) is not nil")
	}
}
