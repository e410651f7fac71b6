package service

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/store"
)

// Analytics events (POST /events/AppOpened, POST /events/<name>).
//
// Events are counted, not logged: each (event name, UTC day, dimensions)
// combination is one object of the internal class _EventCount,
//
//	{objectId, event: "AppOpened", day: "2024-05-01", dimensions: {...}, count: 17}
//
// written through the same store adapter as every object. No client
// reaches the class through /classes; an operator counts events with the
// master key through the aggregate endpoint, e.g. by day:
//
//	GET /aggregate/_EventCount?pipeline=[{"$match":{"event":"AppOpened"}},
//	    {"$group":{"objectId":"$day","total":{"$sum":"$count"}}}]
//
// or by a dimension with {"objectId":"$dimensions.platform"}.
const (
	// AnalyticsClass is the internal class of event counters.
	AnalyticsClass = "_EventCount"
	// MaxEventNameLength caps event names, in characters.
	MaxEventNameLength = 128
	// MaxEventDimensions caps the dimensions of one event (Parse's eight).
	MaxEventDimensions = 8
	// MaxDimensionLength caps a dimension's key and value, in characters.
	MaxDimensionLength = 256
)

// ValidEventName reports whether name may name an event: 1 to 128
// letters, digits, spaces and _ - . :, starting with a letter or digit.
func ValidEventName(name string) bool {
	n := utf8.RuneCountInString(name)
	if n == 0 || n > MaxEventNameLength || !utf8.ValidString(name) {
		return false
	}
	for i, r := range name {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
		case i > 0 && strings.ContainsRune(" _-.:", r):
		default:
			return false
		}
	}
	return true
}

// TrackEvent counts one event. body may hold dimensions (an object of
// strings) and at (a Date or an ISO timestamp; now when absent).
func (s *Service) TrackEvent(auth Auth, name string, body map[string]any) error {
	if auth.ReadOnly {
		return schema.Errorf(schema.CodeOperationForbidden, "read-only masterKey isn't allowed to track events.")
	}
	if !ValidEventName(name) {
		return schema.Errorf(schema.CodeInvalidEventName,
			"Invalid event name: %q. Event names are 1 to %d letters, digits, spaces and _-.: starting with a letter or digit.",
			name, MaxEventNameLength)
	}
	dims := map[string]any{}
	if raw, ok := body["dimensions"]; ok && raw != nil {
		m, ok := raw.(map[string]any)
		if !ok {
			return schema.Errorf(schema.CodeInvalidJSON, "dimensions must be an object of strings")
		}
		if len(m) > MaxEventDimensions {
			return schema.Errorf(schema.CodeInvalidJSON, "an event has at most %d dimensions", MaxEventDimensions)
		}
		for k, v := range m {
			sv, ok := v.(string)
			if !ok {
				return schema.Errorf(schema.CodeInvalidJSON, "dimension %q must be a string", k)
			}
			if k == "" || strings.ContainsAny(k, ".$") || prohibitedKeys[k] ||
				utf8.RuneCountInString(k) > MaxDimensionLength || utf8.RuneCountInString(sv) > MaxDimensionLength {
				return schema.Errorf(schema.CodeInvalidJSON,
					"invalid dimension %q: keys are non-empty without '.' or '$', keys and values at most %d characters", k, MaxDimensionLength)
			}
			dims[k] = sv
		}
	}
	at := s.opts.Now().UTC()
	if raw, ok := body["at"]; ok && raw != nil {
		var iso string
		switch x := raw.(type) {
		case string:
			iso = x
		case map[string]any:
			if x["__type"] == "Date" {
				iso, _ = x["iso"].(string)
			}
		}
		t, ok := schema.ParseTime(iso)
		if !ok {
			return schema.Errorf(schema.CodeInvalidJSON, "at must be a Date")
		}
		at = t.UTC()
	}
	day := at.Format("2006-01-02")
	id := eventCounterID(name, day, dims)

	unlock := s.lockObjects([]string{AnalyticsClass + "\x00" + id})
	defer unlock()
	coll := s.data.Collection(AnalyticsClass, true)
	now := schema.FormatTime(s.opts.Now())
	obj := schema.Object{"objectId": id, "event": name, "day": day, "dimensions": dims, "count": 1.0,
		"createdAt": now, "updatedAt": now}
	if cur, ok := coll.Get(id); ok {
		n, _ := cur["count"].(float64)
		obj["count"] = n + 1
		obj["createdAt"] = cur["createdAt"]
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	if err := s.store.Commit([]store.Record{{Kind: store.KindObject, Class: AnalyticsClass, Key: id, Value: b}}); err != nil {
		return fmt.Errorf("analytics: %w", err)
	}
	coll.Put(obj)
	return nil
}

// eventCounterID names the counter of one (name, day, dimensions): a hash
// of their canonical JSON, so equal events share one counter.
func eventCounterID(name, day string, dims map[string]any) string {
	keys := make([]string, 0, len(dims))
	for k := range dims {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	canon := []any{name, day}
	for _, k := range keys {
		canon = append(canon, k, dims[k])
	}
	b, _ := json.Marshal(canon) // strings only: cannot fail
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:10])
}
