package config

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// RateLimitOptions is one entry of the rateLimit option (a JSON array of
// objects, or one object).
type RateLimitOptions struct {
	// RequestPath is the path below the mount path to limit: "*" any
	// characters, ":name" one segment; "*" alone is every path.
	RequestPath string
	// RequestMethods are the methods limited; empty is every method.
	RequestMethods []string
	// RequestTimeWindow is the window in milliseconds.
	RequestTimeWindow int
	// RequestCount is the requests one client address may make per window.
	RequestCount int
	// ErrorResponseMessage is the message of the 429 reply.
	ErrorResponseMessage string
	// IncludeInternalRequests also counts requests made by cloud code.
	IncludeInternalRequests bool
	// IncludeMasterKey also counts master-key requests.
	IncludeMasterKey bool
	// RedisURL keeps the counters in Redis, shared by instances.
	RedisURL string
}

// asRateLimits reads rateLimit: JSON text, an array of objects or one object.
func asRateLimits(raw any) ([]RateLimitOptions, error) {
	if s, ok := raw.(string); ok {
		v, err := decodeJSON([]byte(s))
		if err != nil {
			return nil, fmt.Errorf("want JSON: %w", err)
		}
		raw = v
	}
	if m, ok := raw.(map[string]any); ok {
		raw = []any{m}
	}
	list, ok := raw.([]any)
	if !ok {
		return nil, fmt.Errorf("want an array of objects, got %s", jsonType(raw))
	}
	out := make([]RateLimitOptions, 0, len(list))
	for i, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("item %d: want an object, got %s", i, jsonType(e))
		}
		r, err := asRateLimit(m)
		if err != nil {
			return nil, fmt.Errorf("item %d: %w", i, err)
		}
		out = append(out, r)
	}
	return out, nil
}

func asRateLimit(m map[string]any) (RateLimitOptions, error) {
	var r RateLimitOptions
	var errs []error
	field := func(name string, err error) {
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
	}
	for k, v := range m {
		var err error
		switch k {
		case "requestPath":
			r.RequestPath, err = asString(v)
		case "requestMethods":
			if s, ok := v.(string); ok {
				v = []any{s}
			}
			r.RequestMethods, err = asList(v)
		case "requestTimeWindow":
			r.RequestTimeWindow, err = asInt(v)
		case "requestCount":
			r.RequestCount, err = asInt(v)
		case "errorResponseMessage":
			r.ErrorResponseMessage, err = asString(v)
		case "includeInternalRequests":
			r.IncludeInternalRequests, err = asBool(v)
		case "includeMasterKey":
			r.IncludeMasterKey, err = asBool(v)
		case "redisUrl":
			r.RedisURL, err = asString(v)
		default:
			err = errors.New("unknown key")
		}
		field(k, err)
	}
	return r, errors.Join(errs...)
}

// validateRateLimits checks what asRateLimits could not: presence and range.
func validateRateLimits(list []RateLimitOptions) error {
	var errs []error
	for i, r := range list {
		if strings.TrimSpace(r.RequestPath) == "" {
			errs = append(errs, fmt.Errorf("item %d: requestPath is missing", i))
		}
		if r.RequestTimeWindow <= 0 {
			errs = append(errs, fmt.Errorf("item %d: requestTimeWindow must be a positive number of milliseconds", i))
		}
		if r.RequestCount <= 0 {
			errs = append(errs, fmt.Errorf("item %d: requestCount must be a positive number", i))
		}
		for _, m := range r.RequestMethods {
			switch strings.ToUpper(m) {
			case "GET", "POST", "PUT", "DELETE":
			default:
				errs = append(errs, fmt.Errorf("item %d: requestMethods: %q is not GET, POST, PUT or DELETE", i, m))
			}
		}
		if r.RedisURL != "" {
			u, err := url.Parse(r.RedisURL)
			if err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") {
				errs = append(errs, fmt.Errorf("item %d: redisUrl: want a redis:// or rediss:// URL", i))
			}
		}
	}
	return errors.Join(errs...)
}
