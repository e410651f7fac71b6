package config

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// CacheAdapterOptions is cacheAdapter: the shared cache of session, role
// and schema lookups (package cache). Its zero value is no shared cache.
type CacheAdapterOptions struct {
	// URL is the Redis URL (redis:// or rediss://, database included).
	URL string
	// Prefix is put before every key and the invalidation channel; empty
	// means "quarry:cache:<appId>:".
	Prefix string
	// TTL is the lifetime of session and role entries in milliseconds (0:
	// 30000, as Parse Server's RedisCacheAdapter).
	TTL int
}

// cacheModules are the module names cacheAdapter's object form accepts:
// Quarry's, and Parse Server's adapter's so its config files start.
var cacheModules = map[string]bool{"redis": true, "RedisCacheAdapter": true}

// asCacheAdapter reads cacheAdapter: a Redis URL, or the object
// {"module": "redis", "options": {"url": ..., "prefix": ..., "ttl": ms}}
// (also as JSON text).
func asCacheAdapter(raw any) (CacheAdapterOptions, error) {
	if s, ok := raw.(string); ok {
		if !strings.HasPrefix(strings.TrimSpace(s), "{") {
			return CacheAdapterOptions{URL: s}, nil
		}
	}
	m, err := asObject(raw)
	if err != nil {
		return CacheAdapterOptions{}, fmt.Errorf(`want a Redis URL or {"module": "redis", "options": {"url": ...}}: %w`, err)
	}
	var c CacheAdapterOptions
	for k, v := range m {
		switch k {
		case "module":
			name, err := asString(v)
			if err != nil {
				return c, fmt.Errorf("module: %w", err)
			}
			if !cacheModules[name] {
				return c, fmt.Errorf(`module %q: Quarry's cache adapter is "redis"`, name)
			}
		case "options":
			opts, err := asObject(v)
			if err != nil {
				return c, fmt.Errorf("options: %w", err)
			}
			if err := c.setOptions(opts); err != nil {
				return c, err
			}
		default:
			return c, fmt.Errorf("unknown key %q (want module and options)", k)
		}
	}
	return c, nil
}

func (c *CacheAdapterOptions) setOptions(opts map[string]any) error {
	for k, v := range opts {
		var err error
		switch k {
		case "url", "redisURL":
			c.URL, err = asString(v)
		case "prefix":
			c.Prefix, err = asString(v)
		case "ttl":
			c.TTL, err = asInt(v)
		default:
			err = errors.New("unknown option (want url, prefix or ttl)")
		}
		if err != nil {
			return fmt.Errorf("options.%s: %w", k, err)
		}
	}
	return nil
}

// checkCacheAdapter validates cacheAdapter.
func checkCacheAdapter(c CacheAdapterOptions) error {
	if c == (CacheAdapterOptions{}) {
		return nil
	}
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") || u.Host == "" {
		return fmt.Errorf("want a redis:// or rediss:// URL, got %q", c.URL)
	}
	if c.TTL < 0 {
		return errors.New("ttl must not be negative")
	}
	return nil
}
