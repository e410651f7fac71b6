package transport_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"sync"
	"testing"

	"github.com/quarrydata/quarry/server/servertest"
)

func op(name string, kv ...any) map[string]any {
	m := map[string]any{"__op": name}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

func ptr(class, id string) map[string]any {
	return map[string]any{"__type": "Pointer", "className": class, "objectId": id}
}

// fieldIs checks one field of a stored object after the scenario ran.
func fieldIs(srv *servertest.Server, class, id, key string, want any) func(testing.TB, servertest.Response) {
	return func(t testing.TB, res servertest.Response) {
		t.Helper()
		got := mustGet(t, srv, class, id)
		if want == nil {
			if v, ok := got[key]; ok {
				t.Errorf("%s = %v, want absent", key, v)
			}
			return
		}
		if !reflect.DeepEqual(normJSON(got[key]), normJSON(want)) {
			t.Errorf("%s = %v, want %v", key, got[key], want)
		}
	}
}

// normJSON makes Go literals comparable with decoded JSON.
func normJSON(v any) any {
	b, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

// TestScenarioUpdateOperators applies every operator through HTTP.
func TestScenarioUpdateOperators(t *testing.T) {
	srv := servertest.Start(t, nil)
	app := servertest.App()
	id := mustCreate(t, srv, "Ops", map[string]any{"n": 10, "arr": []any{1, 2}, "gone": "x", "o": map[string]any{"views": 1}})
	t1 := mustCreate(t, srv, "Friend", map[string]any{})
	t2 := mustCreate(t, srv, "Friend", map[string]any{})
	path := "/classes/Ops/" + id
	put := func(name string, body map[string]any, contains []string, check func(testing.TB, servertest.Response)) scenario {
		return scenario{name: name, method: "PUT", path: path, headers: app, body: body, expectedStatus: 200,
			expectedContains: append([]string{`"updatedAt"`}, contains...), check: check}
	}
	runScenarios(t, srv, []scenario{
		put("increment", map[string]any{"n": op("Increment", "amount", 5)}, []string{`"n":15`}, fieldIs(srv, "Ops", id, "n", 15)),
		put("decrement", map[string]any{"n": op("Increment", "amount", -20)}, []string{`"n":-5`}, fieldIs(srv, "Ops", id, "n", -5)),
		put("increment a new field", map[string]any{"fresh": op("Increment", "amount", 2.5)}, []string{`"fresh":2.5`},
			fieldIs(srv, "Ops", id, "fresh", 2.5)),
		put("add", map[string]any{"arr": op("Add", "objects", []any{2, "x"})}, []string{`"arr":[1,2,2,"x"]`},
			fieldIs(srv, "Ops", id, "arr", []any{1, 2, 2, "x"})),
		put("add unique", map[string]any{"arr": op("AddUnique", "objects", []any{1, 3, 3, "x", "y"})},
			[]string{`"arr":[1,2,2,"x",3,"y"]`}, fieldIs(srv, "Ops", id, "arr", []any{1, 2, 2, "x", 3, "y"})),
		put("remove", map[string]any{"arr": op("Remove", "objects", []any{2, "y", "absent"})},
			[]string{`"arr":[1,"x",3]`}, fieldIs(srv, "Ops", id, "arr", []any{1, "x", 3})),
		put("add unique objects", map[string]any{"objs": op("AddUnique", "objects", []any{map[string]any{"a": 1}, map[string]any{"a": 1}})},
			nil, fieldIs(srv, "Ops", id, "objs", []any{map[string]any{"a": 1}})),
		put("add to a new field", map[string]any{"tags": op("Add", "objects", []any{"a"})}, nil,
			fieldIs(srv, "Ops", id, "tags", []any{"a"})),
		put("delete", map[string]any{"gone": op("Delete")}, nil, fieldIs(srv, "Ops", id, "gone", nil)),
		put("delete an absent field", map[string]any{"never": op("Delete")}, nil, fieldIs(srv, "Ops", id, "never", nil)),
		put("nested increment", map[string]any{"o.views": op("Increment", "amount", 2)}, nil,
			fieldIs(srv, "Ops", id, "o", map[string]any{"views": 3})),
		put("nested set", map[string]any{"o.title": "t"}, nil,
			fieldIs(srv, "Ops", id, "o", map[string]any{"views": 3, "title": "t"})),
		put("nested delete", map[string]any{"o.title": op("Delete")}, nil,
			fieldIs(srv, "Ops", id, "o", map[string]any{"views": 3})),
		put("add relation", map[string]any{"friends": op("AddRelation", "objects", []any{ptr("Friend", t1), ptr("Friend", t2)})}, nil,
			fieldIs(srv, "Ops", id, "friends", map[string]any{"__type": "Relation", "className": "Friend"})),
		{name: "relation shown on get", path: path, headers: app, expectedStatus: 200,
			expectedContains: []string{`"friends":{"__type":"Relation","className":"Friend"}`}},
		{name: "relation shown on find", path: "/classes/Ops", headers: app, expectedStatus: 200,
			expectedContains: []string{`"friends":{"__type":"Relation","className":"Friend"}`}},
		put("remove relation", map[string]any{"friends": op("RemoveRelation", "objects", []any{ptr("Friend", t1)})}, nil,
			fieldIs(srv, "Ops", id, "friends", map[string]any{"__type": "Relation", "className": "Friend"})),
		put("batch of relation ops", map[string]any{"friends": op("Batch", "ops", []any{
			op("AddRelation", "objects", []any{ptr("Friend", t1)}),
			op("RemoveRelation", "objects", []any{ptr("Friend", t2)}),
		})}, nil, fieldIs(srv, "Ops", id, "friends", map[string]any{"__type": "Relation", "className": "Friend"})),
		{name: "relation to another class", method: "PUT", path: path, headers: app,
			body:           map[string]any{"friends": op("AddRelation", "objects", []any{ptr("Ops", id)})},
			expectedStatus: 400, check: codeIs(111)},
		{name: "relation of mixed classes", method: "PUT", path: path, headers: app,
			body:           map[string]any{"others": op("AddRelation", "objects", []any{ptr("Friend", t1), ptr("Ops", id)})},
			expectedStatus: 400},
		{name: "relation op with a non-pointer", method: "PUT", path: path, headers: app,
			body:           map[string]any{"friends": op("AddRelation", "objects", []any{"x"})},
			expectedStatus: 400},
		{name: "batch op with a non-relation op", method: "PUT", path: path, headers: app,
			body:           map[string]any{"n": op("Batch", "ops", []any{op("Increment", "amount", 1)})},
			expectedStatus: 400},
		{name: "batch op without ops", method: "PUT", path: path, headers: app,
			body: map[string]any{"friends": op("Batch")}, expectedStatus: 400},
		{name: "relation field cannot take a plain value", method: "PUT", path: path, headers: app,
			body: map[string]any{"friends": []any{1}}, expectedStatus: 400, check: codeIs(111)},
		{name: "operators on create are flattened", method: "POST", path: "/classes/Ops", headers: app,
			body: map[string]any{"n": op("Increment", "amount", 3), "arr": op("Add", "objects", []any{7}),
				"tags": op("Remove", "objects", []any{"a"}), "gone": op("Delete")},
			expectedStatus: 201, check: func(t testing.TB, res servertest.Response) {
				got := mustGet(t, srv, "Ops", res.Map()["objectId"].(string))
				if got["n"] != 3.0 || !reflect.DeepEqual(got["arr"], []any{7.0}) || !reflect.DeepEqual(got["tags"], []any{}) {
					t.Errorf("flattened create: %v", got)
				}
				if _, ok := got["gone"]; ok {
					t.Errorf("Delete on create stored a value: %v", got)
				}
			}},
	})
}

// TestScenarioConcurrentIncrements: 100 concurrent increments all count.
func TestScenarioConcurrentIncrements(t *testing.T) {
	srv := servertest.Start(t, nil)
	id := mustCreate(t, srv, "Counter", map[string]any{"n": 7, "arr": []any{}})
	const workers = 100
	var wg sync.WaitGroup
	errs := make(chan string, workers)
	for i := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := map[string]any{"n": op("Increment", "amount", 1), "arr": op("Add", "objects", []any{i})}
			res, err := tryDo(srv.URL+"/classes/Counter/"+id, "PUT", body, servertest.App())
			if err != nil {
				errs <- err.Error()
				return
			}
			if res.Status != http.StatusOK {
				errs <- fmt.Sprintf("%d %s", res.Status, res.Body)
			}
		}()
	}
	wg.Wait()
	// fasthttp counts a connection that never sent a request as active, so
	// the extra connections the client dialed under load would hold up the
	// server's graceful shutdown: hang them up.
	rawClient.CloseIdleConnections()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	got := mustGet(t, srv, "Counter", id)
	if got["n"] != float64(7+workers) {
		t.Errorf("n = %v, want %d", got["n"], 7+workers)
	}
	if arr, _ := got["arr"].([]any); len(arr) != workers {
		t.Errorf("%d array elements, want %d", len(arr), workers)
	}
}
