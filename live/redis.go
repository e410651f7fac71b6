package live

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quarrydata/quarry/schema"
)

// Redis channels. Parse Server's layout: the channel name is the prefix
// (the application id) immediately followed by the suffix, and each
// message is one JSON object:
//
//	<appId>afterSave    {"currentParseObject": {…}, "originalParseObject": {…}?, "classLevelPermissions": {…}?}
//	<appId>afterDelete  {"currentParseObject": {…}, "classLevelPermissions": {…}?}
//	<appId>clearCache   {"userId": "<objectId>"}, or Quarry's {"all": true}
//
// Objects are Parse's full JSON (REST fields plus className and
// "__type": "Object"); originalParseObject is absent on a create.
// clearCache is sent on writes to _Session (that user) and _Role (all).
const (
	ChannelAfterSave   = "afterSave"
	ChannelAfterDelete = "afterDelete"
	ChannelClearCache  = "clearCache"
)

// Redis limits.
const (
	// RedisPublishQueue is the number of changes waiting to be published;
	// past it (Redis unreachable or too slow) changes are dropped and
	// counted, since the writes they describe are already committed.
	RedisPublishQueue = 16384
	// redisBatch is the most messages sent in one pipeline.
	redisBatch = 256
)

// RedisOptions configure a Redis feed.
type RedisOptions struct {
	URL string // redis:// or rediss://
	// Prefix starts every channel name: the application id.
	Prefix string
	Logger *slog.Logger
}

// Redis carries changes between Quarry instances. As a Feed it publishes
// (REST side); Subscribe delivers what every instance publishes to a
// local LiveQuery server (LiveQuery side).
type Redis struct {
	client  *redis.Client
	prefix  string
	log     *slog.Logger
	out     chan redisOut
	done    chan struct{}
	closing sync.Once
	wg      sync.WaitGroup
	dropped atomic.Uint64
	lastErr atomic.Int64 // unix nanos of the last logged publish error

	mu   sync.Mutex
	subs []*redis.PubSub
}

type redisOut struct {
	change *Change
	forget *string
}

// OpenRedis connects to Redis and checks it answers.
func OpenRedis(opts RedisOptions) (*Redis, error) {
	ro, err := redis.ParseURL(opts.URL)
	if err != nil {
		return nil, fmt.Errorf("redisURL: %w", err)
	}
	ro.DisableIdentity = true
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	r := &Redis{client: redis.NewClient(ro), prefix: opts.Prefix, log: opts.Logger,
		out: make(chan redisOut, RedisPublishQueue), done: make(chan struct{})}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := r.client.Ping(ctx).Err(); err != nil {
		r.client.Close()
		return nil, fmt.Errorf("redis at %s: %w", redactURL(opts.URL), err)
	}
	r.wg.Add(1)
	go r.publishLoop()
	return r, nil
}

func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparseable URL)"
	}
	return u.Redacted()
}

// Channel is the full name of a channel (prefix + suffix).
func (r *Redis) Channel(suffix string) string { return r.prefix + suffix }

// Publish queues a change for Redis (Feed). Changes leave in order.
func (r *Redis) Publish(c Change) { r.enqueue(redisOut{change: &c}) }

// ForgetSessions publishes a clearCache message (Feed).
func (r *Redis) ForgetSessions(userID string) { r.enqueue(redisOut{forget: &userID}) }

// Dropped counts changes dropped because the publish queue was full.
func (r *Redis) Dropped() uint64 { return r.dropped.Load() }

func (r *Redis) enqueue(m redisOut) {
	select {
	case <-r.done:
		return
	default:
	}
	select {
	case r.out <- m:
	default:
		if r.dropped.Add(1)%1000 == 1 {
			r.log.Error("livequery: redis publish queue full; dropping changes", "dropped", r.dropped.Load())
		}
	}
}

func (r *Redis) publishLoop() {
	defer r.wg.Done()
	batch := make([]redisOut, 0, redisBatch)
	for {
		select {
		case m := <-r.out:
			batch = append(batch[:0], m)
		drain:
			for len(batch) < redisBatch {
				select {
				case m := <-r.out:
					batch = append(batch, m)
				default:
					break drain
				}
			}
			r.flush(batch)
		case <-r.done:
			// Send what is already queued, then stop.
			for {
				select {
				case m := <-r.out:
					r.flush([]redisOut{m})
				default:
					return
				}
			}
		}
	}
}

func (r *Redis) flush(batch []redisOut) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pipe := r.client.Pipeline()
	for _, m := range batch {
		channel, payload, err := encodeRedis(m)
		if err != nil {
			r.log.Error("livequery: cannot encode change", "err", err)
			continue
		}
		pipe.Publish(ctx, r.prefix+channel, payload)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		r.dropped.Add(uint64(len(batch)))
		now := time.Now().UnixNano()
		if last := r.lastErr.Load(); now-last > int64(10*time.Second) && r.lastErr.CompareAndSwap(last, now) {
			r.log.Error("livequery: publishing to redis failed", "err", err, "dropped", r.dropped.Load())
		}
	}
}

func encodeRedis(m redisOut) (string, []byte, error) {
	if m.forget != nil {
		if *m.forget == "" {
			return ChannelClearCache, []byte(`{"all":true}`), nil
		}
		b, err := json.Marshal(map[string]any{"userId": *m.forget})
		return ChannelClearCache, b, err
	}
	c := m.change
	msg := map[string]any{"currentParseObject": c.Object}
	if c.Original != nil {
		msg["originalParseObject"] = c.Original
	}
	if c.CLP != nil {
		msg["classLevelPermissions"] = c.CLP
	}
	b, err := json.Marshal(msg)
	if c.Deleted {
		return ChannelAfterDelete, b, err
	}
	return ChannelAfterSave, b, err
}

// Subscribe listens to the three channels and hands every message to
// sink (a local LiveQuery server) until Close. It returns once Redis has
// confirmed the subscription; go-redis re-subscribes after a dropped
// connection.
func (r *Redis) Subscribe(ctx context.Context, sink Feed) error {
	ps := r.client.Subscribe(ctx, r.Channel(ChannelAfterSave), r.Channel(ChannelAfterDelete), r.Channel(ChannelClearCache))
	for confirmed := 0; confirmed < 3; {
		msg, err := ps.Receive(ctx)
		if err != nil {
			ps.Close()
			return fmt.Errorf("redis subscribe: %w", err)
		}
		if _, ok := msg.(*redis.Subscription); ok {
			confirmed++
		}
	}
	r.mu.Lock()
	r.subs = append(r.subs, ps)
	r.mu.Unlock()
	ch := ps.Channel(redis.WithChannelSize(4096))
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		for m := range ch {
			r.receive(m.Channel, []byte(m.Payload), sink)
		}
	}()
	return nil
}

func (r *Redis) receive(channel string, payload []byte, sink Feed) {
	switch channel {
	case r.Channel(ChannelClearCache):
		var m struct {
			UserID string `json:"userId"`
			All    bool   `json:"all"`
		}
		if err := json.Unmarshal(payload, &m); err != nil {
			r.log.Error("livequery: bad clearCache message", "err", err)
			return
		}
		if m.All || m.UserID != "" {
			sink.ForgetSessions(m.UserID)
		}
	case r.Channel(ChannelAfterSave), r.Channel(ChannelAfterDelete):
		c, err := decodeRedis(payload, channel == r.Channel(ChannelAfterDelete))
		if err != nil {
			r.log.Error("livequery: bad change message", "channel", channel, "err", err)
			return
		}
		sink.Publish(c)
	}
}

func decodeRedis(payload []byte, deleted bool) (Change, error) {
	var m struct {
		Current  schema.Object  `json:"currentParseObject"`
		Original schema.Object  `json:"originalParseObject"`
		CLP      map[string]any `json:"classLevelPermissions"`
	}
	if err := json.Unmarshal(payload, &m); err != nil {
		return Change{}, err
	}
	class, _ := m.Current["className"].(string)
	if class == "" {
		return Change{}, errors.New("currentParseObject has no className")
	}
	c := Change{Class: class, Object: m.Current, CLP: m.CLP, Deleted: deleted}
	if !deleted {
		c.Original = m.Original
	}
	return c, nil
}

// Close stops publishing (after sending what is queued) and subscribing,
// and closes the connection.
func (r *Redis) Close() error {
	r.closing.Do(func() {
		close(r.done)
		r.mu.Lock()
		for _, ps := range r.subs {
			ps.Close()
		}
		r.mu.Unlock()
		r.wg.Wait()
		r.client.Close()
	})
	return nil
}
