package service

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/quarrydata/quarry/schema"
)

// encodeCases are the awkward strings and numbers of JSON encoding: HTML
// and line-separator escapes, control bytes, invalid UTF-8, the switch to
// exponents at 1e21 and 1e-6, extremes.
var (
	encodeStrings = []string{"", "a", "<script>&amp;", "\u2028\u2029", "é漢字🙂", "\x00\x01\x1f\"\\/", "\t\n\r",
		"\x7f", "\ufffd", "a\xffb", "\xed\xa0\x80", "\xc3"}
	encodeNumbers = []float64{0, math.Copysign(0, -1), 1, -1, 1e20, 1e21, 1e-6, 1e-7, 123456789.123,
		math.MaxFloat64, math.SmallestNonzeroFloat64, 0.1, 1.0 / 3, 9007199254740993, -1e-300}
)

// TestEncodeStoredMatchesEncodingJSON: the committed bytes of an object are
// byte for byte what encoding/json writes, for random objects built from
// every value type an object holds, and both refuse NaN and infinities.
func TestEncodeStoredMatchesEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 20000 {
		obj := randomObject(rng, 0)
		want, errWant := json.Marshal(obj)
		got, errGot := encodeStored(obj)
		if (errWant == nil) != (errGot == nil) || string(got) != string(want) {
			t.Fatalf("case %d: %#v\n got  %s (%v)\n want %s (%v)", i, obj, got, errGot, want, errWant)
		}
	}
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if _, err := encodeStored(schema.Object{"x": f}); err == nil {
			t.Errorf("%v encoded, want an error as encoding/json gives", f)
		}
	}
}

func randomObject(rng *rand.Rand, depth int) schema.Object {
	obj := schema.Object{}
	for range rng.IntN(6) {
		obj[encodeStrings[rng.IntN(len(encodeStrings))]+string(rune('a'+rng.IntN(26)))] = randomValue(rng, depth+1)
	}
	return obj
}

func randomValue(rng *rand.Rand, depth int) any {
	switch k := rng.IntN(6); {
	case k == 0:
		return encodeStrings[rng.IntN(len(encodeStrings))]
	case k == 1 && rng.IntN(2) == 0:
		return encodeNumbers[rng.IntN(len(encodeNumbers))]
	case k == 1: // any finite number
		return math.Float64frombits(rng.Uint64()&^(0x7ff<<52) | uint64(rng.IntN(2046)+1)<<52)
	case k == 2:
		return rng.IntN(2) == 0
	case k == 3:
		return nil
	case k == 4 && depth < 4:
		list := make([]any, rng.IntN(4))
		for i := range list {
			list[i] = randomValue(rng, depth+1)
		}
		return list
	case depth < 4:
		return map[string]any(randomObject(rng, depth))
	}
	return "leaf"
}
