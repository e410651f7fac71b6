package transport_test

import (
	"net/url"
	"testing"

	"github.com/quarrydata/quarry/server/servertest"
)

// TestNestedArrayPaths: a segment of digits in a dotted key is a position
// in an array, as Parse Server reads it: queries match "arr.0.f" and
// "obj.list.1.g" (both Parse adapters do); updates set positions of an
// array inside an Object field, growing it with nulls as MongoDB does; a
// dotted key into an Array field itself is Parse Server's schema mismatch
// (111), and a key that is not a position is refused.
func TestNestedArrayPaths(t *testing.T) {
	srv := servertest.Start(t, nil)
	app := servertest.App()
	id := mustCreate(t, srv, "Shelf", map[string]any{"arr": []any{map[string]any{"f": "x"}, 2.0},
		"obj": map[string]any{"list": []any{1.0, map[string]any{"g": 1.0}}}})
	mustCreate(t, srv, "Shelf", map[string]any{"arr": []any{map[string]any{"f": "y"}}, "obj": map[string]any{"list": []any{}}})
	path := "/classes/Shelf/" + id
	query := func(where string) string { return "/classes/Shelf?count=1&limit=0&where=" + url.QueryEscape(where) }
	count := func(n string) func(testing.TB, servertest.Response) { return replyAt("count", n) }
	runScenarios(t, srv, []scenario{
		{name: "query: a key of an array element", path: query(`{"arr.0.f":"x"}`), headers: app, expectedStatus: 200, check: count("1")},
		{name: "query: the other element", path: query(`{"arr.0.f":{"$in":["x","y"]}}`), headers: app, expectedStatus: 200, check: count("2")},
		{name: "query: a position inside an object's array", path: query(`{"obj.list.1.g":{"$gt":0}}`), headers: app, expectedStatus: 200, check: count("1")},
		{name: "query: an element itself", path: query(`{"obj.list.0":1,"arr.1":2}`), headers: app, expectedStatus: 200, check: count("1")},
		{name: "query: exists on a position", path: query(`{"arr.1":{"$exists":true}}`), headers: app, expectedStatus: 200, check: count("1")},
		{name: "query: past the end matches nothing", path: query(`{"arr.5.f":"x"}`), headers: app, expectedStatus: 200, check: count("0")},
		{name: "query: no position, no match (MongoDB's any-element rule is not Parse's on PostgreSQL)", path: query(`{"arr.f":"x"}`),
			headers: app, expectedStatus: 200, check: count("0")},

		{name: "update: set a position", method: "PUT", path: path, headers: app, body: map[string]any{"obj.list.0": 7}, expectedStatus: 200},
		{name: "update: increment inside an element, echoed at its path", method: "PUT", path: path, headers: app,
			body: map[string]any{"obj.list.1.g": map[string]any{"__op": "Increment", "amount": 1}}, expectedStatus: 200,
			check: replyKey("obj.list.1.g", "2")},
		{name: "update: add to an array inside an element", method: "PUT", path: path, headers: app,
			body: map[string]any{"obj.list.1.tags": map[string]any{"__op": "AddUnique", "objects": []any{"a"}}}, expectedStatus: 200,
			check: replyKey("obj.list.1.tags", `["a"]`)},
		{name: "update: past the end grows the array with nulls", method: "PUT", path: path, headers: app,
			body: map[string]any{"obj.list.3": "z"}, expectedStatus: 200},
		{name: "update: delete a position leaves a null", method: "PUT", path: path, headers: app,
			body: map[string]any{"obj.list.3": map[string]any{"__op": "Delete"}}, expectedStatus: 200},
		{name: "the object as stored", path: path, headers: app, expectedStatus: 200,
			check: replyAt("obj", `{"list":[7,{"g":2,"tags":["a"]},null,null]}`)},
		{name: "query after the updates", path: query(`{"obj.list.1.tags":"a","obj.list.0":7}`), headers: app, expectedStatus: 200, check: count("1")},

		{name: "update: a key inside an Array field is Parse's schema mismatch", method: "PUT", path: path, headers: app,
			body: map[string]any{"arr.0": 5}, expectedStatus: 400, check: checkAll(codeIs(111)),
			expectedContains: []string{`"schema mismatch for Shelf.arr; expected Array but got Object"`}},
		{name: "update: and deeper", method: "PUT", path: path, headers: app,
			body: map[string]any{"arr.0.f": map[string]any{"__op": "Increment", "amount": 1}}, expectedStatus: 400, check: codeIs(111),
			expectedContains: []string{`"schema mismatch for Shelf.arr; expected Array but got Object"`}},
		{name: "update: a key that is not a position", method: "PUT", path: path, headers: app,
			body: map[string]any{"obj.list.x": 1}, expectedStatus: 400, check: codeIs(111),
			expectedContains: []string{"Shelf.obj.list is not an Object"}},
		{name: "update: through a number in the array", method: "PUT", path: path, headers: app,
			body: map[string]any{"obj.list.0.x": 1}, expectedStatus: 400, check: codeIs(111),
			expectedContains: []string{`"Cannot create property 'x' on number '7'"`}},
		{name: "update: a position far past the end", method: "PUT", path: path, headers: app,
			body: map[string]any{"obj.list.5000": 1}, expectedStatus: 400, check: codeIs(121)},
		{name: "the object unchanged by the refusals", path: path, headers: app, expectedStatus: 200,
			check: checkAll(replyAt("obj", `{"list":[7,{"g":2,"tags":["a"]},null,null]}`), replyAt("arr", `[{"f":"x"},2]`))},
	})
}
