package ratelimit

import (
	"context"
	"fmt"
	"net/url"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// sweepEvery is how many counts the memory store takes between sweeps of
// its ended windows, so that addresses seen once do not stay forever.
const sweepEvery = 4096

// memory keeps fixed-window counters in this process.
type memory struct {
	now   func() time.Time
	mu    sync.Mutex
	win   map[string]*window
	calls int
}

type window struct {
	end time.Time
	n   int64
}

func newMemory(now func() time.Time) *memory {
	return &memory{now: now, win: map[string]*window{}}
}

// incr counts one request under key and returns the window's count.
func (m *memory) incr(key string, d time.Duration) int64 {
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls++
	if m.calls%sweepEvery == 0 {
		for k, w := range m.win {
			if !now.Before(w.end) {
				delete(m.win, k)
			}
		}
	}
	w := m.win[key]
	if w == nil || !now.Before(w.end) {
		w = &window{end: now.Add(d)}
		m.win[key] = w
	}
	w.n++
	return w.n
}

// redisStore keeps the counters in Redis: one key per rule and address,
// created with the window as its expiry.
type redisStore struct{ client *redis.Client }

// incrScript counts and, on a window's first count, sets its expiry, in
// one round trip that no other instance can split.
var incrScript = redis.NewScript(`local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return n`)

func openRedis(raw string) (*redisStore, error) {
	ro, err := redis.ParseURL(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: redisUrl %s: %v", errBadRule, redact(raw), err)
	}
	ro.DisableIdentity = true
	return &redisStore{client: redis.NewClient(ro)}, nil
}

func (s *redisStore) incr(ctx context.Context, key string, d time.Duration) (int64, error) {
	return incrScript.Run(ctx, s.client, []string{key}, d.Milliseconds()).Int64()
}

func redact(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparseable URL)"
	}
	return u.Redacted()
}
