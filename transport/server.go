// Package transport is Quarry's REST front end on fasthttp: mount path,
// request envelope (JSON bodies of any content type, the JS SDK's
// credentials-in-body and method override, X-Parse-* and X-Svc-* headers,
// basic auth), key checks, CORS, and the mapping of Parse errors to HTTP
// statuses. It holds no business rules: every operation is a service call.
package transport

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/quarrydata/quarry/accounts"
	"github.com/quarrydata/quarry/fileapi"
	"github.com/quarrydata/quarry/hangup"
	"github.com/quarrydata/quarry/idempotency"
	"github.com/quarrydata/quarry/installations"
	"github.com/quarrydata/quarry/jobs"
	"github.com/quarrydata/quarry/logring"
	"github.com/quarrydata/quarry/metrics"
	"github.com/quarrydata/quarry/ratelimit"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
	"github.com/quarrydata/quarry/webhooks"
)

// Options configure the REST front end.
type Options struct {
	AppID             string
	MasterKey         string
	ReadOnlyMasterKey string
	ClientKey         string
	JavaScriptKey     string
	RESTAPIKey        string
	DotNetKey         string
	// MasterKeyIPs lists addresses or CIDR ranges allowed to use the
	// master key; empty allows every address.
	MasterKeyIPs []string
	// MaintenanceKey is maintenanceKey (X-Parse-Maintenance-Key); empty:
	// off. MaintenanceKeyIPs are the addresses or CIDR ranges it is
	// accepted from; empty accepts it from nowhere.
	MaintenanceKey    string
	MaintenanceKeyIPs []string
	// Security is the security check report GET /security answers; nil
	// while security.enableCheck is off (409).
	Security *SecurityReport
	// LockSchemas refuses schema changes through the API (the schema
	// option's lockSchemas).
	LockSchemas bool
	// TrustProxy decides the client address behind proxies (clientip.go).
	TrustProxy   TrustProxy
	MountPath    string   // e.g. "/parse"
	ServerURL    string   // used for Location headers when set
	MaxBodyBytes int      // request body limit (maxUploadSize)
	MaxJSONDepth int      // nesting limit for request bodies
	AllowOrigin  []string // CORS origins; the first is the default, "*" when empty
	AllowHeaders []string
	Logger       *slog.Logger
	// Metrics receives request, query and panic counts and is served at
	// /metrics (beside the mount path); nil counts nothing.
	Metrics *metrics.Metrics
	// MetricsIPs lists addresses or CIDR ranges allowed to read /metrics;
	// empty allows every address.
	MetricsIPs []string
	// MetricsElsewhere keeps /metrics off this server's port: another
	// listener serves MetricsHandler.
	MetricsElsewhere bool
	// Ready is the readiness check of /health (nil: always ready): an
	// error makes it answer 503, so a load balancer sends the traffic
	// elsewhere. It runs on every /health request: it must be cheap.
	Ready func() error
	// RequestLogSample is the share of successful requests given a log
	// line (errors always get one): 1 logs every request, 0 none.
	RequestLogSample float64
	// SlowQuery logs queries that take longer as warnings; 0 never.
	SlowQuery time.Duration
	// ScriptLog holds the recent log entries GET /scriptlog serves.
	ScriptLog *logring.Ring
	// IdempotencyPaths and IdempotencyTTL are idempotencyOptions: POST and
	// PUT requests on these paths (regular expressions below the mount
	// path) are refused with 159 when their request id was seen within the
	// TTL. No paths: off.
	IdempotencyPaths []string
	IdempotencyTTL   time.Duration
	// Requests claims the request ids; nil: one of the service's own.
	Requests *idempotency.Requests
	// Accounts is the accounts component the server registered into the
	// core (its session-extension state is the process's); nil: one of
	// the transport's own.
	Accounts *accounts.Accounts
	// Webhooks keeps the /hooks definitions; nil: one without cloud code
	// (definitions refused with 119).
	Webhooks *webhooks.Registry
	// CloudCode fills service.Auth.Request with each request's headers
	// and address, which cloud code reads (the cloud context is always
	// passed on).
	CloudCode bool
	// Push sends POST /push; nil answers that no push adapter is set.
	Push Pusher
	// Pages configure the email links' pages under <mount>/apps/ (pages.go).
	Pages PagesOptions
	// WebSocket, when set, receives every WebSocket upgrade request, on any
	// path (LiveQuery shares the HTTP server's port).
	WebSocket fasthttp.RequestHandler
	// GraphQL, when set, answers GraphQLPath (at the server root) once the
	// envelope has checked the keys and resolved the session, so GraphQL
	// and REST see the same caller for the same headers.
	GraphQL     func(ctx *fasthttp.RequestCtx, auth service.Auth)
	GraphQLPath string
	// Playground, when set, serves the GraphQL playground page at
	// PlaygroundPath (server root).
	Playground     fasthttp.RequestHandler
	PlaygroundPath string
	// RateLimit refuses requests over the rateLimit rules with 429; nil
	// limits nothing.
	RateLimit *ratelimit.Limiter
	// Unavailable reports why writes cannot commit now (a shared
	// database that cannot be reached), or nil: /health, the readiness
	// probe, answers 503 meanwhile. nil: always ready once serving.
	Unavailable func() error
	// Subscriptions manages the server-side subscriptions of
	// /hooks/subscriptions (package subscribe); nil answers 119.
	Subscriptions Subscriptions
	// GraphQLWebSocket, when set, receives WebSocket upgrades on
	// GraphQLPath (GraphQL subscriptions); other upgrades go to WebSocket.
	GraphQLWebSocket fasthttp.RequestHandler
}

// Server answers the REST API.
type Server struct {
	opts     Options
	svc      *service.Service
	jobs     *jobs.Schedules
	accounts *accounts.Accounts
	requests *idempotency.Requests
	webhooks *webhooks.Registry
	files    *fileapi.Files
	installs *installations.Installations
	table    routeTable
	routes   []route
	masterIP []netip.Prefix
	// maintenanceIP limits who may use the maintenance key.
	maintenanceIP []netip.Prefix
	// trust is TrustProxy compiled (clientip.go).
	trust proxyTrust
	// maintenanceRefused logs maintenance keys sent from other addresses.
	maintenanceRefused *logring.Throttled
	// metricsIP limits who may read /metrics (MetricsIPs).
	metricsIP []netip.Prefix
	log       *slog.Logger
	panics    atomic.Uint64
	// families are the first path segments of the routes (see family).
	// Each maps to itself: a request's family is the kept string.
	families map[string]string
	// lastBase is the last base URL made from a Host header (baseURL).
	lastBase atomic.Pointer[baseURLEntry]
	reqLog   requestLog
	// diskFull logs writes refused on a full disk: once, then a count per
	// refusedWriteLogEvery (thousands a second would flood the log).
	diskFull *logring.Throttled
	// unwritable logs writes refused because the store cannot write.
	unwritable *logring.Throttled
	// allowHeaders is the CORS Access-Control-Allow-Headers value.
	allowHeaders []byte
	// allowOrigin is AllowOrigin as fasthttp takes header values.
	allowOrigin [][]byte
	// mount holds the paths below the mount path that serve compares
	// every request's path with, made once.
	mount struct{ slash, files, apps, health, healthLive string }
	idem  *idempotentPaths // nil when idempotencyOptions.paths is empty
}

// refusedWriteLogEvery is the interval of the count line of writes refused
// for the same cause.
const refusedWriteLogEvery = 10 * time.Second

// Default request limits.
const (
	DefaultMaxBodyBytes = 10 << 20
	DefaultMaxJSONDepth = 64
	// MaxHeaderBytes bounds the request line and headers, as Node does.
	MaxHeaderBytes = 16 << 10
)

// New builds the REST front end over a service.
func New(svc *service.Service, opts Options) (*Server, error) {
	if opts.MountPath == "" {
		opts.MountPath = "/parse"
	}
	opts.MountPath = "/" + strings.Trim(opts.MountPath, "/")
	if opts.MountPath == "/" {
		opts.MountPath = ""
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.MaxJSONDepth <= 0 {
		opts.MaxJSONDepth = DefaultMaxJSONDepth
	}
	if len(opts.AllowOrigin) == 0 {
		opts.AllowOrigin = []string{"*"}
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Requests == nil {
		opts.Requests = idempotency.New(svc)
	}
	if opts.Accounts == nil {
		opts.Accounts = accounts.New(svc)
	}
	if opts.Webhooks == nil {
		opts.Webhooks = webhooks.New(svc, nil)
	}
	s := &Server{opts: opts, svc: svc, jobs: jobs.New(svc, opts.Requests), accounts: opts.Accounts, requests: opts.Requests, webhooks: opts.Webhooks, files: fileapi.New(svc), installs: installations.New(svc), log: opts.Logger,
		reqLog:       requestLog{sample: opts.RequestLogSample, slow: opts.SlowQuery},
		allowHeaders: []byte(corsAllowHeaders(opts.AllowHeaders))}
	s.diskFull = logring.NewThrottled(s.log, slog.LevelError, "write refused: the data file's disk is full", refusedWriteLogEvery)
	s.unwritable = logring.NewThrottled(s.log, slog.LevelError,
		"the data file cannot be written (deleted, moved or a failed fsync): writes are refused and /health is unready; restart on a sound file",
		refusedWriteLogEvery)
	s.mount.slash, s.mount.files, s.mount.apps = opts.MountPath+"/", opts.MountPath+"/files", opts.MountPath+"/apps/"
	s.mount.health, s.mount.healthLive = opts.MountPath+"/health", opts.MountPath+"/health/live"
	for _, o := range opts.AllowOrigin {
		s.allowOrigin = append(s.allowOrigin, []byte(o))
	}
	for _, ip := range opts.MasterKeyIPs {
		p, err := parseIPOrPrefix(ip)
		if err != nil {
			return nil, fmt.Errorf("masterKeyIps: %w", err)
		}
		s.masterIP = append(s.masterIP, p)
	}
	for _, ip := range opts.MaintenanceKeyIPs {
		p, err := parseIPOrPrefix(ip)
		if err != nil {
			return nil, fmt.Errorf("maintenanceKeyIps: %w", err)
		}
		s.maintenanceIP = append(s.maintenanceIP, p)
	}
	trust, err := compileTrustProxy(opts.TrustProxy)
	if err != nil {
		return nil, err
	}
	s.trust = trust
	s.maintenanceRefused = logring.NewThrottled(s.log, slog.LevelError,
		"request using the maintenance key refused: its client address is not in maintenanceKeyIps", refusedWriteLogEvery)
	for _, ip := range opts.MetricsIPs {
		p, err := parseIPOrPrefix(ip)
		if err != nil {
			return nil, fmt.Errorf("metricsIps: %w", err)
		}
		s.metricsIP = append(s.metricsIP, p)
	}
	s.registerRoutes()
	idem, err := newIdempotency(opts.IdempotencyPaths, opts.IdempotencyTTL)
	if err != nil {
		return nil, fmt.Errorf("idempotencyOptions.paths: %w", err)
	}
	s.idem = idem
	return s, nil
}

func parseIPOrPrefix(s string) (netip.Prefix, error) {
	if strings.Contains(s, "/") {
		return netip.ParsePrefix(s)
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, err
	}
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// Handler is the fasthttp entry point.
func (s *Server) Handler() fasthttp.RequestHandler { return s.serve }

// NewHTTPServer wraps the handler in a fasthttp.Server with Quarry's limits.
func (s *Server) NewHTTPServer() *fasthttp.Server {
	return &fasthttp.Server{
		Handler: s.serve,
		// A client may not hold a connection without finishing a request:
		// it would keep shutdown waiting and is a slow-loris door.
		ReadTimeout:        60 * time.Second,
		WriteTimeout:       60 * time.Second,
		IdleTimeout:        120 * time.Second,
		Name:               "quarry",
		MaxRequestBodySize: s.opts.MaxBodyBytes + 64<<10,
		// Node reads 16 KiB of request line and headers: a long where in
		// the URL or a long (wrong) key must reach the handler.
		ReadBufferSize:        MaxHeaderBytes,
		NoDefaultServerHeader: true,
		NoDefaultContentType:  true,
		SecureErrorLogMessage: true,
		Logger:                NewConnErrorLog(s.log),
		ErrorHandler: func(ctx *fasthttp.RequestCtx, err error) {
			// Oversized or unparseable HTTP: still answer in Parse's shape.
			ctx.Response.Reset()
			s.cors(ctx)
			status := fasthttp.StatusBadRequest
			msg := "bad request"
			var small *fasthttp.ErrSmallBuffer
			switch {
			case errors.Is(err, fasthttp.ErrBodyTooLarge):
				status = fasthttp.StatusRequestEntityTooLarge
				msg = "request entity too large"
			case errors.As(err, &small):
				writeJSON(ctx, fasthttp.StatusRequestHeaderFieldsTooLarge, map[string]any{"code": schema.CodeInvalidJSON,
					"error": fmt.Sprintf("The request line and headers are larger than %d KiB.", MaxHeaderBytes>>10)})
				return
			}
			writeJSON(ctx, status, map[string]any{"error": msg})
		},
	}
}

func (s *Server) serve(ctx *fasthttp.RequestCtx) {
	if why := ambiguity(ctx); why != "" {
		s.refuseBadRequest(ctx, why) // framing.go
		return
	}
	// One pass over the request's headers reads all the server looks at.
	hdr := readRequestHeaders(&ctx.Request.Header)
	if len(hdr.upgrade) > 0 && isWebSocketUpgrade(ctx) {
		if s.opts.GraphQLWebSocket != nil && string(ctx.Path()) == s.opts.GraphQLPath {
			s.opts.GraphQLWebSocket(ctx)
			return
		}
		if s.opts.WebSocket != nil {
			s.opts.WebSocket(ctx)
			return
		}
		s.log.Warn("livequery: WebSocket upgrade refused: LiveQuery is off", "remote", ctx.RemoteAddr().String(), "path", logPath(string(ctx.Path())))
		s.cors(ctx)
		writeJSON(ctx, fasthttp.StatusNotFound, map[string]any{"code": schema.CodeCommandUnavailable,
			"error": "LiveQuery is not enabled on this server: start it with --liveQuery.classNames Class1,Class2 " +
				"(or liveQuery.classNames in the config file) to subscribe to those classes."})
		return
	}
	// fasthttp has just read the clock for this request.
	start := ctx.Time()
	if start.IsZero() {
		start = time.Now()
	}
	defer s.finish(ctx, start, hdr.requestID)
	defer s.recoverPanic(ctx)
	s.corsFor(ctx, hdr.origin)
	if ctx.IsOptions() {
		ctx.SetStatusCode(fasthttp.StatusOK)
		ctx.SetBodyString("OK")
		return
	}
	path := string(ctx.Path())
	if trimmed := strings.TrimRight(path, "/"); trimmed != path && strings.HasPrefix(trimmed, s.mount.slash) {
		// Like Parse Server (express), a trailing slash names the same
		// route: the JS SDK lists schemas with GET /schemas/.
		path = trimmed
		ctx.URI().SetPath(path)
	}
	if path == "/metrics" && s.opts.Metrics != nil && !s.opts.MetricsElsewhere {
		s.serveMetrics(ctx)
		return
	}
	if path == "/health/live" || path == s.mount.healthLive {
		// Liveness never depends on the store (see server.Starting).
		writeJSON(ctx, fasthttp.StatusOK, map[string]any{"status": "ok"})
		return
	}
	if path == "/health" || path == s.mount.health {
		s.serveHealth(ctx)
		return
	}
	if s.limitFiles(ctx, path) || s.serveFiles(ctx, path) {
		return
	}
	if s.servePages(ctx, path) { // pages.go
		return
	}
	if s.opts.GraphQL != nil && path == s.opts.GraphQLPath {
		s.serveGraphQL(ctx)
		return
	}
	if s.opts.Playground != nil && path == s.opts.PlaygroundPath {
		s.opts.Playground(ctx)
		return
	}
	var c *call
	if strings.HasPrefix(path, s.mount.slash) {
		// The envelope runs before routing: the JS SDK's _method decides
		// which route a POST really is.
		var err error
		c, err = s.unwrap(ctx, &hdr)
		if err == nil {
			c.path = path
			// After the envelope (its _method is the method counted),
			// before the session lookup a flood would cost.
			if s.opts.RateLimit != nil {
				c.ip = s.clientIP(ctx) // only rate limits read it
			}
			err = s.limit(c, string(ctx.Method()), strings.TrimPrefix(path, s.opts.MountPath))
		}
		if err == nil && !sessionExempt[strings.TrimPrefix(path, s.opts.MountPath)] {
			c.auth, err = s.svc.Authenticate(c.auth)
		}
		if err == nil {
			if c.claimed = s.idem.requestID(ctx, strings.TrimPrefix(path, s.opts.MountPath)); c.claimed != "" {
				err = s.requests.ClaimRequest(c.claimed, s.idem.ttl)
				if err != nil {
					c.claimed = ""
				}
			}
		}
		if err != nil {
			s.writeError(ctx, err)
			return
		}
		// A query of a class kept in PostgreSQL stops when its client
		// hangs up (nothing is watched for work answered from memory).
		clientGone := hangup.Watch(ctx.Conn())
		defer clientGone.Stop()
		c.auth = c.auth.WithContext(clientGone)
		ctx.SetUserValue(callKey, c)
	}
	s.route(ctx, c, path)
}

// serveGraphQL runs the envelope and the session lookup, then hands the
// request to the GraphQL front end.
func (s *Server) serveGraphQL(ctx *fasthttp.RequestCtx) {
	// A GraphQL multipart request (file uploads) carries its credentials
	// in headers: the envelope must not read the files as JSON. An empty
	// object stands in (an empty body would read as the form fasthttp
	// has already parsed).
	multipart := bytes.HasPrefix(ctx.Request.Header.ContentType(), []byte("multipart/form-data"))
	var raw []byte
	if multipart {
		raw = ctx.Request.SwapBody([]byte("{}"))
	}
	c, err := s.envelope(ctx)
	if multipart {
		ctx.Request.SwapBody(raw)
	}
	if pe, ok := schema.AsError(err); ok && pe.Code == schema.CodeInvalidJSON && !multipart {
		// The keys were good and GraphQL's keys travel in headers: a body
		// that is not JSON is GraphQL's to answer, as Apollo does (400,
		// BAD_REQUEST), not REST's 107.
		raw = ctx.Request.SwapBody([]byte("{}"))
		c, err = s.envelope(ctx)
		ctx.Request.SwapBody(raw)
	}
	if err == nil {
		c.auth, err = s.svc.Authenticate(c.auth)
	}
	if err != nil {
		s.writeError(ctx, err)
		return
	}
	defer s.forwardedPeer(ctx)() // clientip.go
	s.opts.GraphQL(ctx, c.auth)
}

// AuthenticateHeaders checks credentials that arrive outside an HTTP
// request, named as its headers would be (a GraphQL socket's
// connection_init payload), exactly as the envelope checks a request's:
// application id, keys, master key addresses, then the session.
func (s *Server) AuthenticateHeaders(headers map[string]string, remote net.Addr) (service.Auth, error) {
	var ctx fasthttp.RequestCtx
	ctx.Init(&fasthttp.Request{}, remote, nil)
	ctx.Request.Header.SetMethod(fasthttp.MethodGet)
	for k, v := range headers {
		ctx.Request.Header.Set(k, v)
	}
	c, err := s.envelope(&ctx)
	if err != nil {
		return service.Auth{}, err
	}
	return s.svc.Authenticate(c.auth)
}

// serveHealth answers the readiness probe: 200 {"status":"ok"}, or 503
// with Retry-After when Ready reports that the server cannot serve writes
// (the cause goes to the log, not to the prober).
func (s *Server) serveHealth(ctx *fasthttp.RequestCtx) {
	if s.opts.Unavailable != nil && s.opts.Unavailable() != nil {
		// The shared database cannot be reached: the balancer sends the
		// writes elsewhere.
		ctx.Response.Header.Set("Retry-After", retryAfterUnavailable)
		writeJSON(ctx, fasthttp.StatusServiceUnavailable, map[string]any{"status": "error", "error": msgUnavailable})
		return
	}
	if s.opts.Ready != nil {
		if err := s.opts.Ready(); err != nil {
			s.unwritable.Log("err", err)
			ctx.Response.Header.Set("Retry-After", retryAfterSeconds)
			writeJSON(ctx, fasthttp.StatusServiceUnavailable, map[string]any{"status": "unavailable",
				"error": "The server cannot write its data."})
			return
		}
	}
	writeJSON(ctx, fasthttp.StatusOK, map[string]any{"status": "ok"})
}

// recoverPanic keeps a bug in one request from taking the server down: the
// request is answered 500 in Parse's shape, the stack goes to the log, and
// Panics counts it.
func (s *Server) recoverPanic(ctx *fasthttp.RequestCtx) {
	v := recover()
	if v == nil {
		return
	}
	s.panics.Add(1)
	s.opts.Metrics.Panic()
	s.log.Error("panic while serving a request", "method", logMethod(string(ctx.Method())), "path", logPath(string(ctx.Path())),
		"panic", fmt.Sprint(v), "stack", string(debug.Stack()))
	ctx.Response.Reset()
	s.cors(ctx)
	writeJSON(ctx, fasthttp.StatusInternalServerError, map[string]any{"code": schema.CodeInternalServerError, "message": "Internal server error."})
}

// Panics counts the requests that panicked since the server started.
func (s *Server) Panics() uint64 { return s.panics.Load() }

// isWebSocketUpgrade reports whether a request asks to switch to the
// WebSocket protocol (Connection: Upgrade, Upgrade: websocket).
func isWebSocketUpgrade(ctx *fasthttp.RequestCtx) bool {
	h := &ctx.Request.Header
	return h.ConnectionUpgrade() && strings.EqualFold(strings.TrimSpace(string(h.Peek("Upgrade"))), "websocket")
}

func (s *Server) cors(ctx *fasthttp.RequestCtx) {
	s.corsFor(ctx, ctx.Request.Header.Peek("Origin"))
}

// The CORS headers' names and fixed values, as fasthttp keeps them (in
// canonical form: set without normalizing or copying per request).
var (
	headerAllowOrigin   = []byte("Access-Control-Allow-Origin")
	headerAllowMethods  = []byte("Access-Control-Allow-Methods")
	headerAllowHeaders  = []byte("Access-Control-Allow-Headers")
	headerExposeHeaders = []byte("Access-Control-Expose-Headers")
	corsMethods         = []byte("GET,PUT,POST,DELETE,OPTIONS")
	// The JS SDK splits this list on ", " exactly.
	corsExposed = []byte("X-Parse-Job-Status-Id, X-Parse-Push-Status-Id")
)

// corsFor sets the CORS headers of a request whose Origin header is
// origin: the request's origin when it is allowed, else the first allowed.
func (s *Server) corsFor(ctx *fasthttp.RequestCtx, origin []byte) {
	h := &ctx.Response.Header
	allowed := s.allowOrigin[0]
	if len(origin) > 0 {
		for _, o := range s.allowOrigin[1:] {
			if bytes.Equal(o, origin) {
				allowed = o
				break
			}
		}
	}
	h.SetCanonical(headerAllowOrigin, allowed)
	h.SetCanonical(headerAllowMethods, corsMethods)
	h.SetCanonical(headerAllowHeaders, s.allowHeaders)
	h.SetCanonical(headerExposeHeaders, corsExposed)
}

// corsAllowHeaders is Access-Control-Allow-Headers: the headers Parse
// clients send, under both prefixes, and the operator's extra ones. It is
// made once (New), not per request.
func corsAllowHeaders(extra []string) string {
	allow := "X-Parse-Master-Key, X-Parse-REST-API-Key, X-Parse-Javascript-Key, X-Parse-Application-Id, " +
		"X-Parse-Client-Version, X-Parse-Session-Token, X-Requested-With, X-Parse-Revocable-Session, " +
		"X-Parse-Request-Id, X-Parse-Installation-Id, X-Parse-Client-Key, X-Parse-Cloud-Context, " +
		"X-Svc-Master-Key, X-Svc-REST-API-Key, X-Svc-Javascript-Key, X-Svc-Application-Id, X-Svc-Client-Version, " +
		"X-Svc-Session-Token, X-Svc-Revocable-Session, X-Svc-Request-Id, X-Svc-Installation-Id, X-Svc-Client-Key, " +
		"X-Quarry-Read-After-Writes, Content-Type, Pragma, Cache-Control, Authorization"
	for _, e := range extra {
		allow += ", " + e
	}
	return allow
}

func (s *Server) masterAllowed(ctx *fasthttp.RequestCtx) bool {
	return s.clientAllowed(ctx, s.masterIP)
}

// allowedFrom reports whether the request comes from one of prefixes; an
// empty list allows every address.
func allowedFrom(ctx *fasthttp.RequestCtx, prefixes []netip.Prefix) bool {
	if len(prefixes) == 0 {
		return true
	}
	a, ok := netip.AddrFromSlice(ctx.RemoteIP())
	if !ok {
		return false
	}
	a = a.Unmap()
	for _, p := range prefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// serveMetrics answers /metrics to the addresses MetricsIPs allows.
func (s *Server) serveMetrics(ctx *fasthttp.RequestCtx) {
	if !allowedFrom(ctx, s.metricsIP) {
		writeJSON(ctx, fasthttp.StatusForbidden, map[string]any{"error": "unauthorized: metrics are not served to this address"})
		return
	}
	s.opts.Metrics.Handler()(ctx)
}

// MetricsHandler serves /metrics alone, for a listener of its own
// (metricsPort); every other path is 404.
func (s *Server) MetricsHandler() fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		if string(ctx.Path()) != "/metrics" || s.opts.Metrics == nil {
			writeJSON(ctx, fasthttp.StatusNotFound, map[string]any{"error": "not found: this port serves /metrics only"})
			return
		}
		s.serveMetrics(ctx)
	}
}
