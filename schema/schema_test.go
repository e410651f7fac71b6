package schema

import (
	"encoding/json"
	"regexp"
	"testing"
)

func decode(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("bad fixture %s: %v", s, err)
	}
	return v
}

func TestCompareOrdersRanksThenValues(t *testing.T) {
	// Each value sorts strictly before the next one.
	ordered := []string{
		`null`, `-5`, `0`, `2.5`, `""`, `"a"`, `"b"`,
		`{"__type":"Pointer","className":"A","objectId":"x"}`, `{"__type":"Pointer","className":"B","objectId":"a"}`, `{"a":1}`,
		`[]`, `[1]`, `[1,2]`, `{"__type":"Bytes","base64":"AA=="}`,
		`false`, `true`,
		`{"__type":"Date","iso":"2020-01-01T00:00:00.000Z"}`, `{"__type":"Date","iso":"2021-01-01T00:00:00.000Z"}`,
	}
	for i := 0; i+1 < len(ordered); i++ {
		a, b := decode(t, ordered[i]), decode(t, ordered[i+1])
		if Compare(a, b) >= 0 || Compare(b, a) <= 0 {
			t.Errorf("want %s < %s", ordered[i], ordered[i+1])
		}
		if Compare(a, a) != 0 {
			t.Errorf("want %s == itself", ordered[i])
		}
	}
}

func TestEqual(t *testing.T) {
	cases := []struct {
		a, b string
		want bool
	}{
		{`{"__type":"Pointer","className":"A","objectId":"x"}`, `{"__type":"Object","className":"A","objectId":"x","n":1}`, true},
		{`{"__type":"Pointer","className":"A","objectId":"x"}`, `{"__type":"Pointer","className":"B","objectId":"x"}`, false},
		{`{"__type":"File","name":"f.png","url":"http://a/f.png"}`, `{"__type":"File","name":"f.png","url":"http://b/f.png"}`, true},
		{`{"__type":"File","name":"f.png"}`, `{"__type":"File","name":"g.png"}`, false},
		{`{"a":[1,{"b":2}]}`, `{"a":[1,{"b":2}]}`, true},
		{`1`, `"1"`, false},
		{`null`, `null`, true},
	}
	for _, c := range cases {
		if got := Equal(decode(t, c.a), decode(t, c.b)); got != c.want {
			t.Errorf("Equal(%s, %s) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

func TestGetPathsAndTimestamps(t *testing.T) {
	obj := decode(t, `{"createdAt":"2024-01-02T03:04:05.678Z","a":{"b":{"c":3}},"s":"x",
		"arr":[{"f":"y"},[5,6],null],"o":{"0":"key","l":[1]}}`).(map[string]any)
	cases := []struct {
		path string
		want string
		ok   bool
	}{
		{"createdAt", `{"__type":"Date","iso":"2024-01-02T03:04:05.678Z"}`, true},
		{"a.b.c", `3`, true},
		{"a.b", `{"c":3}`, true},
		{"a.x", `null`, false},
		{"s.x", `null`, false},
		{"missing", `null`, false},
		// A segment of digits is a position in an array (Parse's queries).
		{"arr.0.f", `"y"`, true},
		{"arr.1.1", `6`, true},
		{"arr.2", `null`, true},
		{"arr.3", `null`, false},
		{"arr.01.0", `5`, true},
		{"arr.-1", `null`, false},
		{"arr.f", `null`, false},
		{"arr.9999999999", `null`, false},
		{"o.0", `"key"`, true},
		{"o.l.0", `1`, true},
	}
	for _, c := range cases {
		got, ok := Get(obj, c.path)
		if ok != c.ok || (ok && !Equal(got, decode(t, c.want))) {
			t.Errorf("Get(%q) = %v, %v; want %s, %v", c.path, got, ok, c.want, c.ok)
		}
	}
}

func TestTypeOfAndValidation(t *testing.T) {
	cases := []struct {
		value string
		typ   Type
		code  int // 0: valid
	}{
		{`"s"`, TypeString, 0},
		{`1`, TypeNumber, 0},
		{`true`, TypeBoolean, 0},
		{`[1]`, TypeArray, 0},
		{`{"a":1}`, TypeObject, 0},
		{`{"__type":"Date","iso":"2024-01-02T03:04:05Z"}`, TypeDate, 0},
		{`{"__type":"Date","iso":"yesterday"}`, "", CodeIncorrectType},
		{`{"__type":"Pointer","className":"A","objectId":"x"}`, TypePointer, 0},
		{`{"__type":"Pointer","className":"1A","objectId":"x"}`, "", CodeInvalidPointer},
		{`{"__type":"GeoPoint","latitude":10,"longitude":20}`, TypeGeoPoint, 0},
		{`{"__type":"GeoPoint","latitude":90,"longitude":20}`, "", CodeInvalidJSON},
		{`{"__type":"GeoPoint","latitude":10,"longitude":-180}`, "", CodeInvalidJSON},
		{`{"__type":"Polygon","coordinates":[[0,0],[0,1],[1,1]]}`, TypePolygon, 0},
		{`{"__type":"Polygon","coordinates":[[0,0],[0,1]]}`, "", CodeInvalidJSON},
		{`{"__type":"Bytes","base64":"aGk="}`, TypeBytes, 0},
		{`{"__type":"Bytes","base64":"%%%"}`, "", CodeIncorrectType},
		{`{"__type":"File","name":"a.txt"}`, TypeFile, 0},
		{`{"__type":"Relation","className":"A"}`, TypeRelation, 0},
		{`{"__type":"Mystery"}`, "", CodeIncorrectType},
	}
	for _, c := range cases {
		f, _, err := TypeOf(decode(t, c.value))
		if c.code != 0 {
			pe, ok := AsError(err)
			if !ok || pe.Code != c.code {
				t.Errorf("TypeOf(%s) error %v, want code %d", c.value, err, c.code)
			}
			continue
		}
		if err != nil || f.Type != c.typ {
			t.Errorf("TypeOf(%s) = %v, %v; want %s", c.value, f, err, c.typ)
		}
	}
	if _, typed, err := TypeOf(nil); typed || err != nil {
		t.Errorf("null must not fix a type")
	}
}

func TestNameRules(t *testing.T) {
	classes := map[string]bool{"GameScore": true, "_User": true, "_Role": true, "_Custom": false, "1abc": false,
		"a-b": false, "": false, "A_b9": true}
	for name, want := range classes {
		if got := ValidClassName(name); got != want {
			t.Errorf("ValidClassName(%q) = %v", name, got)
		}
	}
	keys := map[string]bool{"score": true, "a_b1": true, "_rperm": false, "a$b": false, "a.b": false, "__type": false, "1a": false,
		"é": false, "aé": false, "a\n": false, "Z": true}
	for name, want := range keys {
		if got := ValidKeyName(name); got != want {
			t.Errorf("ValidKeyName(%q) = %v", name, got)
		}
	}
}

// TestIsNameMatchesPattern checks IsName against the regular expressions
// it replaced, over every string of up to three characters drawn from an
// alphabet holding each character class and its neighbours.
func TestIsNameMatchesPattern(t *testing.T) {
	plain := regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*$`)
	dotted := regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.]*$`)
	alphabet := []string{"", "a", "z", "A", "Z", "0", "9", "_", ".", "@", "[", "`", "{", "/", ":", "$", "-", " ", "é"}
	for _, a := range alphabet {
		for _, b := range alphabet {
			for _, c := range alphabet {
				s := a + b + c
				if got, want := IsName(s, false), plain.MatchString(s); got != want {
					t.Errorf("IsName(%q, false) = %v, want %v", s, got, want)
				}
				if got, want := IsName(s, true), dotted.MatchString(s); got != want {
					t.Errorf("IsName(%q, true) = %v, want %v", s, got, want)
				}
			}
		}
	}
}

// BenchmarkGet_Nested3: a three-segment path into objects, and one through
// an array position (what a matcher pays per object for "a.b.c").
func BenchmarkGet_Nested3(b *testing.B) {
	obj := Object{"a": map[string]any{"b": map[string]any{"c": 3.0}}, "l": map[string]any{"r": []any{1.0, map[string]any{"s": 2.0}}}}
	for _, path := range []string{"a.b.c", "l.r.1.s"} {
		b.Run(path, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, ok := Get(obj, path); !ok {
					b.Fatal("missing")
				}
			}
		})
	}
}
