package transport_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/quarrydata/quarry/server/servertest"
)

// TestReplyBytesFollowEachVersion: a stored object's reply is sent from
// bytes kept with its version. After every kind of write (update, batch
// update, transaction, delete), every read path (get, find, count, keys,
// include, batch get and find) shows the new version and never the old
// bytes, and each reply is exactly what encoding/json writes for it.
func TestReplyBytesFollowEachVersion(t *testing.T) {
	srv := servertest.Start(t, nil)
	app := servertest.App()
	id := mustCreate(t, srv, "Ready", map[string]any{"v": 1, "tag": "<a&b>", "n": 1.5})
	holder := mustCreate(t, srv, "Holder", map[string]any{"thing": map[string]any{"__type": "Pointer", "className": "Ready", "objectId": id}})
	where := url.QueryEscape(`{"tag":"<a&b>"}`)
	reads := []struct {
		name, path string
		pick       func(any) any // the Ready object inside the reply
	}{
		{"get", "/classes/Ready/" + id, func(v any) any { return v }},
		{"find", "/classes/Ready?where=" + where, first("results")},
		{"find with count", "/classes/Ready?count=1&where=" + where, first("results")},
		{"find with keys", "/classes/Ready?keys=v", first("results")},
		{"get with excludeKeys", "/classes/Ready/" + id + "?excludeKeys=n", func(v any) any { return v }},
		// Projections are filtered out of the stored bytes (service/project.go).
		{"get with keys", "/classes/Ready/" + id + "?keys=v,tag", func(v any) any { return v }},
		{"get with keys it lacks", "/classes/Ready/" + id + "?keys=v,nothing", func(v any) any { return v }},
		{"find with excludeKeys", "/classes/Ready?excludeKeys=n,tag&where=" + where, first("results")},
		{"find with keys and count", "/classes/Ready?count=1&keys=v,n&where=" + where, first("results")},
		{"include", "/classes/Holder/" + holder + "?include=thing", func(v any) any { return v.(map[string]any)["thing"] }},
		{"find with include", "/classes/Holder?include=thing", func(v any) any { return first("results")(v).(map[string]any)["thing"] }},
	}
	check := func(step string, v float64) {
		t.Helper()
		for _, r := range reads {
			res := srv.Do(t, "GET", r.path, nil, app)
			if res.Status != 200 {
				t.Fatalf("%s: %s: status %d %s", step, r.name, res.Status, res.Body)
			}
			sameAsEncodingJSON(t, step+": "+r.name, res.Body)
			obj, _ := r.pick(res.JSON()).(map[string]any)
			if obj["v"] != v {
				t.Errorf("%s: %s: v = %v, want %v: %s", step, r.name, obj["v"], v, res.Body)
			}
			if want := projected(r.path); want != nil {
				for _, k := range []string{"v", "n", "tag", "nothing"} {
					if _, has := obj[k]; has != want[k] {
						t.Errorf("%s: %s: has %s %v, want %v: %s", step, r.name, k, has, want[k], res.Body)
					}
				}
			}
		}
		// An aggregate whose pipeline the planner runs alone replies with
		// plain objects, encoded from their stored bytes.
		agg := srv.Do(t, "GET", "/aggregate/Ready?pipeline="+url.QueryEscape(`[{"$match":{"tag":"<a&b>"}}]`), nil, servertest.Master())
		if agg.Status != 200 {
			t.Fatalf("%s: aggregate: status %d %s", step, agg.Status, agg.Body)
		}
		sameAsEncodingJSON(t, step+": aggregate", agg.Body)
		if obj, _ := first("results")(agg.JSON()).(map[string]any); obj["v"] != v {
			t.Errorf("%s: aggregate: v = %v, want %v: %s", step, obj["v"], v, agg.Body)
		}
		batch := srv.Do(t, "POST", "/batch", map[string]any{"requests": []any{
			map[string]any{"method": "GET", "path": "/parse/classes/Ready/" + id},
			map[string]any{"method": "GET", "path": "/parse/classes/Ready", "body": map[string]any{"where": map[string]any{"tag": "<a&b>"}}},
		}}, app)
		if batch.Status != 200 {
			t.Fatalf("%s: batch: %d %s", step, batch.Status, batch.Body)
		}
		sameAsEncodingJSON(t, step+": batch", batch.Body)
		var items []struct {
			Success json.RawMessage `json:"success"`
		}
		if err := json.Unmarshal(batch.Body, &items); err != nil || len(items) != 2 {
			t.Fatalf("%s: batch reply %s", step, batch.Body)
		}
		var got struct {
			V float64 `json:"v"`
		}
		var found struct {
			Results []struct {
				V float64 `json:"v"`
			} `json:"results"`
		}
		if json.Unmarshal(items[0].Success, &got) != nil || got.V != v {
			t.Errorf("%s: batch get: %s", step, items[0].Success)
		}
		if json.Unmarshal(items[1].Success, &found) != nil || len(found.Results) != 1 || found.Results[0].V != v {
			t.Errorf("%s: batch find: %s", step, items[1].Success)
		}
	}

	check("created", 1)
	if res := srv.Do(t, "PUT", "/classes/Ready/"+id, map[string]any{"v": 2}, app); res.Status != 200 {
		t.Fatalf("update: %d %s", res.Status, res.Body)
	}
	check("updated", 2)
	if res := srv.Do(t, "PUT", "/classes/Ready/"+id, map[string]any{"v": map[string]any{"__op": "Increment", "amount": 1}}, app); res.Status != 200 {
		t.Fatalf("increment: %d %s", res.Status, res.Body)
	}
	check("incremented", 3)
	for i, tx := range []bool{false, true} {
		res := srv.Do(t, "POST", "/batch", map[string]any{"transaction": tx, "requests": []any{
			map[string]any{"method": "PUT", "path": "/parse/classes/Ready/" + id, "body": map[string]any{"v": 4 + i}},
		}}, app)
		if res.Status != 200 || !strings.Contains(string(res.Body), "success") {
			t.Fatalf("batch update (transaction %v): %d %s", tx, res.Status, res.Body)
		}
		check(fmt.Sprintf("batch-updated (transaction %v)", tx), float64(4+i))
	}

	if res := srv.Do(t, "DELETE", "/classes/Ready/"+id, nil, app); res.Status != 200 {
		t.Fatalf("delete: %d %s", res.Status, res.Body)
	}
	if res := srv.Do(t, "GET", "/classes/Ready/"+id, nil, app); res.Status != 404 {
		t.Errorf("get after delete: %d %s", res.Status, res.Body)
	}
	if res := srv.Do(t, "GET", "/classes/Ready?where="+where, nil, app); string(res.Body) != `{"results":[]}` {
		t.Errorf("find after delete: %s", res.Body)
	}
}

// first picks the first element of the list under key.
func first(key string) func(any) any {
	return func(v any) any {
		list, _ := v.(map[string]any)[key].([]any)
		if len(list) == 0 {
			return nil
		}
		return list[0]
	}
}

// sameAsEncodingJSON fails unless body is byte for byte what encoding/json
// writes for the value it holds (sorted keys, HTML characters escaped).
func sameAsEncodingJSON(t *testing.T, what string, body []byte) {
	t.Helper()
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("%s: not JSON: %s", what, body)
	}
	want, _ := json.Marshal(v)
	if !bytes.Equal(body, want) {
		t.Errorf("%s: reply\n%s\nis not encoding/json's\n%s", what, body, want)
	}
}

// projected is which of v, n, tag and nothing a read's keys or
// excludeKeys leave in the object, or nil for a read without either.
func projected(path string) map[string]bool {
	u, err := url.Parse(path)
	if err != nil {
		return nil
	}
	q := u.Query()
	switch {
	case q.Has("keys"):
		out := map[string]bool{}
		for _, k := range strings.Split(q.Get("keys"), ",") {
			out[k] = k != "nothing"
		}
		return out
	case q.Has("excludeKeys"):
		out := map[string]bool{"v": true, "n": true, "tag": true}
		for _, k := range strings.Split(q.Get("excludeKeys"), ",") {
			delete(out, k)
		}
		return out
	}
	return nil
}
