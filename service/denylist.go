package service

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/quarrydata/quarry/schema"
)

// DeniedKeyword is one requestKeywordDenylist entry. Written data may hold
// no key matching Key (a regular expression, unanchored as in Parse
// Server) whose value matches Value; an entry with only one of them
// refuses any key, or any value, that matches it. A string Value is a
// regular expression for string values; any other Value must equal.
type DeniedKeyword struct {
	Key      string
	HasKey   bool
	Value    any
	HasValue bool
}

// DefaultDenylist is Parse Server's default requestKeywordDenylist: BSON
// code injection and the keys that reach JavaScript prototypes.
var DefaultDenylist = []DeniedKeyword{
	{Key: "_bsontype", HasKey: true, Value: "Code", HasValue: true},
	{Key: "constructor", HasKey: true},
	{Key: "__proto__", HasKey: true},
}

// keywordRule is a DeniedKeyword compiled once; its error is made once.
type keywordRule struct {
	key, value           func(string) bool // nil: any
	hasValue, valueIsStr bool
	equal                any
	err                  error
}

// compileDenylist compiles the entries; a pattern without regular
// expression syntax is a substring test.
func compileDenylist(list []DeniedKeyword) ([]keywordRule, error) {
	rules := make([]keywordRule, 0, len(list))
	for _, d := range list {
		r := keywordRule{hasValue: d.HasValue}
		shown := map[string]any{}
		if d.HasKey {
			m, err := pattern(d.Key)
			if err != nil {
				return nil, fmt.Errorf("requestKeywordDenylist: key %q: %w", d.Key, err)
			}
			r.key, shown["key"] = m, d.Key
		}
		if d.HasValue {
			shown["value"] = d.Value
			if s, ok := d.Value.(string); ok {
				m, err := pattern(s)
				if err != nil {
					return nil, fmt.Errorf("requestKeywordDenylist: value %q: %w", s, err)
				}
				r.value, r.valueIsStr = m, true
			} else {
				r.equal = d.Value
			}
		}
		// Parse's message shows the entry as JSON: {"key":"constructor"}.
		text, _ := json.Marshal(shown)
		r.err = schema.Errorf(schema.CodeInvalidKeyName, "Prohibited keyword in request data: %s.", text)
		rules = append(rules, r)
	}
	return rules, nil
}

func pattern(p string) (func(string) bool, error) {
	if regexp.QuoteMeta(p) == p {
		return func(s string) bool { return strings.Contains(s, p) }, nil
	}
	re, err := regexp.Compile(p)
	if err != nil {
		return nil, err
	}
	return re.MatchString, nil
}

// valueMatches reports whether v matches the rule's value.
func (r *keywordRule) valueMatches(v any) bool {
	if r.valueIsStr {
		s, ok := v.(string)
		return ok && r.value(s)
	}
	switch e := r.equal.(type) {
	case json.Number:
		f, err := e.Float64()
		return err == nil && numberEquals(v, f)
	case float64:
		return numberEquals(v, e)
	case bool, nil:
		return v == e
	}
	return false
}

func numberEquals(v any, f float64) bool {
	switch x := v.(type) {
	case float64:
		return x == f
	case json.Number:
		g, err := x.Float64()
		return err == nil && g == f
	case int:
		return float64(x) == f
	case int64:
		return float64(x) == f
	}
	return false
}

// checkDenylist deep-scans written data (objects and arrays, at any depth)
// for the first denylist entry it holds, and refuses it with 105.
func (s *Service) checkDenylist(data any) error {
	for i := range s.denylist {
		if s.denylist[i].holds(data) {
			return s.denylist[i].err
		}
	}
	return nil
}

// holds reports whether data holds a key/value pair the rule refuses.
func (r *keywordRule) holds(data any) bool {
	switch x := data.(type) {
	case map[string]any:
		for k, v := range x {
			keyHit := r.key != nil && r.key(k)
			switch {
			case r.key != nil && !r.hasValue && keyHit,
				r.key == nil && r.hasValue && r.valueMatches(v),
				keyHit && r.hasValue && r.valueMatches(v):
				return true
			}
			if r.holds(v) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if r.key == nil && r.hasValue && r.valueMatches(e) {
				return true
			}
			if r.holds(e) {
				return true
			}
		}
	case map[string]string: // file metadata and tags
		for k, v := range x {
			if r.holds(map[string]any{k: v}) {
				return true
			}
		}
	}
	return false
}
