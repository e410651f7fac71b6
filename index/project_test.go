package index

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"reflect"
	"testing"
)

// TestProjectAgreesWithDecode: for stored bytes of every shape a record
// may hold (Marshal's output, bytes with whitespace, escapes in strings
// and keys, nested objects and arrays holding quotes and braces), each
// member Project reads is the value Decode gives, and a missing member is
// absent (deleted from a reused map).
func TestProjectAgreesWithDecode(t *testing.T) {
	fixed := []string{
		`{"objectId":"a1","score":5,"category":"c1"}`,
		`{ "objectId" : "a2" , "score" : -1.5e3 , "category" : "c\"1}" }`,
		`{"objectId":"a3","nested":{"score":1,"s":"}]\\\"{"},"arr":[1,{"a":"]"},[]],"score":null}`,
		`{"objectId":"a4","sc\u006fre":7,"category":"x"}`,
		`{"objectId":"a5","category":"caf\u00e9 \\","score":true,"loc":{"__type":"GeoPoint","latitude":1,"longitude":2}}`,
		`{"objectId":"a6"}`,
		`{"objectId":"a7","score":[1,2,"3"],"category":{"__type":"Pointer","className":"C","objectId":"x"}}`,
	}
	r := rand.New(rand.NewSource(3))
	for i := 0; i < 300; i++ { // Marshal's output of random objects
		obj := map[string]any{"objectId": fmt.Sprintf("r%d", i)}
		for _, k := range []string{"score", "category", "loc", "n", "ACL"} {
			switch r.Intn(6) {
			case 0:
			case 1:
				obj[k] = float64(r.Intn(100)) / 4
			case 2:
				obj[k] = fmt.Sprintf(`s"%d}<&>\`, r.Intn(9))
			case 3:
				obj[k] = map[string]any{"score": r.Intn(3), "x": []any{"]", map[string]any{"{": "}"}}}
			case 4:
				obj[k] = []any{float64(r.Intn(3)), "a\nb", nil}
			case 5:
				obj[k] = r.Intn(2) == 0
			}
		}
		b, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		fixed = append(fixed, string(b))
	}
	keys := []string{"score", "category", "loc", "missing", "objectId", "sc\u006fre"}
	dst := map[string]any{"missing": "stale", "score": "stale"}
	for _, js := range fixed {
		full, err := Decode([]byte(js))
		if err != nil {
			t.Fatalf("%s: %v", js, err)
		}
		ref := Ref{newRecord(full, []byte(js), false)}
		ref.Project(keys, dst)
		for _, k := range keys {
			want, wantOK := full[k]
			got, gotOK := dst[k]
			if gotOK != wantOK || !reflect.DeepEqual(got, want) {
				t.Errorf("%s: key %q: got %#v (%v), want %#v (%v)", js, k, got, gotOK, want, wantOK)
			}
		}
	}
}

// TestEachMemberRefusesWhatItCannotRead: a key with an escape or
// malformed JSON makes eachMember report false (Project then reads each
// key by gjson), never a wrong member.
func TestEachMemberRefusesWhatItCannotRead(t *testing.T) {
	for _, js := range []string{`{"sc\u006fre":1}`, `{"a":1`, `{"a" 1}`, `["a"]`, `{"a":"unterminated}`, `{"a":{"b":1}`, `{"a":1,}`} {
		if eachMember(js, func(string, string) bool { return true }) {
			t.Errorf("%s: read", js)
		}
	}
	for _, js := range []string{`{}`, ` { } `, `{"a":{"b":[1,"]}"]},"c":"\\"}`} {
		if !eachMember(js, func(string, string) bool { return true }) {
			t.Errorf("%s: refused", js)
		}
	}
}
