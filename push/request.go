package push

import (
	"math"
	"strings"
	"time"

	"github.com/quarrydata/quarry/schema"
)

// Data is a push payload: alert, badge (a number or "Increment"), sound,
// content-available, category, uri, title and any custom keys, which pass
// through to the adapters unchanged.
type Data map[string]any

// BadgeIncrement is the badge value that adds one to each installation's.
const BadgeIncrement = "Increment"

// MaxExpirationInterval bounds expiration_interval (four weeks, as delivery
// services keep messages no longer).
const MaxExpirationInterval = 28 * 24 * 3600

// ParseData validates a request's data object.
func ParseData(v any) (Data, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, schema.Errorf(schema.CodePushMisconfigured, "A push needs a \"data\" object.")
	}
	for k, v := range m {
		if err := checkDataKey(k, v); err != nil {
			return nil, err
		}
	}
	return Data(m), nil
}

func checkDataKey(k string, v any) error {
	bad := func(want string) error {
		return schema.Errorf(schema.CodeInvalidJSON, "push data: %s must be %s", k, want)
	}
	field := k
	if isLocalizedKey(k) {
		field, _, _ = strings.Cut(k, "-") // "alert-fr" is checked as an alert
	}
	switch field {
	case "badge":
		if s, isStr := v.(string); isStr {
			if s != BadgeIncrement {
				return bad(`a number or "Increment"`)
			}
			return nil
		}
		if _, ok := wholeNumber(v); !ok {
			return bad(`a number or "Increment"`)
		}
	case "content-available", "mutable-content":
		if n, ok := wholeNumber(v); !ok || (n != 0 && n != 1) {
			return bad("0 or 1")
		}
	case "alert":
		switch v.(type) {
		case string, map[string]any:
		default:
			return bad("a string or an object")
		}
	case "sound", "category", "uri", "title":
		if _, ok := v.(string); !ok {
			return bad("a string")
		}
	}
	return nil
}

func wholeNumber(v any) (int64, bool) {
	f, ok := v.(float64)
	if !ok {
		switch i := v.(type) {
		case int:
			return int64(i), true
		case int64:
			return i, true
		}
		return 0, false
	}
	if f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, false
	}
	return int64(f), true
}

// Times are a push request's schedule and expiry.
type Times struct {
	// PushTime is when to send; Scheduled says it is in the future.
	PushTime  time.Time
	Scheduled bool
	// Expiry is when the push expires (zero: never); Interval is
	// expiration_interval in seconds when that was how it was given.
	Expiry   time.Time
	Interval int64
}

// ParseTimes validates push_time, expiration_time and expiration_interval
// against now: a bad value, both expiration forms, or an expiry not after
// the push time are refused with 152.
func ParseTimes(body map[string]any, now time.Time) (Times, error) {
	t := Times{PushTime: now}
	if v, ok := body["push_time"]; ok && v != nil {
		pt, err := parseTime("push_time", v)
		if err != nil {
			return Times{}, err
		}
		if pt.After(now) {
			t.PushTime, t.Scheduled = pt, true
		}
	}
	exp, hasExp := body["expiration_time"]
	iv, hasIv := body["expiration_interval"]
	hasExp, hasIv = hasExp && exp != nil, hasIv && iv != nil
	switch {
	case hasExp && hasIv:
		return Times{}, schema.Errorf(schema.CodeInvalidPushTime, "Both expiration_time and expiration_interval cannot be set.")
	case hasExp:
		e, err := parseTime("expiration_time", exp)
		if err != nil {
			return Times{}, err
		}
		if !e.After(t.PushTime) {
			return Times{}, schema.Errorf(schema.CodeInvalidPushTime, "expiration_time must be after push_time (or now).")
		}
		t.Expiry = e
	case hasIv:
		n, ok := wholeNumber(iv)
		if !ok || n <= 0 || n > MaxExpirationInterval {
			return Times{}, schema.Errorf(schema.CodeInvalidPushTime,
				"expiration_interval must be a whole number of seconds between 1 and %d.", MaxExpirationInterval)
		}
		t.Interval, t.Expiry = n, t.PushTime.Add(time.Duration(n)*time.Second)
	}
	return t, nil
}

// parseTime reads an ISO 8601 string, a {"__type": "Date"} object or Unix
// seconds.
func parseTime(name string, v any) (time.Time, error) {
	bad := schema.Errorf(schema.CodeInvalidPushTime, "%s must be an ISO 8601 date or Unix seconds.", name)
	switch x := v.(type) {
	case string:
		return parseISO(x, bad)
	case map[string]any:
		if x["__type"] != "Date" {
			return time.Time{}, bad
		}
		s, _ := x["iso"].(string)
		return parseISO(s, bad)
	case float64:
		if math.IsNaN(x) || x <= 0 || x > 1<<40 {
			return time.Time{}, bad
		}
		sec, frac := math.Modf(x)
		return time.Unix(int64(sec), int64(frac*1e9)).UTC(), nil
	}
	return time.Time{}, bad
}

func parseISO(s string, bad error) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, bad
}
