package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// set stores raw into o's field for opt. raw is a string (flags and
// environment) or a value decoded from JSON with UseNumber (config file).
func set(o *Options, opt *option, raw any) error {
	switch p := opt.field(o).(type) {
	case *string:
		v, err := asString(raw)
		if err != nil {
			return err
		}
		*p = v
	case *int:
		v, err := asInt(raw)
		if err != nil {
			return err
		}
		*p = v
	case *bool:
		v, err := asBool(raw)
		if err != nil {
			return err
		}
		*p = v
	case *[]string:
		v, err := asList(raw)
		if err != nil {
			return err
		}
		*p = v
	case *int64:
		v, err := asSize(raw)
		if err != nil {
			return err
		}
		*p = v
	case *[]map[string]any:
		v, err := asObjects(raw)
		if err != nil {
			return err
		}
		*p = v
	case *map[string]any:
		v, err := asObject(raw)
		if err != nil {
			return err
		}
		*p = v
	case *time.Duration:
		v, err := asInt(raw)
		if err != nil {
			return err
		}
		if v < 0 || int64(v) > math.MaxInt64/int64(time.Second) {
			return fmt.Errorf("%d seconds is out of range", v)
		}
		*p = time.Duration(v) * time.Second
	case *[]RateLimitOptions:
		v, err := asRateLimits(raw)
		if err != nil {
			return err
		}
		*p = v
	case *TrustProxy:
		v, err := asTrustProxy(raw)
		if err != nil {
			return err
		}
		*p = v
	case *CacheAdapterOptions:
		v, err := asCacheAdapter(raw)
		if err != nil {
			return err
		}
		*p = v
	default:
		return fmt.Errorf("option %s cannot be set directly", opt.name)
	}
	return nil
}

func asString(raw any) (string, error) {
	switch v := raw.(type) {
	case string:
		return v, nil
	case json.Number:
		return v.String(), nil
	}
	return "", fmt.Errorf("want a string, got %s", jsonType(raw))
}

func asInt(raw any) (int, error) {
	var s string
	switch v := raw.(type) {
	case string:
		s = strings.TrimSpace(v)
	case json.Number:
		s = v.String()
	default:
		return 0, fmt.Errorf("want an integer, got %s", jsonType(raw))
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("want an integer, got %q", s)
	}
	return n, nil
}

func asBool(raw any) (bool, error) {
	switch v := raw.(type) {
	case bool:
		return v, nil
	case string:
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			return false, fmt.Errorf("want true or false, got %q", v)
		}
		return b, nil
	}
	return false, fmt.Errorf("want true or false, got %s", jsonType(raw))
}

// asList accepts a JSON array of strings or a comma-separated string.
// Blank entries are dropped, so "" is the empty list.
func asList(raw any) ([]string, error) {
	var items []string
	switch v := raw.(type) {
	case string:
		items = strings.Split(v, ",")
	case []any:
		for i, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("want a list of strings, item %d is %s", i, jsonType(e))
			}
			items = append(items, s)
		}
	default:
		return nil, fmt.Errorf("want a list of strings, got %s", jsonType(raw))
	}
	list := []string{}
	for _, s := range items {
		if s = strings.TrimSpace(s); s != "" {
			list = append(list, s)
		}
	}
	return list, nil
}

// asObjects accepts one object or an array of objects, decoded or as
// JSON text (a flag or variable).
func asObjects(raw any) ([]map[string]any, error) {
	if s, ok := raw.(string); ok {
		v, err := decodeJSON([]byte(s))
		if err != nil {
			return nil, fmt.Errorf("want a JSON object or array of objects: %w", err)
		}
		raw = v
	}
	switch v := raw.(type) {
	case map[string]any:
		return []map[string]any{v}, nil
	case []any:
		out := make([]map[string]any, 0, len(v))
		for i, e := range v {
			obj, ok := e.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("want an array of objects, item %d is %s", i, jsonType(e))
			}
			out = append(out, obj)
		}
		return out, nil
	}
	return nil, fmt.Errorf("want an object or an array of objects, got %s", jsonType(raw))
}

func asSize(raw any) (int64, error) {
	switch v := raw.(type) {
	case string:
		return ParseSize(v)
	case json.Number:
		return ParseSize(v.String())
	}
	return 0, fmt.Errorf("want a size such as 10mb, got %s", jsonType(raw))
}

// jsonType names the JSON type of a decoded value for error messages.
func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case json.Number, float64:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// ErrInvalidSize is returned by ParseSize for text that is not a size.
var ErrInvalidSize = errors.New("invalid size")

var sizeUnits = map[string]int64{
	"": 1, "b": 1,
	"k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10,
	"m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20,
	"g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30,
	"t": 1 << 40, "tb": 1 << 40, "tib": 1 << 40,
}

// ParseSize reads a byte count the way Parse Server reads maxUploadSize: a
// plain number of bytes ("1048576") or a number with a unit b, kb, mb, gb or
// tb, any case, optionally spaced ("20mb", "10 MB", "1.5gb"). Units are
// powers of 1024; fractions of a byte are dropped. Negative numbers, unknown
// units and overflow are errors wrapping ErrInvalidSize.
func ParseSize(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	num, unit := t[:i], strings.TrimSpace(t[i:])
	mult, ok := sizeUnits[unit]
	if num == "" || !ok {
		return 0, fmt.Errorf("%w %q (want bytes or a number with kb, mb or gb, e.g. 20mb)", ErrInvalidSize, s)
	}
	if strings.Contains(num, ".") {
		f, err := strconv.ParseFloat(num, 64)
		if err != nil {
			return 0, fmt.Errorf("%w %q", ErrInvalidSize, s)
		}
		v := f * float64(mult)
		if v >= math.MaxInt64 {
			return 0, fmt.Errorf("%w %q: too large", ErrInvalidSize, s)
		}
		return int64(v), nil
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n > math.MaxInt64/mult {
		return 0, fmt.Errorf("%w %q: too large", ErrInvalidSize, s)
	}
	return n * mult, nil
}

// FormatSize writes n bytes in the largest unit that divides it exactly
// ("10mb", "512kb", "1000"), a form ParseSize reads back.
func FormatSize(n int64) string {
	for _, u := range []struct {
		name string
		size int64
	}{{"tb", 1 << 40}, {"gb", 1 << 30}, {"mb", 1 << 20}, {"kb", 1 << 10}} {
		if n != 0 && n%u.size == 0 {
			return strconv.FormatInt(n/u.size, 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10)
}
