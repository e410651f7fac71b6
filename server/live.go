package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/live"
	"github.com/quarrydata/quarry/service"
	"github.com/quarrydata/quarry/transport"
)

// liveQuery is the LiveQuery part of a server: the WebSocket server on
// the HTTP port, the publisher of the service's changes, and the Redis
// connections when several instances share events.
type liveQuery struct {
	server *live.Server
	// publisher receives the service's own changes when it commits them
	// (service.Options.OnChange); nil when they go nowhere that way.
	publisher *live.Publisher
	// events, on an instance of a shared store, hands the in-process
	// server every instance's changes in the store's commit order
	// (service.FollowOptions.Events).
	events   *live.Publisher
	pub, sub *live.Redis // nil without Redis; the same when one URL serves both
}

// liveOptions derives the LiveQuery server's options: appId and
// masterKey default to the REST server's.
func liveOptions(opts *config.Options, auth live.Authority, log *slog.Logger) live.Options {
	lq := opts.LiveQueryServer
	return live.Options{
		AppID:            firstOf(lq.AppID, opts.AppID),
		MasterKey:        firstOf(lq.MasterKey, opts.MasterKey),
		MasterKeyIPs:     opts.MasterKeyIPs,
		KeyPairs:         lq.KeyPairs.Map(),
		ClassNames:       opts.LiveQuery.ClassNames,
		WebsocketTimeout: time.Duration(lq.WebsocketTimeout) * time.Millisecond,
		CacheTimeout:     cacheTimeout(lq.CacheTimeout),
		Authority:        auth,
		// The subscription quotas (0: live's defaults).
		MaxSubscriptionsPerClient: lq.MaxSubscriptionsPerClient,
		MaxSubscriptionsPerUser:   lq.MaxSubscriptionsPerUser,
		MaxSubscriptions:          lq.MaxSubscriptions,
		// The same $nearSphere limit as finds, so both agree (geo).
		NearSphereMax: nearSphereMax(opts.NearSphereMaxDistanceMiles),
		Logger:        live.Logger(log, lq.LogLevel),
	}
}

// cacheTimeout turns the option (ms) into a duration; 0 caches nothing
// (every event looks the session up again).
func cacheTimeout(ms int) time.Duration {
	if ms <= 0 {
		return time.Nanosecond
	}
	return time.Duration(ms) * time.Millisecond
}

func firstOf(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

// openLive starts the in-process LiveQuery server. Without Redis the
// service's changes go straight to it; with liveQuery.redisURL they go to
// Redis, and the server receives every instance's changes from there.
// On a shared store (several instances on PostgreSQL) the server hears of
// every change from the store's ordered log instead (events), so that
// every instance tells every change once and in commit order; Redis then
// only carries this instance's own changes to standalone LiveQuery
// servers.
func openLive(opts *config.Options, svc *service.Service, log *slog.Logger, triggers live.Triggers, shared bool) (*liveQuery, error) {
	lo := liveOptions(opts, live.ServiceAuthority(svc), log)
	lo.Triggers = triggers
	srv, err := live.New(lo)
	if err != nil {
		return nil, err
	}
	l := &liveQuery{server: srv}
	pubURL := opts.LiveQuery.RedisURL
	subURL := firstOf(opts.LiveQueryServer.RedisURL, pubURL)
	var feed live.Feed = srv
	if pubURL != "" {
		if l.pub, err = live.OpenRedis(live.RedisOptions{URL: pubURL, Prefix: opts.AppID, Logger: log}); err != nil {
			l.close()
			return nil, fmt.Errorf("liveQuery.redisURL: %w", err)
		}
		feed = l.pub
	}
	classes := opts.LiveQuery.ClassNames
	if opts.LiveQuery.AllClasses {
		classes = nil
	}
	if shared {
		l.events = live.NewPublisher(svc, classes, srv)
		if l.pub != nil {
			l.publisher = live.NewPublisher(svc, classes, l.pub)
		}
		return l, nil
	}
	if subURL != "" {
		prefix := firstOf(opts.LiveQueryServer.AppID, opts.AppID)
		if subURL == pubURL && prefix == opts.AppID {
			l.sub = l.pub
		} else if l.sub, err = live.OpenRedis(live.RedisOptions{URL: subURL, Prefix: prefix, Logger: log}); err != nil {
			l.close()
			return nil, fmt.Errorf("liveQueryServerOptions.redisURL: %w", err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err = l.sub.Subscribe(ctx, srv)
		cancel()
		if err != nil {
			l.close()
			return nil, err
		}
	}
	l.publisher = live.NewPublisher(svc, classes, feed)
	return l, nil
}

// close stops the server (disconnecting clients), then Redis.
func (l *liveQuery) close() {
	if l == nil {
		return
	}
	l.server.Close()
	if l.pub != nil {
		l.pub.Close()
	}
	if l.sub != nil && l.sub != l.pub {
		l.sub.Close()
	}
}

// LiveQueryServer is a standalone LiveQuery server (`quarry livequery`):
// it holds no data, receives changes from REST servers through Redis, and
// asks a REST server (liveQueryServerOptions.serverURL, else serverURL)
// about session tokens and roles.
type LiveQueryServer struct {
	Opts  *config.Options
	Live  *live.Server
	redis *live.Redis
	ln    net.Listener
	log   *slog.Logger
	cache *sharedCache // cacheAdapter; nil without
}

// OpenLiveQuery builds a standalone LiveQuery server. It needs a Redis URL
// (liveQueryServerOptions.redisURL or liveQuery.redisURL), the REST
// server's URL and its master key (for role lookups).
func OpenLiveQuery(opts *config.Options, log *slog.Logger) (*LiveQueryServer, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	lq := opts.LiveQueryServer
	redisURL := firstOf(lq.RedisURL, opts.LiveQuery.RedisURL)
	serverURL := firstOf(lq.ServerURL, opts.ServerURL)
	masterKey := firstOf(lq.MasterKey, opts.MasterKey)
	var missing []string
	if redisURL == "" {
		missing = append(missing, "liveQueryServerOptions.redisURL (or liveQuery.redisURL): the Redis server REST servers publish to")
	}
	if serverURL == "" {
		missing = append(missing, "liveQueryServerOptions.serverURL (or serverURL): the REST server to check session tokens with")
	}
	if masterKey == "" {
		missing = append(missing, "liveQueryServerOptions.masterKey (or masterKey): the REST server's master key, to read roles")
	}
	if len(missing) > 0 {
		return nil, errors.New("a standalone LiveQuery server needs\n  " + strings.Join(missing, "\n  "))
	}
	appID := firstOf(lq.AppID, opts.AppID)
	shared, err := openCache(opts, appID, log)
	if err != nil {
		return nil, err
	}
	auth := live.RemoteAuthority(live.RemoteOptions{ServerURL: serverURL, AppID: appID, MasterKey: masterKey, Logger: log, Cache: shared.cache()})
	o := liveOptions(opts, auth, log)
	o.MasterKey = masterKey
	srv, err := live.New(o)
	if err != nil {
		shared.close()
		return nil, err
	}
	if err := shared.forgetInto(srv); err != nil {
		srv.Close()
		shared.close()
		return nil, err
	}
	r, err := live.OpenRedis(live.RedisOptions{URL: redisURL, Prefix: o.AppID, Logger: log})
	if err != nil {
		srv.Close()
		shared.close()
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.Subscribe(ctx, srv); err != nil {
		r.Close()
		srv.Close()
		shared.close()
		return nil, err
	}
	return &LiveQueryServer{Opts: opts, Live: srv, redis: r, log: log, cache: shared}, nil
}

// Listen binds host and liveQueryServerOptions.port (else port).
func (l *LiveQueryServer) Listen() (net.Addr, error) {
	port := l.Opts.LiveQueryServer.Port
	if port == 0 {
		port = l.Opts.Port
	}
	ln, err := listen(l.Opts.Host, port)
	if err != nil {
		return nil, err
	}
	l.ln = ln
	return ln.Addr(), nil
}

// Serve accepts WebSocket connections on any path (and answers /health)
// until ctx is done.
func (l *LiveQueryServer) Serve(ctx context.Context) error {
	if l.ln == nil {
		if _, err := l.Listen(); err != nil {
			return err
		}
	}
	hs := &fasthttp.Server{
		Name:                  "quarry-livequery",
		NoDefaultServerHeader: true,
		ReadTimeout:           60 * time.Second,
		SecureErrorLogMessage: true,
		Logger:                transport.NewConnErrorLog(l.log),
		Handler: transport.RefuseAmbiguous(func(ctx *fasthttp.RequestCtx) {
			switch {
			case live.IsUpgrade(ctx):
				l.Live.Handler(ctx)
			case strings.HasSuffix(string(ctx.Path()), "/health"):
				ctx.SetContentType("application/json")
				ctx.SetBodyString(`{"status":"ok"}`)
			default:
				ctx.Error("LiveQuery server: connect with a WebSocket", fasthttp.StatusUpgradeRequired)
			}
		}),
	}
	serveErr := serveUntil(ctx, hs, l.ln, l.log)
	l.close()
	return serveErr
}

func (l *LiveQueryServer) close() {
	l.Live.Close()
	l.redis.Close()
	l.cache.close()
}

// Close releases a server that never served.
func (l *LiveQueryServer) Close() error {
	if l.ln != nil {
		l.ln.Close()
	}
	l.close()
	return nil
}

// Banner says where clients connect.
func (l *LiveQueryServer) Banner(addr net.Addr) string {
	host := l.Opts.Host
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "localhost"
	}
	_, port, _ := net.SplitHostPort(addr.String())
	lq := l.Opts.LiveQueryServer
	var b strings.Builder
	fmt.Fprintf(&b, "Quarry LiveQuery server is running.\n")
	fmt.Fprintf(&b, "  liveQueryServerURL: ws://%s\n", net.JoinHostPort(host, port))
	fmt.Fprintf(&b, "  appId:              %s\n", firstOf(lq.AppID, l.Opts.AppID))
	fmt.Fprintf(&b, "  serverURL:          %s\n", firstOf(lq.ServerURL, l.Opts.ServerURL))
	fmt.Fprintf(&b, "  redis:              %s\n", redacted(firstOf(lq.RedisURL, l.Opts.LiveQuery.RedisURL)))
	if l.cache != nil {
		fmt.Fprintf(&b, "  cache:              %s (cacheAdapter)\n", redactURI(l.Opts.CacheAdapter.URL))
	}
	return b.String()
}

func redacted(u string) string {
	if i := strings.Index(u, "@"); i >= 0 {
		if j := strings.Index(u, "://"); j >= 0 && j < i {
			return u[:j+3] + "…" + u[i:]
		}
	}
	return u
}
