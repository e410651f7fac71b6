package live

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

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
//	<appId>quarryChangesLost  {"classes": ["<class>", …], "count": n} (Quarry's own)
//
// Objects are Parse's full JSON (REST fields plus className and
// "__type": "Object"); originalParseObject is absent on a create.
// clearCache is sent on writes to _Session (that user) and _Role (all).
// quarryChangesLost follows an overflow of a publisher's queue: the
// subscribers tell the clients of those classes (all when classes is
// empty) to reconnect and fetch again.
const (
	ChannelAfterSave   = "afterSave"
	ChannelAfterDelete = "afterDelete"
	ChannelClearCache  = "clearCache"
	ChannelChangesLost = "quarryChangesLost"
)

// Redis limits.
const (
	// RedisPublishQueue is the number of changes waiting to be published
	// by default; past it (Redis unreachable or too slow) changes are
	// dropped and counted, since the writes they describe are already
	// committed, and the subscribers' clients are told once Redis answers.
	RedisPublishQueue = 16384
	// redisBatch is the most messages sent in one pipeline.
	redisBatch = 256
	// While Redis does not answer, a batch is retried after a wait that
	// doubles from redisRetryMin up to redisRetryMax.
	redisRetryMin = 50 * time.Millisecond
	redisRetryMax = 2 * time.Second
	// RedisCloseDeadline bounds how long Close keeps trying to publish
	// what is still queued.
	RedisCloseDeadline = 5 * time.Second
	// redisReadBlock is how long one stream read waits for an entry; a
	// connection that died unnoticed fails within it (plus go-redis's
	// read timeout).
	redisReadBlock = 5 * time.Second
)

// RedisOptions configure a Redis feed.
type RedisOptions struct {
	URL string // redis:// or rediss://
	// Prefix starts every channel name: the application id.
	Prefix string
	Logger *slog.Logger
	// PublishQueue is the number of changes that may wait for Redis
	// (RedisPublishQueue when 0).
	PublishQueue int
	// StreamMaxLen is the number of entries the stream keeps
	// (RedisStreamMaxLen when 0): a subscriber cut off from Redis for
	// longer than that many changes take is told that it lost some.
	StreamMaxLen int64
}

// LossNotifier is implemented by a Feed that can tell its clients that
// changes of some classes never reached it (all classes when classes is
// empty): a LiveQuery Server then has those clients reconnect.
type LossNotifier interface {
	ChangesLost(classes []string)
}

// Redis carries changes between Quarry instances. As a Feed it publishes
// (REST side); Subscribe delivers what every instance publishes to a
// local LiveQuery server (LiveQuery side). Every message goes to the
// stream <prefix>quarryStream, which Quarry's subscribers read (it keeps
// what it was given through their outages), and to the channel above,
// which Parse Server's LiveQuery servers listen to.
type Redis struct {
	client    *redis.Client
	prefix    string
	log       *slog.Logger
	out       chan redisOut
	done      chan struct{}
	closeOnce sync.Once
	wg        sync.WaitGroup
	dropped   atomic.Uint64
	closeBy   time.Time // set by Close before done is closed

	// retryWait waits before the next attempt to publish a batch and
	// reports whether to try again; tests replace it.
	retryWait func(attempt int) bool
	// readRetryWait waits before a subscriber reads the stream again after
	// a failure and reports whether to; tests replace it.
	readRetryWait func(attempt int) bool

	clientOpts *redis.Options
	streamMax  int64  // the stream's retention, in entries
	publisher  string // this publisher's id in the stream's entries

	mu      sync.Mutex
	readers []*redis.Client // one per Subscribe
	// What was dropped since it was last reported: the classes of dropped
	// changes, whether a dropped clearCache message means every session
	// cache must be forgotten, and how many.
	lostClasses map[string]bool
	lostForget  bool
	lostCount   int
	// queued numbers the messages taken into the queue; lostAfter is the
	// number of the last one queued before the first drop still to be
	// reported: the notice goes out once that one is published, so
	// subscribers get it at the gap, after every change queued before it.
	queued    uint64
	lostAfter uint64

	// Owned by the publish loop.
	seq       uint64 // the last sequence number given to a message
	down      bool
	downSince time.Time
	gaveUp    bool // Close's deadline passed with changes unpublished
}

type redisOut struct {
	seq    uint64 // in the stream, per publisher: 1, 2, 3… (0: not yet given)
	queued uint64 // its place in the publish queue: 1, 2, 3… (0: a notice)
	change *Change
	forget *string
	lost   *lostMessage
}

// lostMessage is the payload of ChannelChangesLost.
type lostMessage struct {
	Classes []string `json:"classes"`
	Count   int      `json:"count"`
}

// silenceRedisLog replaces go-redis's own logger, which writes a line to
// stderr for every failed dial (several a second during an outage): this
// package reports an outage itself, once when it starts and once when it
// ends.
var silenceRedisLog sync.Once

type discardRedisLog struct{}

func (discardRedisLog) Printf(context.Context, string, ...any) {}

// OpenRedis connects to Redis and checks it answers.
func OpenRedis(opts RedisOptions) (*Redis, error) {
	silenceRedisLog.Do(func() { redis.SetLogger(discardRedisLog{}) })
	ro, err := redis.ParseURL(opts.URL)
	if err != nil {
		return nil, fmt.Errorf("redisURL: %w", err)
	}
	ro.DisableIdentity = true
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.PublishQueue <= 0 {
		opts.PublishQueue = RedisPublishQueue
	}
	if opts.StreamMaxLen <= 0 {
		opts.StreamMaxLen = RedisStreamMaxLen
	}
	r := &Redis{client: redis.NewClient(ro), clientOpts: ro, prefix: opts.Prefix, log: opts.Logger,
		streamMax: opts.StreamMaxLen, publisher: newPublisherID(),
		out: make(chan redisOut, opts.PublishQueue), done: make(chan struct{}), lostClasses: map[string]bool{}}
	r.retryWait, r.readRetryWait = r.backoff, r.readBackoff
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

// ChangesLost publishes a quarryChangesLost message (LossNotifier), in
// its place among the changes: the publisher lost changes of classes
// before they reached Redis, and the subscribers' clients of those
// classes are asked to fetch again.
func (r *Redis) ChangesLost(classes []string) { r.ChangesLostCount(classes, 0) }

// ChangesLostCount is ChangesLost with the number of changes lost.
func (r *Redis) ChangesLostCount(classes []string, count int) {
	r.enqueue(redisOut{lost: &lostMessage{Classes: classes, Count: count}})
}

// ForgetSessions publishes a clearCache message (Feed).
func (r *Redis) ForgetSessions(userID string) { r.enqueue(redisOut{forget: &userID}) }

// Dropped counts changes dropped because the publish queue was full (or
// Close's deadline passed).
func (r *Redis) Dropped() uint64 { return r.dropped.Load() }

// Queued is the number of changes waiting to be published.
func (r *Redis) Queued() int { return len(r.out) }

func (r *Redis) enqueue(m redisOut) {
	select {
	case <-r.done:
		return
	default:
	}
	// Numbering and queueing under r.mu keep the numbers in queue order.
	r.mu.Lock()
	m.queued = r.queued + 1
	select {
	case r.out <- m:
		r.queued++
		r.mu.Unlock()
	default:
		r.dropped.Add(1)
		first := r.lostCount == 0
		if first {
			r.lostAfter = r.queued
		}
		r.noteLost(m)
		r.mu.Unlock()
		if first {
			r.log.Error("livequery: redis publish queue full; dropping changes until redis catches up (clients are told then)", "queue", cap(r.out))
		}
	}
}

// noteLost records a message that will never be published. r.mu is held.
func (r *Redis) noteLost(m redisOut) {
	r.lostCount++
	switch {
	case m.change != nil:
		r.lostClasses[m.change.Class] = true
	case m.forget != nil:
		r.lostForget = true
	case m.lost != nil:
		for _, c := range m.lost.Classes {
			r.lostClasses[c] = true
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
			r.send(batch)
		case <-r.done:
			// Send what is already queued until the close deadline, then
			// stop.
			for {
				batch = batch[:0]
			more:
				for len(batch) < redisBatch {
					select {
					case m := <-r.out:
						batch = append(batch, m)
					default:
						break more
					}
				}
				if len(batch) == 0 {
					return
				}
				r.send(batch)
			}
		}
	}
}

// send publishes a batch, retrying while Redis does not answer: a batch is
// only dropped when Close's deadline passes. The first failure of an
// outage and the recovery are logged once each.
func (r *Redis) send(batch []redisOut) {
	r.number(batch)
	for attempt := 0; ; attempt++ {
		err := r.flush(batch)
		if err == nil {
			r.published(batch[len(batch)-1].queued)
			return
		}
		if !r.down {
			r.down, r.downSince = true, time.Now()
			r.log.Error("livequery: redis unreachable; queueing changes and retrying", "err", err, "queue", cap(r.out))
		}
		if r.closing() && !time.Now().Before(r.closeBy) || !r.retryWait(attempt) {
			r.dropped.Add(uint64(len(batch)))
			r.mu.Lock()
			for _, m := range batch {
				r.noteLost(m)
			}
			r.mu.Unlock()
			if !r.gaveUp {
				r.gaveUp = true
				r.log.Error("livequery: closing with redis unreachable; changes not published", "dropped", len(batch)+len(r.out))
			}
			return
		}
	}
}

// published runs after every successful flush, last the message queued
// as number upTo: it ends an outage and, once every change queued before
// the first drop is out, reports what was dropped, so that the
// subscribers' clients refetch.
func (r *Redis) published(upTo uint64) {
	r.mu.Lock()
	if pending := r.lostCount; pending > 0 && upTo < r.lostAfter {
		r.mu.Unlock() // changes queued before the gap are still to go
		r.endOutage(pending)
		return
	}
	count, forget := r.lostCount, r.lostForget
	classes := slices.Sorted(maps.Keys(r.lostClasses))
	r.lostCount, r.lostForget = 0, false
	clear(r.lostClasses)
	r.mu.Unlock()
	if !r.endOutage(count) && count > 0 {
		r.log.Warn("livequery: redis caught up after dropping changes", "dropped", count)
	}
	if count == 0 {
		return
	}
	notice := []redisOut{{lost: &lostMessage{Classes: classes, Count: count}}}
	if forget {
		all := ""
		notice = append(notice, redisOut{forget: &all})
	}
	r.number(notice)
	if err := r.flush(notice); err != nil {
		r.log.Error("livequery: cannot tell subscribers that changes were dropped", "err", err)
	}
}

// endOutage logs the end of an outage once, with what it dropped, and
// reports whether one ended.
func (r *Redis) endOutage(dropped int) bool {
	if !r.down {
		return false
	}
	r.down = false
	r.log.Warn("livequery: redis reachable again", "outage", time.Since(r.downSince).Round(time.Millisecond), "dropped", dropped)
	return true
}

// backoff is the default retryWait: a doubling wait; once Close has been
// called, attempts go on only until its deadline.
func (r *Redis) backoff(attempt int) bool {
	wait := min(redisRetryMin<<min(attempt, 10), redisRetryMax)
	select {
	case <-r.done:
		left := time.Until(r.closeBy)
		if left <= 0 {
			return false
		}
		time.Sleep(min(wait, left))
		return true
	case <-time.After(wait):
		return true
	}
}

func (r *Redis) flush(batch []redisOut) error {
	deadline := time.Now().Add(10 * time.Second)
	if r.closing() {
		deadline = r.closeBy
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	pipe := r.client.Pipeline()
	for _, m := range batch {
		channel, payload, err := encodeRedis(m)
		if err != nil {
			r.log.Error("livequery: cannot encode change", "err", err)
			continue
		}
		r.addToStream(ctx, pipe, m.seq, channel, payload)
		// Parse Server's LiveQuery servers listen to the channels.
		pipe.Publish(ctx, r.prefix+channel, payload)
	}
	_, err := pipe.Exec(ctx)
	return err
}

func encodeRedis(m redisOut) (string, []byte, error) {
	if m.lost != nil {
		b, err := json.Marshal(m.lost)
		return ChannelChangesLost, b, err
	}
	if m.forget != nil {
		if *m.forget == "" {
			return ChannelClearCache, []byte(`{"all":true}`), nil
		}
		b, err := json.Marshal(map[string]any{"userId": *m.forget})
		return ChannelClearCache, b, err
	}
	c := m.change
	msg := map[string]any{"currentParseObject": jsonOf(c.Object, c.ObjectJSON)}
	if c.Original != nil {
		msg["originalParseObject"] = jsonOf(c.Original, c.OriginalJSON)
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

// Subscribe reads the stream from its newest entry on and hands every
// message to sink (a local LiveQuery server) until Close (stream.go). It
// returns once Redis has answered.
func (r *Redis) Subscribe(ctx context.Context, sink Feed) error {
	opts := *r.clientOpts // go-redis keeps (and fills in) the options it is given
	reader := redis.NewClient(&opts)
	last, err := r.streamEnd(ctx, reader)
	if err != nil {
		reader.Close()
		return fmt.Errorf("redis subscribe: %w", err)
	}
	r.mu.Lock()
	r.readers = append(r.readers, reader)
	r.mu.Unlock()
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		r.readLoop(reader, last, sink)
	}()
	return nil
}

func (r *Redis) closing() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// sleep waits d, or less when Close is called; it reports whether the
// caller should go on.
func (r *Redis) sleep(d time.Duration) bool {
	select {
	case <-r.done:
		return false
	case <-time.After(d):
		return true
	}
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
	case r.Channel(ChannelChangesLost):
		var m lostMessage
		if err := json.Unmarshal(payload, &m); err != nil {
			r.log.Error("livequery: bad changesLost message", "err", err)
			return
		}
		r.log.Warn("livequery: another instance dropped changes; clients are asked to refetch", "classes", m.Classes, "count", m.Count)
		if n, ok := sink.(LossNotifier); ok {
			n.ChangesLost(m.Classes)
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

// jsonOf is obj for json.Marshal: its JSON as given when there is one
// (the writer's stored bytes), so that only that is copied, not the map
// encoded.
func jsonOf(obj schema.Object, enc []byte) any {
	if enc != nil {
		return json.RawMessage(enc)
	}
	return obj
}

// decodeRedis reads a change message. The objects' JSON as received is
// kept with the change (Change.ObjectJSON): events showing the whole
// object send those bytes instead of encoding the decoded map again.
func decodeRedis(payload []byte, deleted bool) (Change, error) {
	var m struct {
		Current  json.RawMessage `json:"currentParseObject"`
		Original json.RawMessage `json:"originalParseObject"`
		CLP      map[string]any  `json:"classLevelPermissions"`
	}
	if err := json.Unmarshal(payload, &m); err != nil {
		return Change{}, err
	}
	c := Change{CLP: m.CLP, Deleted: deleted}
	var err error
	if c.Object, c.ObjectJSON, err = decodeObject(m.Current); err != nil {
		return Change{}, fmt.Errorf("currentParseObject: %w", err)
	}
	c.Class, _ = c.Object["className"].(string)
	if c.Class == "" {
		return Change{}, errors.New("currentParseObject has no className")
	}
	if !deleted {
		if c.Original, c.OriginalJSON, err = decodeObject(m.Original); err != nil {
			return Change{}, fmt.Errorf("originalParseObject: %w", err)
		}
	}
	return c, nil
}

// decodeObject decodes one object of a change message and returns the
// bytes to send for it whole: raw itself when it is an object in valid
// UTF-8 (another publisher's invalid bytes are encoded anew from the
// decoded map, where they became U+FFFD, as before). null or absent is no
// object.
func decodeObject(raw json.RawMessage) (schema.Object, []byte, error) {
	if len(raw) == 0 {
		return nil, nil, nil
	}
	var obj schema.Object
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, nil, err
	}
	if obj == nil || !utf8.Valid(raw) {
		return obj, nil, nil
	}
	return obj, raw, nil
}

// Close stops publishing (after sending what is queued, for at most
// RedisCloseDeadline) and subscribing, and closes the connection.
func (r *Redis) Close() error {
	r.closeOnce.Do(func() {
		r.closeBy = time.Now().Add(RedisCloseDeadline)
		close(r.done)
		r.mu.Lock()
		for _, c := range r.readers {
			c.Close() // ends a blocked read
		}
		r.mu.Unlock()
		r.wg.Wait()
		r.client.Close()
	})
	return nil
}
