package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadCacheAdapter(t *testing.T) {
	file := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(file, []byte(`{"appId": "a", "cacheAdapter": {"module": "RedisCacheAdapter", "options": {"url": "redis://10.0.0.5:6379/2", "ttl": 5000}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		args    []string
		want    CacheAdapterOptions
		wantErr string
	}{
		{"none", nil, CacheAdapterOptions{}, ""},
		{"a URL", []string{"--cacheAdapter", "redis://127.0.0.1:6379/1"}, CacheAdapterOptions{URL: "redis://127.0.0.1:6379/1"}, ""},
		{"JSON text", []string{"--cacheAdapter", `{"module": "redis", "options": {"url": "rediss://h:6380", "prefix": "p:"}}`},
			CacheAdapterOptions{URL: "rediss://h:6380", Prefix: "p:"}, ""},
		{"a config file in Parse Server's shape", []string{file}, CacheAdapterOptions{URL: "redis://10.0.0.5:6379/2", TTL: 5000}, ""},
		{"not redis", []string{"--cacheAdapter", "memcached://h:11211"}, CacheAdapterOptions{}, "want a redis:// or rediss:// URL"},
		{"another module", []string{"--cacheAdapter", `{"module": "InMemoryCacheAdapter"}`}, CacheAdapterOptions{}, `module "InMemoryCacheAdapter"`},
		{"unknown option", []string{"--cacheAdapter", `{"module": "redis", "options": {"url": "redis://h", "host": "h"}}`}, CacheAdapterOptions{}, "options.host: unknown option"},
		{"negative ttl", []string{"--cacheAdapter", `{"options": {"url": "redis://h", "ttl": -1}}`}, CacheAdapterOptions{}, "ttl must not be negative"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o, _, err := Load(c.args, nil)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if o.CacheAdapter != c.want {
				t.Fatalf("got %+v, want %+v", o.CacheAdapter, c.want)
			}
		})
	}
}
