package service

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/quarrydata/quarry/schema"
)

// TestReplyBytesAreThoseOfTheVersionRead: a find's, a get's and an
// include's reply is encoded from the version the read found (the scan's
// index.Ref), even when a write replaces the object between the read and
// the encoding: the reply is exactly encoding/json of the results the
// caller holds, never the newer bytes, and a new read sees the new
// version.
func TestReplyBytesAreThoseOfTheVersionRead(t *testing.T) {
	s := openMemory(t)
	master := Auth{Master: true}
	thing, err := s.Create(master, "Thing", map[string]any{"v": 1.0, "tag": "<a&b>"})
	if err != nil {
		t.Fatal(err)
	}
	holder, err := s.Create(master, "Holder", map[string]any{"thing": schema.Pointer("Thing", thing.ObjectID)})
	if err != nil {
		t.Fatal(err)
	}
	reads := []struct {
		name string
		read func() (FindResult, error)
		pick func(schema.Object) schema.Object // the Thing in a result
	}{
		{"find", func() (FindResult, error) {
			return s.Find(Auth{}, "Thing", FindParams{Where: map[string]any{"tag": "<a&b>"}, Limit: -1})
		}, func(o schema.Object) schema.Object { return o }},
		{"find with keys", func() (FindResult, error) {
			return s.Find(Auth{}, "Thing", FindParams{Limit: -1, Read: ReadOptions{Keys: []string{"v"}}})
		}, func(o schema.Object) schema.Object { return o }},
		{"get", func() (FindResult, error) {
			return s.GetResult(Auth{}, "Thing", thing.ObjectID, ReadOptions{})
		}, func(o schema.Object) schema.Object { return o }},
		{"find with include", func() (FindResult, error) {
			return s.Find(Auth{}, "Holder", FindParams{Limit: -1, Read: ReadOptions{Include: []string{"thing"}}})
		}, func(o schema.Object) schema.Object { return o["thing"].(map[string]any) }},
		{"get with include", func() (FindResult, error) {
			return s.GetResult(Auth{}, "Holder", holder.ObjectID, ReadOptions{Include: []string{"thing"}})
		}, func(o schema.Object) schema.Object { return o["thing"].(map[string]any) }},
	}
	v := 1.0
	for _, r := range reads {
		t.Run(r.name, func(t *testing.T) {
			res, err := r.read()
			if err != nil || len(res.Results) != 1 {
				t.Fatalf("read: %v, %d results", err, len(res.Results))
			}
			if r.name == "find" || r.name == "get" {
				if len(res.refs) != 1 || !res.refs[0].Valid() || !sameObject(res.Results[0], res.srcs[0]) {
					t.Fatal("the result does not carry the version its read found")
				}
			}
			held := v
			v++
			if _, err := s.Update(master, "Thing", thing.ObjectID, map[string]any{"v": v}); err != nil {
				t.Fatal(err)
			}
			got, err := res.AppendResults(nil)
			want, _ := json.Marshal(res.Results)
			if err != nil || string(got) != string(want) {
				t.Fatalf("reply after a write:\n got  %s (%v)\n want %s", got, err, want)
			}
			if thingOf := r.pick(res.Results[0]); thingOf["v"] != held {
				t.Errorf("the result changed under the caller: v = %v, want %v", thingOf["v"], held)
			}
			again, err := r.read()
			if err != nil {
				t.Fatal(err)
			}
			got, _ = again.AppendResults(nil)
			var decoded []map[string]any
			if err := json.Unmarshal(got, &decoded); err != nil || len(decoded) != 1 || r.pick(decoded[0])["v"] != v {
				t.Errorf("a new read: %s (%v), want v = %v", got, err, v)
			}
		})
	}
}

// TestReplyOnlyFindSendsTheSameBytes: a find whose caller only sends the
// results (ReplyOnly) may leave results undecoded, and its reply is byte
// for byte the reply of the same find made with decoded results, for
// queries the plan can answer without reading the objects and for those
// it cannot (a residual, an order to sort, an ACL to test, Files,
// projections, includes).
func TestReplyOnlyFindSendsTheSameBytes(t *testing.T) {
	s := openMemory(t)
	master := Auth{Master: true}
	if _, err := s.Create(master, "Owner", map[string]any{"name": "o"}); err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		body := map[string]any{"cat": fmt.Sprintf("c%d", i%3), "n": float64(i), "s": "<&>"}
		if i%5 == 0 {
			body["ACL"] = map[string]any{"someone": map[string]any{"read": true}}
		}
		if _, err := s.Create(master, "Item", body); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Create(master, "Public", map[string]any{"cat": fmt.Sprintf("c%d", i%3), "n": float64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		class string
		p     FindParams
	}{
		{"Public", FindParams{}},
		{"Public", FindParams{Where: map[string]any{"cat": "c1"}}},
		{"Public", FindParams{Where: map[string]any{"cat": "c1", "n": map[string]any{"$gt": 10.0}}}},
		{"Public", FindParams{Order: []SortKey{{Path: "n", Desc: true}}}},
		{"Public", FindParams{Where: map[string]any{"$or": []any{map[string]any{"cat": "c1"}, map[string]any{"n": 2.0}}}, Skip: 2}},
		{"Public", FindParams{Read: ReadOptions{Keys: []string{"n"}}}},
		{"Public", FindParams{Count: true, Where: map[string]any{"cat": "c2"}}},
		{"Item", FindParams{}},
		{"Item", FindParams{Where: map[string]any{"cat": "c0"}}},
		{"_User", FindParams{}},
	}
	for _, auth := range []Auth{master, {}} {
		for _, tc := range cases {
			plain, only := tc.p, tc.p
			plain.Limit, only.Limit = -1, -1
			only.ReplyOnly = true
			want, err := s.Find(auth, tc.class, plain)
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.Find(auth, tc.class, only)
			if err != nil {
				t.Fatal(err)
			}
			wb, err1 := want.AppendResults(nil)
			gb, err2 := got.AppendResults(nil)
			if err1 != nil || err2 != nil || string(gb) != string(wb) || got.Count != want.Count {
				t.Errorf("%s %+v as master %v:\n reply-only %s (%v)\n decoded    %s (%v)", tc.class, tc.p, auth.Master, gb, err2, wb, err1)
			}
		}
	}
	// The plain find of a public class leaves its results undecoded.
	res, err := s.Find(Auth{}, "Public", FindParams{Limit: -1, ReplyOnly: true})
	if err != nil || len(res.Results) == 0 || res.Results[0] != nil {
		t.Errorf("results decoded anyway: %v, %d results", err, len(res.Results))
	}
}
