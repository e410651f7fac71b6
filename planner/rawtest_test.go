package planner

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/quarrydata/quarry/index"
	"github.com/quarrydata/quarry/matcher"
	"github.com/quarrydata/quarry/where"
)

// TestRawTestAgreesWithMatcher: whatever a rawTest decides on a member's
// stored text is what the matcher decides on the decoded object, for the
// values whose text could mislead it (escapes, invalid UTF-8, exponents,
// negative zero, arrays, objects, other types, a missing member), and it
// leaves undecided what it cannot read exactly.
func TestRawTestAgreesWithMatcher(t *testing.T) {
	values := []string{
		`"c1"`, `"c10"`, `"c\u0031"`, `"a\"b"`, `"\ufffd"`, "\"\xff\"", `"é"`, `""`,
		`1`, `1.0`, `1e0`, `10`, `-0`, `0`, `-1.5`, `2e-3`, `-12.5e1`,
		`[1,2]`, `["c1"]`, `[]`, `{"__type":"Date","iso":"2020-01-01T00:00:00.000Z"}`,
		`true`, `null`, ``,
	}
	coll := index.New().Collection("Raw", true)
	for i, v := range values {
		member := ""
		if v != "" {
			member = `,"v":` + v
		}
		js := fmt.Sprintf(`{"objectId":"o%02d","a":%d%s,"z":"end"}`, i, i, member)
		if err := coll.PutLoaded([]byte(js)); err != nil {
			t.Fatalf("%s: %v", js, err)
		}
	}
	wheres := []string{
		`{"v":"c1"}`, `{"v":"a\"b"}`, `{"v":"\ufffd"}`, `{"v":""}`, `{"v":"é"}`,
		`{"v":1}`, `{"v":0}`, `{"v":-1.5}`,
		`{"v":{"$gt":0}}`, `{"v":{"$gte":0}}`, `{"v":{"$lt":1}}`, `{"v":{"$lte":1,"$gt":-2}}`,
		`{"$or":[{"v":"c1"},{"a":{"$gte":20}}]}`,
		`{"$and":[{"v":{"$gte":1}},{"a":{"$lt":12}}]}`,
		`{"$nor":[{"v":1},{"a":3}]}`,
		`{"$or":[{"v":{"$lt":0}},{"z":"end"}]}`,
		`{"$nor":[{"v":"c1"}]}`,
	}
	decided, undecided := 0, 0
	for _, w := range wheres {
		var raw map[string]any
		if err := json.Unmarshal([]byte(w), &raw); err != nil {
			t.Fatal(err)
		}
		n, err := where.Parse(raw, where.Options{})
		if err != nil {
			t.Fatalf("%s: %v", w, err)
		}
		m, err := matcher.Compile(n, nil)
		if err != nil {
			t.Fatal(err)
		}
		keys, _ := readKeys(n, nil)
		rt := newRawTest(n, keys)
		if rt == nil {
			t.Fatalf("%s: no raw test compiled", w)
		}
		coll.ScanRange("objectId", index.Range{}, false, time.Now().Add(time.Minute), func(ref index.Ref) bool {
			want := m.Match(ref.Object())
			switch rt.test(ref) {
			case triUnknown:
				undecided++
			case triTrue:
				decided++
				if !want {
					t.Errorf("where %s, object %s: raw text says true, matcher false", w, ref.ID())
				}
			case triFalse:
				decided++
				if want {
					t.Errorf("where %s, object %s: raw text says false, matcher true", w, ref.ID())
				}
			}
			// The byte test as a whole answers as the matcher, either way.
			bt := newByteTest(n, m.Match)
			if got := bt.test(ref); got != want {
				t.Errorf("where %s, object %s: byte test %v, matcher %v", w, ref.ID(), got, want)
			}
			return true
		})
	}
	if decided < 200 || undecided < 30 {
		t.Errorf("decided %d, undecided %d: the cases no longer reach both sides", decided, undecided)
	}
}

// TestRawTestCompilesOnlyWhatItDecides: operators and paths a rawTest
// cannot decide on text leave the byte test to the matcher.
func TestRawTestCompilesOnlyWhatItDecides(t *testing.T) {
	for _, w := range []map[string]any{
		{"v": map[string]any{"$ne": 1.0}},
		{"v": map[string]any{"$in": []any{1.0}}},
		{"v": map[string]any{"$gt": "a"}},
		{"v": true},
		{"v": nil},
		{"o.x": 1.0},
		{"v": map[string]any{"$exists": true}},
		{"$or": []any{map[string]any{"v": 1.0}, map[string]any{"w": map[string]any{"$regex": "a"}}}},
	} {
		n, err := where.Parse(w, where.Options{})
		if err != nil {
			t.Fatal(err)
		}
		keys, _ := readKeys(n, nil)
		if rt := newRawTest(n, keys); rt != nil {
			t.Errorf("%v: compiled a raw test", w)
		}
	}
}
