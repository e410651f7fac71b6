package index

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"unsafe"
)

// TestDecodeStoredMatchesUnmarshal: Decode gives what encoding/json's
// Unmarshal gives (or fails where it fails), on hand-picked edge cases and
// on random objects, and its fast path shares the input's memory.
func TestDecodeStoredMatchesUnmarshal(t *testing.T) {
	inputs := []string{
		`{}`, `{"a":null,"b":true,"c":false,"d":[],"e":{},"f":""}`,
		`{"n":-0,"m":1e308,"s":5e-324,"u":1e-400,"big":9007199254740993,"x":-1.5E+3}`,
		`{"o":1e400}`, `{"o":-1e309}`,
		`{"a":1,"a":2}`, ` { "a" : [ 1 , "x" , { "b" : null } ] } `,
		`{"esc":"a\"b","u":"\u00e9\ud83d\ude00","bad":"\ud800"}`,
		"{\"utf8\":\"h\xc3\xa9\"}", "{\"invalid\":\"\xff\"}",
		`{"deep":[[[[{"a":[{}]}]]]]}`,
		`null`, `[1]`, `"s"`, `{"a":1`, `{"a":1}x`, `{"a":01}`, `{"a":tru}`, "",
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 300 {
		b, _ := json.Marshal(randJSONValue(rng, 0, true))
		inputs = append(inputs, string(b))
	}
	for _, in := range inputs {
		stored := []byte(in)
		got, gotErr := Decode(stored)
		var want map[string]any
		wantErr := json.Unmarshal([]byte(in), &want)
		if (gotErr != nil) != (wantErr != nil) || !reflect.DeepEqual(map[string]any(got), want) {
			t.Fatalf("Decode(%q) = %v, %v; Unmarshal gives %v, %v", in, got, gotErr, want, wantErr)
		}
	}
	stored := []byte(`{"objectId":"abc","tags":["x"]}`)
	obj, ok := decodeShared(stored)
	if !ok {
		t.Fatal("a plain object took the slow path")
	}
	for _, s := range []string{obj["objectId"].(string), obj["tags"].([]any)[0].(string)} {
		p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
		if base := uintptr(unsafe.Pointer(&stored[0])); p < base || p >= base+uintptr(len(stored)) {
			t.Fatalf("%q is a copy, not the stored bytes", s)
		}
	}
}

// randJSONValue makes a random value (an object at the top) of the kinds
// JSON has, with strings that need escapes now and then.
func randJSONValue(rng *rand.Rand, depth int, object bool) any {
	kind := rng.IntN(8)
	if object || depth < 3 && kind == 7 {
		m := map[string]any{}
		for range rng.IntN(6) {
			m[randJSONString(rng)] = randJSONValue(rng, depth+1, false)
		}
		return m
	}
	switch kind {
	case 0:
		return nil
	case 1:
		return rng.IntN(2) == 0
	case 2:
		return rng.NormFloat64() * []float64{1, 1e-9, 1e12, 1e300}[rng.IntN(4)]
	case 3:
		return float64(rng.IntN(2000) - 1000)
	case 4, 5:
		return randJSONString(rng)
	}
	if depth >= 3 {
		return "leaf"
	}
	arr := make([]any, rng.IntN(4))
	for i := range arr {
		arr[i] = randJSONValue(rng, depth+1, false)
	}
	return arr
}

func randJSONString(rng *rand.Rand) string {
	parts := []string{"a", "objectId", "é", "😀", "<", "&", "\"", "\\", "\n", "\u2028", "\x01", " "}
	var b strings.Builder
	for range rng.IntN(5) {
		if rng.IntN(4) == 0 {
			b.WriteString(parts[rng.IntN(len(parts))])
		} else {
			b.WriteString(fmt.Sprint(rng.IntN(100)))
		}
	}
	return b.String()
}
