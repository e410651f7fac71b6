// Package cache is the cacheAdapter: session, role and schema lookups kept
// in Redis, shared by every process that names the same Redis, with
// invalidations announced to all of them over Redis pub/sub. Processes
// that hold no data (standalone LiveQuery servers) read through it before
// asking a REST server; REST servers invalidate it when they write
// sessions, roles and class schemas. It imports nothing of Quarry's: callers give it
// plain values.
package cache

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Defaults of Options.
const (
	// DefaultTTL bounds how long an entry is used without being
	// invalidated (Parse Server's RedisCacheAdapter keeps entries 30 s).
	DefaultTTL = 30 * time.Second
	// DefaultSchemaTTL bounds a class's field types. Schema changes are
	// announced (SchemaChanged); the TTL bounds what a missed announcement
	// (Redis unreachable during the change) can cost.
	DefaultSchemaTTL = time.Minute
	// opTimeout bounds one Redis round trip; a cache that does not answer
	// is a miss, never a stall.
	opTimeout = 2 * time.Second
)

// Options configure Open.
type Options struct {
	URL    string // redis:// or rediss:// URL, database included
	Prefix string // put before every key and the channel; "quarry:cache:" when empty
	// TTL is the lifetime of session and role entries (DefaultTTL when 0).
	TTL time.Duration
	// SchemaTTL is the lifetime of schema entries (DefaultSchemaTTL).
	SchemaTTL time.Duration
	Logger    *slog.Logger // Redis trouble, at most once per outage; nil: none
}

// Session is what a session token resolves to.
type Session struct {
	UserID  string    `json:"userId"`
	Expires time.Time `json:"expires,omitzero"` // zero: never
}

// Invalidation is one message on the invalidation channel: which cached
// lookups every process must drop from its own memory.
type Invalidation struct {
	// UserID: that user's sessions (a session of theirs was written).
	UserID string `json:"userId,omitempty"`
	// AllRoles: every user's roles (a role or its membership changed).
	AllRoles bool `json:"allRoles,omitempty"`
	// Classes: these classes' schemas (fields added or deleted, the
	// class dropped, its permissions or indexes changed).
	Classes []string `json:"classes,omitempty"`
	// AllSchemas: every class's schema.
	AllSchemas bool `json:"allSchemas,omitempty"`
}

// Cache is a connection to the shared cache. Its methods are safe for
// concurrent use. A Redis error is returned to the caller, who treats the
// lookup as a miss.
type Cache struct {
	rdb  *redis.Client
	opts Options

	mu       sync.Mutex
	handlers []func(Invalidation)
	pubsub   *redis.PubSub
	done     chan struct{}
}

// Keys below Options.Prefix.
const (
	keySession  = "session:" // + sha256 of the token: tokens never appear in Redis
	keyRoles    = "roles:"   // + user id: {"gen": n, "roles": [...]}
	keyRolesGen = "rolesgen" // bumped by every role change
	keySchema   = "schema:"  // + class: {"gen": n, "fields": {"field": "Type", ...}, "fetched": t}
	// + class: bumped by every change of the class's schema.
	keySchemaGen = "schemagen:"
	channel      = "invalidate"
	// revoked marks a session key whose session was written: nobody may
	// cache that token again until the mark expires (see PutSession).
	revoked = "-"
)

// Open connects to Redis and checks that it answers.
func Open(opts Options) (*Cache, error) {
	ro, err := redis.ParseURL(opts.URL)
	if err != nil {
		return nil, fmt.Errorf("cacheAdapter: %w", err)
	}
	if opts.Prefix == "" {
		opts.Prefix = "quarry:cache:"
	}
	if opts.TTL <= 0 {
		opts.TTL = DefaultTTL
	}
	if opts.SchemaTTL <= 0 {
		opts.SchemaTTL = DefaultSchemaTTL
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	c := &Cache{rdb: redis.NewClient(ro), opts: opts}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.rdb.Ping(ctx).Err(); err != nil {
		c.rdb.Close()
		return nil, fmt.Errorf("cacheAdapter: Redis at %s does not answer: %w", ro.Addr, err)
	}
	return c, nil
}

// Close stops listening for invalidations and closes the connections.
func (c *Cache) Close() error {
	c.mu.Lock()
	ps, done := c.pubsub, c.done
	c.pubsub = nil
	c.mu.Unlock()
	if ps != nil {
		ps.Close()
		<-done
	}
	return c.rdb.Close()
}

func (c *Cache) key(parts ...string) string {
	k := c.opts.Prefix
	for _, p := range parts {
		k += p
	}
	return k
}

func tokenKey(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

func withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, opTimeout)
}

// Session returns the cached resolution of token. A session past its
// expiry, or one whose session was written since it was cached, is a miss.
func (c *Cache) Session(ctx context.Context, token string) (Session, bool, error) {
	ctx, cancel := withTimeout(ctx)
	defer cancel()
	b, err := c.rdb.Get(ctx, c.key(keySession, tokenKey(token))).Bytes()
	if errors.Is(err, redis.Nil) || string(b) == revoked {
		return Session{}, false, nil
	}
	if err != nil {
		return Session{}, false, err
	}
	var s Session
	if err := json.Unmarshal(b, &s); err != nil || s.UserID == "" {
		return Session{}, false, nil
	}
	if !s.Expires.IsZero() && !time.Now().Before(s.Expires) {
		return Session{}, false, nil
	}
	return s, true, nil
}

// PutSession caches what token resolved to. It writes only where no entry
// is (SET NX): a session written while its lookup was under way left a
// revocation mark, which the lookup's older answer must not replace.
func (c *Cache) PutSession(ctx context.Context, token string, s Session) error {
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	ttl := c.opts.TTL
	if !s.Expires.IsZero() {
		ttl = min(ttl, time.Until(s.Expires))
	}
	if ttl <= 0 {
		return nil
	}
	ctx, cancel := withTimeout(ctx)
	defer cancel()
	return c.rdb.SetNX(ctx, c.key(keySession, tokenKey(token)), b, ttl).Err()
}

// RolesGen identifies the role generation a Roles lookup saw; PutRoles
// stores an answer under it, so an answer fetched across a role change is
// never used.
type RolesGen int64

type rolesEntry struct {
	Gen   RolesGen `json:"gen"`
	Roles []string `json:"roles"`
}

// Roles returns userID's cached role names (inherited ones included),
// with the current generation for a PutRoles after a miss. One round
// trip: the generation and the entry come together.
func (c *Cache) Roles(ctx context.Context, userID string) ([]string, RolesGen, bool, error) {
	ctx, cancel := withTimeout(ctx)
	defer cancel()
	vals, err := c.rdb.MGet(ctx, c.key(keyRolesGen), c.key(keyRoles, userID)).Result()
	if err != nil {
		return nil, 0, false, err
	}
	var gen RolesGen
	if s, ok := vals[0].(string); ok {
		n, _ := strconv.ParseInt(s, 10, 64)
		gen = RolesGen(n)
	}
	s, ok := vals[1].(string)
	if !ok {
		return nil, gen, false, nil
	}
	var e rolesEntry
	if err := json.Unmarshal([]byte(s), &e); err != nil || e.Gen != gen {
		return nil, gen, false, nil
	}
	return e.Roles, gen, true, nil
}

// PutRoles caches userID's role names as of generation gen.
func (c *Cache) PutRoles(ctx context.Context, userID string, gen RolesGen, roles []string) error {
	if roles == nil {
		roles = []string{}
	}
	b, err := json.Marshal(rolesEntry{gen, roles})
	if err != nil {
		return err
	}
	ctx, cancel := withTimeout(ctx)
	defer cancel()
	return c.rdb.Set(ctx, c.key(keyRoles, userID), b, c.opts.TTL).Err()
}

// SchemaEntry is a class's field types (name -> type) as some process read
// them at Fetched: a process keeping the entry in its own memory should
// keep it only until Fetched plus its TTL, so that no copy is older than
// one TTL.
type SchemaEntry struct {
	Gen     SchemaGen         `json:"gen"`
	Fields  map[string]string `json:"fields"`
	Fetched time.Time         `json:"fetched"`
}

// SchemaGen identifies a class's schema generation as a Schema lookup saw
// it; PutSchema stores an answer under it, so an answer fetched across a
// schema change is never used (as RolesGen).
type SchemaGen int64

// Schema returns a class's cached field types, with the class's current
// schema generation for a PutSchema after a miss. One round trip: the
// generation and the entry come together.
func (c *Cache) Schema(ctx context.Context, class string) (SchemaEntry, SchemaGen, bool, error) {
	ctx, cancel := withTimeout(ctx)
	defer cancel()
	vals, err := c.rdb.MGet(ctx, c.key(keySchemaGen, class), c.key(keySchema, class)).Result()
	if err != nil {
		return SchemaEntry{}, 0, false, err
	}
	var gen SchemaGen
	if s, ok := vals[0].(string); ok {
		n, _ := strconv.ParseInt(s, 10, 64)
		gen = SchemaGen(n)
	}
	s, ok := vals[1].(string)
	if !ok {
		return SchemaEntry{}, gen, false, nil
	}
	var e SchemaEntry
	if err := json.Unmarshal([]byte(s), &e); err != nil || e.Fields == nil || e.Gen != gen {
		return SchemaEntry{}, gen, false, nil
	}
	return e, gen, true, nil
}

// PutSchema caches a class's field types, read at fetched under schema
// generation gen, until Options.SchemaTTL after fetched.
func (c *Cache) PutSchema(ctx context.Context, class string, gen SchemaGen, fields map[string]string, fetched time.Time) error {
	ttl := c.opts.SchemaTTL - time.Since(fetched)
	if ttl <= 0 {
		return nil
	}
	if fields == nil {
		fields = map[string]string{}
	}
	b, err := json.Marshal(SchemaEntry{Gen: gen, Fields: fields, Fetched: fetched})
	if err != nil {
		return err
	}
	ctx, cancel := withTimeout(ctx)
	defer cancel()
	return c.rdb.Set(ctx, c.key(keySchema, class), b, ttl).Err()
}

// SchemaChanged is called by the process that changed class schemas
// (fields added or deleted, a class dropped, permissions or indexes
// changed): each class's generation moves on, so its cached entry and any
// answer fetched before the change are never used again, and every
// process is told to drop those classes from its memory. When it returns
// without error, no process reads the old schemas from Redis any more.
func (c *Cache) SchemaChanged(ctx context.Context, classes ...string) error {
	if len(classes) == 0 {
		return nil
	}
	ctx, cancel := withTimeout(ctx)
	defer cancel()
	pipe := c.rdb.TxPipeline()
	for _, class := range classes {
		pipe.Incr(ctx, c.key(keySchemaGen, class))
	}
	msg, _ := json.Marshal(Invalidation{Classes: classes})
	pipe.Publish(ctx, c.key(channel), msg)
	_, err := pipe.Exec(ctx)
	return err
}

// SessionsWritten is called by the process that wrote sessions (a
// logout, a revocation, a changed expiry): their tokens are marked so that
// no process uses or caches them again before the entries would have
// expired, and then every process is told to drop userID's sessions from
// its memory. When it returns without error, no process reads the old
// entries from Redis any more.
func (c *Cache) SessionsWritten(ctx context.Context, userID string, tokens ...string) error {
	ctx, cancel := withTimeout(ctx)
	defer cancel()
	pipe := c.rdb.TxPipeline()
	for _, t := range tokens {
		pipe.Set(ctx, c.key(keySession, tokenKey(t)), revoked, c.opts.TTL)
	}
	msg, _ := json.Marshal(Invalidation{UserID: userID})
	pipe.Publish(ctx, c.key(channel), msg)
	_, err := pipe.Exec(ctx)
	return err
}

// Written is what a batch of writes asks to invalidate: the sessions of
// users (by user id: their tokens), and whether any role was written.
type Written struct {
	Sessions map[string][]string // user id ("" when unknown) -> tokens
	Roles    bool
}

// Invalidate applies a batch of writes in one round trip: every token is
// marked as in SessionsWritten, the role generation moves on when Roles
// is set, and one message per user (or one for every role) tells every
// process to drop what it holds in memory.
func (c *Cache) Invalidate(ctx context.Context, w Written) error {
	if len(w.Sessions) == 0 && !w.Roles {
		return nil
	}
	ctx, cancel := withTimeout(ctx)
	defer cancel()
	pipe := c.rdb.TxPipeline()
	for userID, tokens := range w.Sessions {
		for _, t := range tokens {
			pipe.Set(ctx, c.key(keySession, tokenKey(t)), revoked, c.opts.TTL)
		}
		if !w.Roles {
			msg, _ := json.Marshal(Invalidation{UserID: userID})
			pipe.Publish(ctx, c.key(channel), msg)
		}
	}
	if w.Roles {
		// Every process drops every user's lookups: the users above too.
		pipe.Incr(ctx, c.key(keyRolesGen))
		msg, _ := json.Marshal(Invalidation{AllRoles: true})
		pipe.Publish(ctx, c.key(channel), msg)
	}
	_, err := pipe.Exec(ctx)
	return err
}

// RolesChanged is called by the process that wrote a role: every cached
// role list becomes stale at once (the generation moves on), and every
// process is told to drop the roles it holds in memory.
func (c *Cache) RolesChanged(ctx context.Context) error {
	ctx, cancel := withTimeout(ctx)
	defer cancel()
	pipe := c.rdb.TxPipeline()
	pipe.Incr(ctx, c.key(keyRolesGen))
	msg, _ := json.Marshal(Invalidation{AllRoles: true})
	pipe.Publish(ctx, c.key(channel), msg)
	_, err := pipe.Exec(ctx)
	return err
}

// Subscribe starts listening for invalidations; fn receives each one, in
// the order they were published, on one goroutine. It returns once Redis
// confirmed the subscription. After a lost connection go-redis subscribes
// again; fn then receives Everything, since messages may have been missed.
func (c *Cache) Subscribe(ctx context.Context, fn func(Invalidation)) error {
	c.mu.Lock()
	c.handlers = append(c.handlers, fn)
	started := c.pubsub != nil
	c.mu.Unlock()
	if started {
		return nil
	}
	ps := c.rdb.Subscribe(ctx, c.key(channel))
	if _, err := ps.Receive(ctx); err != nil {
		ps.Close()
		return fmt.Errorf("cacheAdapter: subscribing: %w", err)
	}
	done := make(chan struct{})
	c.mu.Lock()
	c.pubsub, c.done = ps, done
	c.mu.Unlock()
	go c.listen(ps, done)
	return nil
}

// Everything is the Invalidation that drops every cached lookup: every
// user's roles, and so every session's identity, and every class schema.
var Everything = Invalidation{AllRoles: true, AllSchemas: true}

func (c *Cache) listen(ps *redis.PubSub, done chan struct{}) {
	defer close(done)
	wait := time.Duration(0)
	for {
		m, err := ps.Receive(context.Background())
		if err != nil {
			if errors.Is(err, redis.ErrClosed) {
				return
			}
			if wait == 0 {
				c.opts.Logger.Warn("cacheAdapter: invalidation channel lost; every cached lookup is dropped when it is back", "err", err)
			}
			wait = min(max(2*wait, 50*time.Millisecond), 2*time.Second)
			time.Sleep(wait)
			continue
		}
		switch m := m.(type) {
		case *redis.Subscription:
			// Subscribed again after a lost connection: what was published
			// meanwhile is lost, so everything goes.
			if m.Kind == "subscribe" {
				c.opts.Logger.Info("cacheAdapter: invalidation channel back")
				wait = 0
				c.deliver(Everything)
			}
		case *redis.Message:
			wait = 0
			var inv Invalidation
			if err := json.Unmarshal([]byte(m.Payload), &inv); err != nil {
				c.opts.Logger.Error("cacheAdapter: bad invalidation message", "err", err)
				inv = Everything
			}
			c.deliver(inv)
		}
	}
}

func (c *Cache) deliver(inv Invalidation) {
	c.mu.Lock()
	hs := c.handlers
	c.mu.Unlock()
	for _, h := range hs {
		h(inv)
	}
}
