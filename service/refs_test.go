package service

import (
	"encoding/json"
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
