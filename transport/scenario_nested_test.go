package transport_test

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"

	"github.com/quarrydata/quarry/server/servertest"
)

// TestNestedUpdateOperators: operators on keys inside Object fields, the
// reply echoing their results under the dotted key (the SDKs apply it at
// that path), intermediate objects created, and 111 for a path through a
// value that is not an object.
func TestNestedUpdateOperators(t *testing.T) {
	srv := servertest.Start(t, nil)
	app := servertest.App()
	id := mustCreate(t, srv, "Player", map[string]any{"name": "ann", "stats": map[string]any{"wins": 15.0, "tags": []any{"a"}, "keep": true}})
	path := "/classes/Player/" + id
	runScenarios(t, srv, []scenario{
		{name: "increment", method: "PUT", path: path, headers: app,
			body: map[string]any{"stats.wins": map[string]any{"__op": "Increment", "amount": 5}}, expectedStatus: 200,
			check: replyKey("stats.wins", "20")},
		{name: "add, addUnique, remove", method: "PUT", path: path, headers: app,
			body: map[string]any{
				"stats.tags":  map[string]any{"__op": "AddUnique", "objects": []any{"a", "b"}},
				"stats.added": map[string]any{"__op": "Add", "objects": []any{1}},
				"stats.gone":  map[string]any{"__op": "Remove", "objects": []any{1}},
			}, expectedStatus: 200,
			check: checkAll(replyKey("stats.tags", `["a","b"]`), replyKey("stats.added", `[1]`), replyKey("stats.gone", `[]`))},
		{name: "deep set creates the objects on the way", method: "PUT", path: path, headers: app,
			body:           map[string]any{"profile.address.city": "Oslo", "profile.visits.count": map[string]any{"__op": "Increment", "amount": 1}},
			expectedStatus: 200, check: replyKey("profile.visits.count", "1")},
		{name: "delete inside", method: "PUT", path: path, headers: app,
			body: map[string]any{"stats.keep": map[string]any{"__op": "Delete"}}, expectedStatus: 200},
		{name: "the object as stored", path: path, headers: app, expectedStatus: 200,
			check: checkAll(
				replyAt("stats", `{"wins":20,"tags":["a","b"],"added":[1],"gone":[]}`),
				replyAt("profile", `{"address":{"city":"Oslo"},"visits":{"count":1}}`))},
		{name: "a field that is not an Object", method: "PUT", path: path, headers: app,
			body: map[string]any{"name.first": "x"}, expectedStatus: 400, check: codeIs(111),
			expectedContains: []string{`"Cannot create property 'first' on string 'ann'"`}},
		{name: "a path through a number", method: "PUT", path: path, headers: app,
			body: map[string]any{"stats.wins.x": 1}, expectedStatus: 400, check: codeIs(111),
			expectedContains: []string{`"Cannot create property 'x' on number '20'"`}},
		{name: "an increment through a boolean", method: "PUT", path: path, headers: app,
			body: map[string]any{"flag": true}, expectedStatus: 200},
		{name: "an increment under a boolean", method: "PUT", path: path, headers: app,
			body: map[string]any{"flag.n": map[string]any{"__op": "Increment", "amount": 1}}, expectedStatus: 400, check: codeIs(111),
			expectedContains: []string{`"Cannot create property 'n' on boolean 'true'"`}},
		{name: "a path through an array keeps Quarry's message", method: "PUT", path: path, headers: app,
			body: map[string]any{"stats.tags.x": 1}, expectedStatus: 400, check: codeIs(111),
			expectedContains: []string{"Player.stats.tags is not an Object"}},
		{name: "increment of a nested string", method: "PUT", path: path, headers: app,
			body: map[string]any{"profile.address.city": map[string]any{"__op": "Increment", "amount": 1}}, expectedStatus: 400, check: codeIs(111)},
		{name: "an increment that overflows", method: "PUT", path: path, headers: app,
			body: map[string]any{"stats.wins": map[string]any{"__op": "Increment", "amount": math.MaxFloat64}}, expectedStatus: 200},
		{name: "and once more to infinity", method: "PUT", path: path, headers: app,
			body: map[string]any{"stats.wins": map[string]any{"__op": "Increment", "amount": math.MaxFloat64}}, expectedStatus: 400, check: codeIs(111)},
		{name: "top-level overflow too", method: "PUT", path: path, headers: app,
			body: map[string]any{"big": map[string]any{"__op": "Increment", "amount": math.MaxFloat64}}, expectedStatus: 200},
		{name: "top-level to infinity", method: "PUT", path: path, headers: app,
			body: map[string]any{"big": map[string]any{"__op": "Increment", "amount": math.MaxFloat64}}, expectedStatus: 400, check: codeIs(111)},
	})
}

// replyKey checks one top-level key of the reply, taken literally (dotted
// keys are names here, not paths).
func replyKey(key, want string) func(testing.TB, servertest.Response) {
	return func(t testing.TB, res servertest.Response) {
		t.Helper()
		got, _ := json.Marshal(res.Map()[key])
		var a, b any
		_ = json.Unmarshal(got, &a)
		if err := json.Unmarshal([]byte(want), &b); err != nil {
			t.Fatalf("bad expectation %s: %v", want, err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("reply[%q] = %s, want %s (reply %s)", key, got, want, res.Body)
		}
	}
}
