package live

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"net/netip"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fasthttp/websocket"
	"github.com/valyala/fasthttp"

	"github.com/quarrydata/quarry/live/match"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
)

// Change is one committed write as LiveQuery consumes it. Objects are in
// the published form: the REST JSON the master key reads, plus className
// and "__type": "Object" (service.LiveObject, then Publisher).
type Change struct {
	Class string
	// Object is the new version; for a delete, the deleted object.
	Object schema.Object
	// Original is the version before an update; nil for a create and a
	// delete.
	Original schema.Object
	Deleted  bool
	// CLP is the class's class-level permissions at publish time (nil:
	// none, or unknown).
	CLP map[string]any
	// ObjectJSON and OriginalJSON, when set, are Object's and Original's
	// JSON (the same object as encoding/json makes of the map, keys in
	// another order): events sending the whole object send these bytes
	// instead of encoding the map. The Publisher sets them from the
	// writer's stored bytes; changes from Redis come without.
	ObjectJSON, OriginalJSON []byte
	// Relations are the relation rows written with this object as their
	// owner, when RelationsKnown (the REST server's commits in the same
	// process, told as committed or from PostgreSQL's change log; changes
	// through Redis come without): a $relatedTo join then follows the edits alone instead of
	// reading the relation's members again.
	Relations      []service.RelationEdit
	RelationsKnown bool
}

// Feed is where REST servers send changes: a LiveQuery Server in the same
// process, or a RedisFeed that carries them to every instance's server.
type Feed interface {
	// Publish hands over one change. Changes of one object must be
	// published in commit order.
	Publish(Change)
	// ForgetSessions drops cached session lookups of a user, "" of every
	// user: sent when a _Session or _Role is written.
	ForgetSessions(userID string)
}

// Defaults of the options (Parse Server's, except cacheTimeout, which
// follows the specification, and the subscription limits, Quarry's).
const (
	DefaultMaxSubscriptionsPerClient = 1000
	DefaultMaxSubscriptions          = 200_000
	DefaultWebsocketTimeout          = 10 * time.Second
	DefaultCacheTimeout              = 30 * 24 * time.Hour
	// DefaultSendQueue is the number of messages a client's send queue
	// holds before events for it are dropped.
	DefaultSendQueue = 1024
	// SlowClientMaxDrops is how many messages a client may miss in a row
	// (its queue full) before it is disconnected.
	SlowClientMaxDrops = 256
	// SlowClientMaxLag is how long a client's queue may stay full, from its
	// first dropped message, before it is disconnected.
	SlowClientMaxLag = 5 * time.Second
	// WriteTimeout bounds one write to a client's socket.
	WriteTimeout = 10 * time.Second
	// dispatchQueue is the number of changes each dispatcher holds; when
	// all are busy, Publish waits (writers feel the back-pressure rather
	// than events being lost).
	dispatchQueue = 4096
)

// Close codes the server sends.
const (
	CloseSlowClient = websocket.CloseTryAgainLater // 1013: send queue overflowed
	CloseNoPong     = websocket.CloseGoingAway     // 1001: no pong to the last ping
	CloseShutdown   = websocket.CloseGoingAway     // 1001: the server is stopping
)

// Options configure a Server.
type Options struct {
	AppID     string
	MasterKey string // a connect with this masterKey reads everything
	// MasterKeyIPs restricts master-key connects to these addresses or
	// CIDR ranges (the masterKeyIps option); empty allows every address.
	// Elsewhere a presented master key is ignored.
	MasterKeyIPs []string
	// KeyPairs, when not empty, lists the keys a connect must present (at
	// least one of javascriptKey, masterKey, clientKey, windowsKey,
	// restAPIKey with the same value); the master key is always accepted.
	KeyPairs map[string]string
	// ClassNames are the classes one may subscribe to; empty means any.
	ClassNames []string
	// WebsocketTimeout is the ping interval; a client that did not answer
	// the previous ping by the next one is disconnected.
	WebsocketTimeout time.Duration
	// CacheTimeout is how long a session token's lookup is cached.
	CacheTimeout time.Duration
	// NearSphereMax is the $nearSphere limit, as the planner's option.
	NearSphereMax float64
	// SendQueue is the per-client queue length (DefaultSendQueue).
	SendQueue int
	// Dispatchers match changes in parallel (GOMAXPROCS by default); the
	// changes of one object always go through the same one, in order.
	Dispatchers int
	Authority   Authority
	// Triggers are cloud code's LiveQuery triggers; nil runs none.
	Triggers Triggers
	// MaxSubscriptionsPerClient, MaxSubscriptionsPerUser and
	// MaxSubscriptions are the subscription quotas: what one connection,
	// one user (over all their connections and GraphQL subscriptions) and
	// the whole server, that is the app, may hold. A subscribe past one is
	// refused with CodeSubscriptionQuota (155), the connection going on.
	// 0 means the defaults (MaxSubscriptionsPerUser: no per-user quota).
	MaxSubscriptionsPerClient int
	MaxSubscriptionsPerUser   int
	MaxSubscriptions          int
	Logger                    *slog.Logger
	Now                       func() time.Time
}

// Server is a LiveQuery server: it accepts WebSocket connections (Handler)
// and delivers the changes it is given (Publish). It implements Feed.
type Server struct {
	opts     Options
	log      *slog.Logger
	index    *match.Index[*subscription]
	joins    *joins
	sessions *sessions
	classes  map[string]bool
	upgrader websocket.FastHTTPUpgrader
	shards   []chan Change
	seed     maphash.Seed
	done     chan struct{}
	workers  sync.WaitGroup

	mu      sync.Mutex
	clients map[*client]struct{}
	closed  bool
	conns   sync.WaitGroup

	stats         counters
	subscriptions atomic.Int64 // held by all clients (MaxSubscriptions)
	userMu        sync.Mutex
	userSubs      map[string]int // user id -> subscriptions held (MaxSubscriptionsPerUser)
	masterIP      []netip.Prefix
	lastLookupErr atomic.Int64 // unix nanos of the last logged lookup failure
}

// Stats counts a server's activity since it started.
type Stats struct {
	Clients       int
	Subscriptions int
	Queries       int    // distinct queries (subscriptions with the same one share its matcher)
	Changes       uint64 // changes dispatched
	Tested        uint64 // query tests (two per candidate query: original and new object)
	Delivered     uint64 // events queued for clients
	Dropped       uint64 // messages dropped because a client's queue was full
	SlowClosed    uint64 // clients disconnected for being too slow
	Panics        uint64 // panics contained (a client closed, or a change dropped)
}

type counters struct {
	changes, tested, delivered, dropped, slowClosed, panics atomic.Uint64
}

// New builds a server. Authority is required.
func New(opts Options) (*Server, error) {
	if opts.Authority == nil {
		return nil, errors.New("live: Options.Authority is required")
	}
	if opts.WebsocketTimeout <= 0 {
		opts.WebsocketTimeout = DefaultWebsocketTimeout
	}
	if opts.CacheTimeout <= 0 {
		opts.CacheTimeout = DefaultCacheTimeout
	}
	if opts.SendQueue <= 0 {
		opts.SendQueue = DefaultSendQueue
	}
	if opts.MaxSubscriptionsPerClient <= 0 {
		opts.MaxSubscriptionsPerClient = DefaultMaxSubscriptionsPerClient
	}
	if opts.MaxSubscriptions <= 0 {
		opts.MaxSubscriptions = DefaultMaxSubscriptions
	}
	if opts.Dispatchers <= 0 {
		opts.Dispatchers = runtime.GOMAXPROCS(0)
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	s := &Server{
		opts:     opts,
		log:      opts.Logger,
		index:    match.NewIndex[*subscription](),
		joins:    newJoins(),
		sessions: newSessions(opts.Authority, opts.CacheTimeout, opts.Now),
		seed:     maphash.MakeSeed(),
		done:     make(chan struct{}),
		clients:  map[*client]struct{}{},
		userSubs: map[string]int{},
	}
	for _, ip := range opts.MasterKeyIPs {
		p, err := netip.ParsePrefix(ip)
		if err != nil {
			a, err2 := netip.ParseAddr(ip)
			if err2 != nil {
				return nil, fmt.Errorf("live: masterKeyIps: %w", err)
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		s.masterIP = append(s.masterIP, p)
	}
	if len(opts.ClassNames) > 0 {
		s.classes = map[string]bool{}
		for _, c := range opts.ClassNames {
			s.classes[c] = true
		}
	}
	s.upgrader = websocket.FastHTTPUpgrader{
		// LiveQuery carries its credentials in messages, never in cookies,
		// so any origin may connect (as with Parse Server).
		CheckOrigin: func(*fasthttp.RequestCtx) bool { return true },
		Error: func(ctx *fasthttp.RequestCtx, status int, reason error) {
			ctx.Error(reason.Error(), status)
		},
	}
	for i := 0; i < opts.Dispatchers; i++ {
		ch := make(chan Change, dispatchQueue)
		s.shards = append(s.shards, ch)
		s.workers.Add(1)
		go s.dispatchLoop(ch)
	}
	s.workers.Add(1)
	go s.joinLoop()
	return s, nil
}

// Handler upgrades any request to a LiveQuery WebSocket connection; the
// path does not matter (the JS SDK connects to the serverURL's path).
func (s *Server) Handler(ctx *fasthttp.RequestCtx) {
	s.mu.Lock()
	closed := s.closed
	if !closed {
		s.conns.Add(1)
	}
	s.mu.Unlock()
	if closed {
		ctx.Error("LiveQuery server is shutting down", fasthttp.StatusServiceUnavailable)
		return
	}
	remote := ctx.RemoteAddr().String()
	ip, _ := netip.AddrFromSlice(ctx.RemoteIP())
	err := s.upgrader.Upgrade(ctx, func(conn *websocket.Conn) {
		defer s.conns.Done()
		s.serve(conn, remote, ip.Unmap())
	})
	if err != nil {
		s.conns.Done()
		s.log.Warn("livequery: WebSocket upgrade refused", "remote", remote, "err", err)
	}
}

// IsUpgrade reports whether a request asks for a WebSocket upgrade.
func IsUpgrade(ctx *fasthttp.RequestCtx) bool { return websocket.FastHTTPIsWebSocketUpgrade(ctx) }

// Publish queues a change for delivery (Feed). Changes of one object keep
// their order. It waits while the dispatchers are full, and drops the
// change once the server is closed.
func (s *Server) Publish(c Change) {
	id, _ := c.Object["objectId"].(string)
	h := maphash.String(s.seed, c.Class+"\x00"+id)
	select {
	case s.shards[h%uint64(len(s.shards))] <- c:
	case <-s.done:
	}
	if s.joins.count.Load() > 0 {
		select {
		case s.joins.ch <- c:
		case <-s.done:
		}
	}
}

// ForgetSessions drops cached session lookups (Feed).
func (s *Server) ForgetSessions(userID string) { s.sessions.forgetUser(userID) }

// ForgetSchema drops the class schema ("": every class) the server's
// authority holds, when it holds any (a standalone server's
// RemoteAuthority): sent when a REST server announces a schema change.
// The next subscription to the class reads the schema afresh.
func (s *Server) ForgetSchema(class string) {
	if f, ok := s.opts.Authority.(interface{ ForgetSchema(class string) }); ok {
		f.ForgetSchema(class)
	}
}

// Stats returns the server's counters.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	n := len(s.clients)
	s.mu.Unlock()
	ix, jx := s.index.Stats(), s.joins.outer.Stats()
	return Stats{
		Clients: n, Subscriptions: ix.Members + jx.Members, Queries: ix.Groups + jx.Groups,
		Changes: s.stats.changes.Load(), Tested: s.stats.tested.Load(), Delivered: s.stats.delivered.Load(),
		Dropped: s.stats.dropped.Load(), SlowClosed: s.stats.slowClosed.Load(), Panics: s.stats.panics.Load(),
	}
}

// Close disconnects every client (status 1001), stops the dispatchers
// and waits for the connections to end. Changes published afterwards are
// dropped.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	clients := make([]*client, 0, len(s.clients))
	for c := range s.clients {
		clients = append(clients, c)
	}
	s.mu.Unlock()
	close(s.done)
	for _, c := range clients {
		c.close(CloseShutdown, "server shutting down")
	}
	s.workers.Wait()
	s.conns.Wait()
	return nil
}

func (s *Server) register(c *client) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.clients[c] = struct{}{}
	return true
}

func (s *Server) unregister(c *client) {
	s.mu.Lock()
	delete(s.clients, c)
	s.mu.Unlock()
}

// keysAllowed applies keyPairs to a connect: with none configured every
// connect passes; otherwise one configured key must be presented as is.
func (s *Server) keysAllowed(presented map[string]string) bool {
	if len(s.opts.KeyPairs) == 0 {
		return true
	}
	for name, secret := range s.opts.KeyPairs {
		if v, ok := presented[name]; ok && secret != "" && equal(v, secret) {
			return true
		}
	}
	return false
}

// isMaster reports whether a connect's masterKey is the master key (the
// server's, or keyPairs.masterKey) and comes from an allowed address.
func (s *Server) isMaster(presented map[string]string, from netip.Addr) bool {
	k := presented["masterKey"]
	if k == "" || !s.masterAllowed(from) {
		return false
	}
	return (s.opts.MasterKey != "" && equal(k, s.opts.MasterKey)) ||
		(s.opts.KeyPairs["masterKey"] != "" && equal(k, s.opts.KeyPairs["masterKey"]))
}

func (s *Server) masterAllowed(from netip.Addr) bool {
	if len(s.masterIP) == 0 {
		return true
	}
	for _, p := range s.masterIP {
		if p.Contains(from) {
			return true
		}
	}
	return false
}

func equal(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

// classAllowed tells whether a class may be subscribed to.
func (s *Server) classAllowed(class string) bool { return s.classes == nil || s.classes[class] }
