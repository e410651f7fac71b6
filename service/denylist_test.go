package service

import (
	"encoding/json"
	"testing"
)

func TestDenylistRules(t *testing.T) {
	cases := []struct {
		name  string
		list  []DeniedKeyword
		data  any
		wants bool
	}{
		{"default: constructor deep in an array", nil, map[string]any{"a": []any{map[string]any{"b": map[string]any{"constructor": 1}}}}, true},
		{"default: _bsontype Code", nil, map[string]any{"x": map[string]any{"_bsontype": "Code"}}, true},
		{"default: _bsontype other", nil, map[string]any{"x": map[string]any{"_bsontype": "Long"}}, false},
		{"default: a plain object", nil, map[string]any{"title": "constructor", "n": 1.0}, false},
		{"key regexp unanchored", []DeniedKeyword{{Key: "sec.et", HasKey: true}}, map[string]any{"mysecret": 1}, true},
		{"key regexp anchored", []DeniedKeyword{{Key: "^secret$", HasKey: true}}, map[string]any{"mysecret": 1}, false},
		{"value alone in an array", []DeniedKeyword{{Value: "DROP", HasValue: true}}, map[string]any{"a": []any{"x DROP y"}}, true},
		{"number value equal", []DeniedKeyword{{Value: json.Number("7"), HasValue: true}}, map[string]any{"n": 7.0}, true},
		{"number value different", []DeniedKeyword{{Value: json.Number("7"), HasValue: true}}, map[string]any{"n": 8.0}, false},
		{"key and value both needed", []DeniedKeyword{{Key: "k", HasKey: true, Value: "v", HasValue: true}}, map[string]any{"k": "w", "x": "v"}, false},
		{"file metadata", nil, map[string]string{"__proto__": "x"}, true},
		{"empty list", []DeniedKeyword{}, map[string]any{"constructor": 1}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			list := c.list
			if list == nil {
				list = DefaultDenylist
			}
			rules, err := compileDenylist(list)
			if err != nil {
				t.Fatal(err)
			}
			s := &Service{denylist: rules}
			if got := s.checkDenylist(c.data) != nil; got != c.wants {
				t.Errorf("denied %v, want %v", got, c.wants)
			}
		})
	}
}

// BenchmarkDenylist_Default_Object12 is the scan every write pays with
// Parse's default list: an object of 12 keys, one nested object and one
// array.
func BenchmarkDenylist_Default_Object12(b *testing.B) {
	rules, _ := compileDenylist(DefaultDenylist)
	s := &Service{denylist: rules}
	body := map[string]any{"title": "a", "score": 1.0, "tags": []any{"x", "y", "z"}, "owner": map[string]any{"__type": "Pointer", "className": "_User", "objectId": "abc"},
		"a": 1.0, "b": 2.0, "c": "three", "d": true, "e": nil, "f": "six", "g": 7.0, "h": "eight"}
	b.ReportAllocs()
	for b.Loop() {
		if s.checkDenylist(body) != nil {
			b.Fatal("denied")
		}
	}
}
