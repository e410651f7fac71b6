package ratelimit

import (
	"context"
	"fmt"
	"hash/maphash"
	"net/url"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// shards is how many independently locked parts the memory store has:
// requests from different addresses rarely wait for one another.
const shards = 64

// sweepEvery is how many counts a shard takes between sweeps of its ended
// windows, so that addresses seen once do not stay forever. A sweep walks
// one shard (a 64th of the windows) under that shard's lock only; across
// the store that is one 64th of the windows every 64 counts, the work the
// whole-map sweep every 4,096 counts did, in pauses 64 times shorter.
const sweepEvery = 64

// memory keeps fixed-window counters in this process, in shards chosen by
// a hash of the key. A key always lands in the same shard, whose lock
// covers its whole count, so counts stay exact.
type memory struct {
	now    func() time.Time
	seed   maphash.Seed
	shards [shards]shard
}

type shard struct {
	mu    sync.Mutex
	win   map[string]*window
	calls int
}

type window struct {
	end time.Time
	n   int64
}

func newMemory(now func() time.Time) *memory {
	m := &memory{now: now, seed: maphash.MakeSeed()}
	for i := range m.shards {
		m.shards[i].win = map[string]*window{}
	}
	return m
}

// shardOf returns the index of key's shard.
func (m *memory) shardOf(key string) int {
	return int(maphash.String(m.seed, key) % shards)
}

// incr counts one request under key and returns the window's count.
func (m *memory) incr(key string, d time.Duration) int64 {
	now := m.now()
	sh := &m.shards[m.shardOf(key)]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	sh.calls++
	if sh.calls%sweepEvery == 0 {
		for k, w := range sh.win {
			if !now.Before(w.end) {
				delete(sh.win, k)
			}
		}
	}
	w := sh.win[key]
	if w == nil || !now.Before(w.end) {
		w = &window{end: now.Add(d)}
		sh.win[key] = w
	}
	w.n++
	return w.n
}

// size returns how many windows the store holds (for tests).
func (m *memory) size() int {
	n := 0
	for i := range m.shards {
		sh := &m.shards[i]
		sh.mu.Lock()
		n += len(sh.win)
		sh.mu.Unlock()
	}
	return n
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
