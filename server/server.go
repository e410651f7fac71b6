// Package server wires Quarry together: options → store → service →
// front ends, listening, the start-up banner, and orderly shutdown. It is
// what cmd/quarry runs and what tests start in-process.
package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	neturl "net/url"
	"os"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/quarrydata/quarry/access"
	"github.com/quarrydata/quarry/accounts"
	"github.com/quarrydata/quarry/cloud"
	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/email"
	"github.com/quarrydata/quarry/geo"
	"github.com/quarrydata/quarry/graphql"
	"github.com/quarrydata/quarry/idempotency"
	"github.com/quarrydata/quarry/live"
	"github.com/quarrydata/quarry/logring"
	"github.com/quarrydata/quarry/metrics"
	"github.com/quarrydata/quarry/outbound"
	"github.com/quarrydata/quarry/push"
	"github.com/quarrydata/quarry/ratelimit"
	"github.com/quarrydata/quarry/service"
	"github.com/quarrydata/quarry/store"
	_ "github.com/quarrydata/quarry/store/postgres" // registers postgres:// database URIs
	"github.com/quarrydata/quarry/subscribe"
	"github.com/quarrydata/quarry/transport"
)

// Server is a running Quarry instance.
type Server struct {
	Opts    *config.Options
	Service *service.Service
	REST    *transport.Server
	// Live is the in-process LiveQuery server, nil unless
	// liveQuery.classNames is set.
	Live *live.Server
	// Metrics are served at /metrics.
	Metrics *metrics.Metrics
	// Push sends POST /push and scheduled pushes; nil without push.adapter.
	Push *push.Sender
	// Requests claims request ids (idempotencyOptions, scheduled job runs).
	Requests *idempotency.Requests
	live     *liveQuery
	store    store.Adapter
	ln       net.Listener
	log      *slog.Logger
	// keyGenerated is set when Quarry made the master key (the development
	// start): only then does the banner show it.
	keyGenerated bool
	pprofLn      net.Listener   // pprofAddress, bound by Listen
	metricsLn    net.Listener   // metricsPort, bound by Listen
	scripts      *cloud.Scripts // the cloud option's JavaScript; nil without
	files        *fileStore     // file URLs' base; a temporary files directory
	links        *linkBase      // the base of links in emails (email.go)
	limiter      *ratelimit.Limiter
	cache        *sharedCache       // cacheAdapter; nil without
	subs         *subscribe.Manager // server-side subscriptions (subscriptions.go)
	mailQueue    *email.Queue       // retries emails; nil without emailAdapter (email.go)
	graphql      *graphql.Handler   // nil unless mountGraphQL
	stopMemtune  func()             // ends this server's use of the GC headroom policy
}

// ShutdownGrace is how long shutdown waits for requests in flight.
const ShutdownGrace = 5 * time.Second

// masterKeyMeta names the generated master key in the store's settings.
const masterKeyMeta = "masterKey"

// Open builds a server from options: it opens the store, loads it, and
// generates (once) and keeps a master key when none is configured.
func Open(opts *config.Options, log *slog.Logger) (*Server, error) {
	return OpenWithCloud(opts, log, nil)
}

// OpenWithCloud is Open with cloud code defined in Go: reg's functions,
// jobs and triggers run beside those of the cloud option's main.js.
func OpenWithCloud(opts *config.Options, log *slog.Logger, reg *cloud.Registry) (_ *Server, err error) {
	// undo closes what has been opened, last first, when a later step fails.
	var undo []func()
	defer func() {
		if err != nil {
			for i := len(undo) - 1; i >= 0; i-- {
				undo[i]()
			}
		}
	}()
	if log == nil {
		// Discarded without being formatted first: every request's log
		// line would otherwise be rendered as text for io.Discard.
		log = slog.New(slog.DiscardHandler)
	}
	// Recent entries are kept for Parse Dashboard's Logs page (/scriptlog).
	ring := logring.New(logring.DefaultSize)
	log = slog.New(logring.Tee(log.Handler(), ring, slog.LevelInfo))
	m := metrics.New()
	filesOpts, fileStore, err := openFiles(opts, log)
	if err != nil {
		return nil, err
	}
	undo = append(undo, fileStore.close)
	mailer, err := openMailer(opts) // email.go
	if err != nil {
		return nil, err
	}
	mailQueue := queueMail(mailer, opts, log, m) // email.go
	if mailQueue != nil {
		mailer = mailQueue
		undo = append(undo, func() { mailQueue.Close(context.Background()) })
	}
	authFunctions := &authFunctions{}
	authProviders, err := openAuth(opts, authFunctions) // auth.go
	if err != nil {
		return nil, err
	}
	links := &linkBase{opts: opts}
	// A large store takes a while to read and index: say so before, during
	// (LoadProgress) and after, so a quiet start never looks like a hang.
	loadStart := time.Now()
	log.Info("opening the database (the API answers 503 until it is loaded)", "databaseURI", redactURI(opts.DatabaseURI))
	adapter, err := store.Open(opts.DatabaseURI)
	if err != nil {
		return nil, err
	}
	undo = append(undo, func() { adapter.Close() })
	if err := keepChanges(opts, adapter); err != nil { // subscriptions.go
		return nil, err
	}
	// LiveQuery's publisher is known once the service is open (delivery.go).
	publish := &liveConsumer{}
	subsConsumer := &subscriptionsConsumer{} // subscriptions.go
	// Cloud code defined in Go or JavaScript fills the request's headers
	// for it; webhooks (/hooks) may be defined at any time, so a registry
	// always exists.
	cloudCode := reg != nil || opts.Cloud != ""
	if reg == nil {
		reg = cloud.New(log, time.Duration(opts.CloudCodeTimeout)*time.Millisecond)
	}
	reg.SetWebhookKey(opts.WebhookKey)
	allow, err := outbound.ParseAllow(opts.OutboundAllowList)
	if err != nil {
		return nil, err
	}
	policy := outbound.Policy{AllowPrivate: opts.OutboundAllowPrivate, Allow: allow}
	reg.SetOutboundPolicy(policy)
	var hooks service.Hooks = reg
	observeCloud(m, reg)
	shared, err := openCache(opts, opts.AppID, log)
	if err != nil {
		return nil, err
	}
	undo = append(undo, shared.close)
	sets, err := opts.ProtectedFieldSets()
	if err != nil {
		return nil, fmt.Errorf("protectedFields: %w", err)
	}
	var protected access.Protected
	if sets != nil {
		protected = access.Protected(sets)
	}
	svc, err := service.Open(adapter, service.Options{
		Hooks:                     hooks,
		DefaultLimit:              opts.DefaultLimit,
		MaxLimit:                  opts.MaxLimit,
		BatchSize:                 opts.BatchSize,
		AllowClientClassCreation:  opts.AllowClientClassCreation,
		QueryReadAfterWrites:      opts.QueryReadAfterWrites,
		MaxScan:                   opts.MaxScan,
		PasswordHashCost:          opts.PasswordHashCost,
		PrivateUsers:              opts.EnforcePrivateUsers,
		LowercaseUsernames:        opts.ConvertUsernameToLowercase,
		ProtectedFields:           protected,
		AllowCustomObjectID:       opts.AllowCustomObjectID,
		Denylist:                  denylist(opts.RequestKeywordDenylist),
		AllowExpiredAuthDataToken: opts.AllowExpiredAuthDataToken,
		AllowPublicExplain:        opts.AllowPublicExplain(),
		ObjectIDSize:              opts.ObjectIDSize,
		LowercaseEmails:           opts.ConvertEmailToLowercase,
		SessionLength:             opts.SessionLength,
		Now:                       opts.Now,
		Auth:                      authProviders,
		ScanBudgetForMaster:       opts.MaxScanMasterKey,
		ScanBudgetWarnOnly:        opts.MaxScanWarnOnly,
		NearSphereMaxDistance:     nearSphereMax(opts.NearSphereMaxDistanceMiles),
		Indexes:                   opts.Indexes,
		SQLClasses:                opts.SQLClasses,
		SQLClassesOver:            opts.SQLClassesOver,
		Files:                     filesOpts,
		Accounts:                  accountOptions(opts, mailer, links, log),
		Warn:                      func(msg string) { log.Warn(msg) },
		ChangeConsumers:           changeConsumers(shared, publish, liveQueryOn(opts), subsConsumer, opts.MaxServerSubscriptions > 0), // delivery.go
		RecordPrevious:            opts.MaxServerSubscriptions > 0,                                                                    // server-side subscriptions replay the change log
		OnSchemaChange:            shared.schemaChanged,
		LoadProgress: func(objects int) {
			log.Info("loading the database", "objectsRead", objects, "seconds", loadSeconds(loadStart))
		},
	})
	if err != nil {
		if errors.Is(err, store.ErrDamaged) {
			return nil, fmt.Errorf("%w in %s. Nothing was changed; restore the file from a backup, "+
				"or move it aside to start with an empty database", err, redactURI(opts.DatabaseURI))
		}
		return nil, err
	}
	log.Info("database loaded and indexed", "seconds", loadSeconds(loadStart))
	authFunctions.svc.Store(svc)
	// The accounts component's parts of the core's work (before serving).
	acc := accounts.New(svc)
	svc.SetPasswordPolicy(acc)
	if opts.ExtendSessionOnUse {
		svc.OnSessionUse(acc.ExtendSession)
	}
	undo = append(undo, func() { svc.CloseChanges(0) })
	observeChanges(m, svc)
	subs, err := openSubscriptions(opts, svc, adapter, policy, log, subsConsumer)
	if err != nil {
		return nil, err
	}
	undo = append(undo, func() { subs.Close() })
	var subsAPI transport.Subscriptions
	if opts.MaxServerSubscriptions > 0 {
		subsAPI = subscriptionsAPI{subs}
	}
	// The GC headroom policy starts on the loaded data: while the store
	// is read and the indexes are built the heap grows fast and makes
	// garbage in bulk, which Go's default pace (and the load's GOGC 400)
	// collects with far fewer collections.
	stopMemtune := startMemtune(opts.GCHeadroomPercent, log)
	undo = append(undo, stopMemtune)
	if kept := svc.SQLClasses(); len(kept) > 0 {
		log.Info("classes kept out of memory, queried in PostgreSQL", "classes", strings.Join(kept, ","))
	}
	scripts, err := startCloud(reg, svc, opts, log)
	if err != nil {
		return nil, err
	}
	warnMissingFunctions(opts, reg.FunctionNames(), log) // auth.go
	undo = append(undo, scripts.Close)
	if err := validateAuthOptions(opts, svc); err != nil { // auth.go
		return nil, err
	}
	if err := applySchemaOption(opts, svc, log); err != nil { // requests.go
		return nil, err
	}
	warnDatabaseOptions(opts, log)
	keyGenerated := opts.MasterKey == ""
	if keyGenerated {
		key, err := keptMasterKey(svc)
		if err != nil {
			return nil, err
		}
		opts.MasterKey = key
	}
	var lq *liveQuery
	var upgrade fasthttp.RequestHandler
	if liveQueryOn(opts) {
		_, sharedStore := adapter.(store.OwnFollower)
		if lq, err = openLive(opts, svc, log, newLiveTriggers(reg, svc), sharedStore); err != nil {
			return nil, fmt.Errorf("liveQuery: %w", err)
		}
		undo = append(undo, lq.close)
		upgrade = lq.server.Handler
		if lq.publisher != nil {
			publish.p.Store(lq.publisher)
		}
		observeLive(m, lq.server, lq.pub)
		if err := shared.forgetInto(lq.server); err != nil {
			return nil, err
		}
	}
	observeStore(m, adapter)
	sender, err := openPush(opts, svc, log)
	if err != nil {
		return nil, err
	}
	var pusher transport.Pusher
	if sender != nil {
		pusher = sender
		reg.SetPusher(sender) // Parse.Push.send in cloud code
		undo = append(undo, sender.Close)
	}
	limiter, err := openRateLimit(opts, reg, log)
	reg.SetRateLimiter(limiter)
	if err != nil {
		return nil, err
	}
	undo = append(undo, func() { limiter.Close() })
	var rest *transport.Server
	gql, err := mountGraphQL(opts, svc, reg.FunctionNames, log, graphQLEvents(lq, opts),
		func(headers map[string]string, remote net.Addr) (service.Auth, error) {
			return rest.AuthenticateHeaders(headers, remote)
		}, limiter)
	if err != nil {
		return nil, err
	}
	var gqlServe func(*fasthttp.RequestCtx, service.Auth)
	var gqlSocket fasthttp.RequestHandler
	if gql != nil {
		gqlServe, gqlSocket = gql.Serve, gql.ServeWebSocket
	}
	pages, err := pagesOptions(opts)
	if err != nil {
		return nil, err
	}
	requests := idempotency.New(svc)
	rest, err = transport.New(svc, transport.Options{
		AppID: opts.AppID, MasterKey: opts.MasterKey, ReadOnlyMasterKey: opts.ReadOnlyMasterKey,
		ClientKey: opts.ClientKey, JavaScriptKey: opts.JavaScriptKey, RESTAPIKey: opts.RESTAPIKey,
		DotNetKey: opts.DotNetKey, MasterKeyIPs: opts.MasterKeyIPs, MountPath: opts.MountPath,
		MaintenanceKey: opts.MaintenanceKey, MaintenanceKeyIPs: opts.MaintenanceKeyIPs,
		TrustProxy: transport.TrustProxy(opts.TrustProxy), LockSchemas: opts.SchemaSwitch("lockSchemas"),
		Security:  securityReport(opts, log),
		ServerURL: opts.PublicServerURL, MaxBodyBytes: int(opts.MaxUploadSize), MaxJSONDepth: opts.MaxJSONDepth,
		AllowOrigin: opts.AllowOrigin, AllowHeaders: opts.AllowHeaders, Logger: log,
		WebSocket: upgrade, Metrics: m, MetricsIPs: opts.MetricsIPs, MetricsElsewhere: opts.MetricsPort != 0, ScriptLog: ring,
		Ready:            storeReady(adapter),
		RequestLogSample: float64(opts.RequestLogPercent) / 100,
		IdempotencyPaths: opts.Idempotency.Paths,
		IdempotencyTTL:   time.Duration(opts.Idempotency.TTL) * time.Second,
		Requests:         requests,
		Accounts:         acc,
		Webhooks:         reg.Webhooks(), // made by startCloud's Attach
		SlowQuery:        time.Duration(opts.SlowQueryMs) * time.Millisecond,
		CloudCode:        cloudCode,
		Push:             pusher,
		Pages:            pages,
		GraphQL:          gqlServe,
		GraphQLPath:      opts.GraphQLPath,
		Playground:       mountPlayground(opts),
		PlaygroundPath:   opts.PlaygroundPath,
		RateLimit:        limiter,
		GraphQLWebSocket: gqlSocket,
		Unavailable:      unavailableOf(adapter),
		Subscriptions:    subsAPI,
	})
	if err != nil {
		return nil, err
	}
	if l, ok := adapter.(interface{ SetLogf(func(string, ...any)) }); ok {
		l.SetLogf(func(format string, args ...any) { log.Warn(fmt.Sprintf(format, args...)) })
	}
	// A shared store (PostgreSQL): follow the other instances' commits.
	// LiveQuery hears of every change, this instance's own included, from
	// the store's log in its order (live.go).
	follow := service.FollowOptions{Announce: opts.LiveQuery.RedisURL == ""}
	if lq != nil && lq.events != nil {
		follow = service.FollowOptions{Events: lq.events.OnChange, EventsLost: func(classes []string) { lq.events.Lost(classes, 0) }}
	}
	if _, err := svc.Follow(follow); err != nil {
		return nil, err
	}
	srv := &Server{Opts: opts, Service: svc, REST: rest, Requests: requests, Metrics: m, live: lq, store: adapter, log: log, keyGenerated: keyGenerated, stopMemtune: stopMemtune,
		scripts: scripts, files: fileStore, Push: sender, links: links, limiter: limiter, graphql: gql}
	srv.mailQueue = mailQueue
	if lq != nil {
		srv.Live = lq.server
	}
	srv.cache = shared
	srv.subs = subs
	return srv, nil
}

// mountGraphQL returns the GraphQL front end's handler when mountGraphQL
// is on, nil otherwise. The custom schema (graphQLCustomTypeDefs and the
// graphQLSchema file) is checked now, so a mistake stops the start.
func mountGraphQL(opts *config.Options, svc *service.Service, functionNames func() []string, log *slog.Logger,
	events graphql.Events, authenticate func(map[string]string, net.Addr) (service.Auth, error), limiter *ratelimit.Limiter) (*graphql.Handler, error) {
	if !opts.MountGraphQL {
		return nil, nil
	}
	custom := opts.GraphQLCustomTypeDefs
	if opts.GraphQLSchema != "" {
		b, err := os.ReadFile(opts.GraphQLSchema)
		if err != nil {
			return nil, fmt.Errorf("graphQLSchema: %w", err)
		}
		custom += "\n" + string(b)
	}
	h := graphql.New(svc, graphql.Options{
		PublicIntrospection: opts.GraphQLPublicIntrospection,
		MaxDepth:            opts.GraphQLMaxDepth,
		MaxAliases:          opts.GraphQLMaxAliases,
		MaxFields:           opts.GraphQLMaxFields,
		MaxComplexity:       opts.GraphQLMaxComplexity,
		CustomTypeDefs:      custom,
		FunctionNames:       functionNames,
		Logger:              log,
		Events:              events,
		Authenticate:        authenticate,
		RateLimit:           limiter,
		LockSchemas:         opts.SchemaSwitch("lockSchemas"),
	})
	if _, err := h.SDL(); err != nil {
		return nil, fmt.Errorf("graphQLCustomTypeDefs: %w", err)
	}
	return h, nil
}

// mountPlayground returns the GraphQL playground's handler when both
// mountPlayground and mountGraphQL are on, nil otherwise.
func mountPlayground(opts *config.Options) fasthttp.RequestHandler {
	if !opts.MountPlayground || !opts.MountGraphQL {
		return nil
	}
	return graphql.Playground(opts.GraphQLPath, opts.AppID, opts.MasterKey)
}

func keptMasterKey(svc *service.Service) (string, error) {
	if b, ok := svc.Meta(masterKeyMeta); ok && len(b) > 0 {
		return string(b), nil
	}
	var raw [24]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", err
	}
	key := hex.EncodeToString(raw[:])
	if err := svc.SetMeta(masterKeyMeta, []byte(key)); err != nil {
		return "", fmt.Errorf("keeping the generated master key: %w", err)
	}
	return key, nil
}

// Listen binds the configured host and port (port 0 picks a free one),
// unless Starting.Ready handed a bound port over, and the profiler's.
func (s *Server) Listen() (net.Addr, error) {
	ln := s.ln
	if ln == nil {
		var err error
		if ln, err = listen(s.Opts.Host, s.Opts.Port); err != nil {
			return nil, err
		}
	}
	if s.Opts.PprofAddress != "" && s.pprofLn == nil {
		var err error
		if s.pprofLn, err = listenPprof(s.Opts.PprofAddress); err != nil {
			ln.Close()
			return nil, fmt.Errorf("pprofAddress: %w", err)
		}
	}
	if s.Opts.MetricsPort != 0 && s.metricsLn == nil {
		var err error
		if s.metricsLn, err = listen(s.Opts.Host, s.Opts.MetricsPort); err != nil {
			ln.Close()
			if s.pprofLn != nil {
				s.pprofLn.Close()
			}
			return nil, fmt.Errorf("metricsPort: %w", err)
		}
	}
	s.ln = ln
	s.files.listening(s.Opts, bannerHost(s.Opts.Host, ln.Addr()))
	addr := ln.Addr()
	s.links.addr.Store(&addr)
	return ln.Addr(), nil
}

// Serve answers requests until ctx is done, then shuts down in order:
// stop accepting, finish in-flight requests, close the store.
func (s *Server) Serve(ctx context.Context) error {
	if s.ln == nil {
		if _, err := s.Listen(); err != nil {
			return err
		}
	}
	if s.pprofLn != nil {
		servePprof(ctx, s.pprofLn, s.log)
	}
	if s.metricsLn != nil {
		go func() {
			if err := serveUntil(ctx, &fasthttp.Server{Handler: s.REST.MetricsHandler(), Name: "quarry-metrics",
				ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second}, s.metricsLn, s.log); err != nil {
				s.log.Error("metrics listener stopped", "err", err)
			}
		}()
		s.log.Info("metrics listening", "address", "http://"+s.metricsLn.Addr().String()+"/metrics")
	}
	if s.Push != nil {
		s.Push.StartScheduler()
	}
	jobsCtx, stopJobs := context.WithCancel(ctx)
	waitJobs := startJobScheduler(jobsCtx, s.Service, s.Requests, s.Opts.Now)
	serveErr := serveUntil(ctx, s.REST.NewHTTPServer(), s.ln, s.log)
	s.Service.WaitMail() // emails under way are delivered (or time out)
	stopJobs()
	waitJobs()
	s.closeMailQueue() // email.go: after the jobs, which may send emails too
	// Pushes under way stop at their next batch; the scheduler stops.
	s.closePush()
	// Server-side subscriptions stop and save their positions in the
	// change log, from which they resume (subscriptions.go).
	if s.Opts.MaxServerSubscriptions > 0 {
		s.Service.CloseChanges(0)
	}
	if err := s.subs.Close(); err != nil {
		s.log.Error("server-side subscriptions: positions not saved", "err", err)
	}
	// WebSocket connections outlive HTTP shutdown (they are hijacked);
	// LiveQuery closes them, then Redis, before the store goes.
	if s.graphql != nil {
		s.graphql.Close()
	}
	s.live.close()
	// Jobs still running stop with the process: say so in their status.
	s.Service.AbandonJobs()
	s.scripts.Close()
	s.files.close()
	s.limiter.Close()
	s.cache.close()
	s.stopMemtune()
	if err := s.store.Close(); err != nil {
		serveErr = errors.Join(serveErr, err)
	}
	return serveErr
}

// Close releases the store of a server that never served.
func (s *Server) Close() error {
	s.Service.StopFollowing()
	if s.ln != nil {
		s.ln.Close()
	}
	if s.pprofLn != nil {
		s.pprofLn.Close()
	}
	if s.metricsLn != nil {
		s.metricsLn.Close()
	}
	// Committed changes reach LiveQuery, Redis and the cacheAdapter before
	// those close (bounded: service.DefaultChangeCloseTimeout).
	s.Service.CloseChanges(0)
	if err := s.subs.Close(); err != nil {
		s.log.Error("server-side subscriptions: positions not saved", "err", err)
	}
	s.closePush()
	s.live.close()
	s.scripts.Close()
	s.files.close()
	s.limiter.Close()
	s.cache.close()
	s.closeMailQueue() // email.go
	s.stopMemtune()
	return s.store.Close()
}

// bannerHost is host:port a client on this machine reaches the listener at.
func bannerHost(host string, addr net.Addr) string {
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "localhost"
	}
	_, port, _ := net.SplitHostPort(addr.String())
	return net.JoinHostPort(host, port)
}

// Banner is what a developer needs to point a client at the server.
func (s *Server) Banner(addr net.Addr) string {
	url := s.Opts.ServerURL
	if url == "" {
		url = "http://" + bannerHost(s.Opts.Host, addr) + s.Opts.MountPath
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Quarry is running.\n")
	fmt.Fprintf(&b, "  serverURL:  %s\n", url)
	fmt.Fprintf(&b, "  appId:      %s\n", s.Opts.AppID)
	if s.keyGenerated {
		fmt.Fprintf(&b, "  masterKey:  %s (generated, kept with the data)\n", s.Opts.MasterKey)
	} else {
		// A key the operator chose must not land in logs.
		fmt.Fprintf(&b, "  masterKey:  set (not shown)\n")
	}
	fmt.Fprintf(&b, "  database:   %s\n", redactURI(s.Opts.DatabaseURI))
	fmt.Fprintf(&b, "  health:     %s/health\n", url)
	if s.live != nil {
		classes := strings.Join(s.Opts.LiveQuery.ClassNames, ", ")
		if s.Opts.LiveQuery.AllClasses {
			classes = "every class"
		}
		fmt.Fprintf(&b, "  liveQuery:  %s (%s)\n", "ws"+strings.TrimPrefix(url, "http"), classes)
	}
	if s.graphql != nil {
		fmt.Fprintf(&b, "  graphQL:    %s\n", graphQLURL(url, s.Opts.MountPath, s.Opts.GraphQLPath))
		if s.Opts.MountPlayground {
			fmt.Fprintf(&b, "  playground: %s\n", graphQLURL(url, s.Opts.MountPath, s.Opts.PlaygroundPath))
		}
	}
	if s.cache != nil {
		fmt.Fprintf(&b, "  cache:      %s (cacheAdapter)\n", redactURI(s.Opts.CacheAdapter.URL))
	}
	fmt.Fprintf(&b, "Try: curl -H 'X-Parse-Application-Id: %s' %s/classes/GameScore\n", s.Opts.AppID, url)
	return b.String()
}

// graphQLURL is where a path mounted at the server root (graphQLPath,
// playgroundPath) is reached, given the URL of the REST mount.
func graphQLURL(restURL, mountPath, path string) string {
	root := strings.TrimSuffix(restURL, mountPath)
	if mountPath == "/" {
		root = strings.TrimSuffix(restURL, "/")
	}
	return root + path
}

// nearSphereMax turns the nearSphereMaxDistanceMiles option into the
// service's radians (negative: no limit).
func nearSphereMax(miles int) float64 {
	if miles <= 0 {
		return -1
	}
	return geo.MilesToRadians(float64(miles))
}

// MetricsAddr is where metricsPort's listener is bound, nil without one
// (valid after Listen).
func (s *Server) MetricsAddr() net.Addr {
	if s.metricsLn == nil {
		return nil
	}
	return s.metricsLn.Addr()
}

func (s *Server) closePush() {
	if s.Push != nil {
		s.Push.Close()
	}
}

// loadSeconds is the time since start in seconds, to a tenth.
func loadSeconds(start time.Time) float64 {
	return math.Round(time.Since(start).Seconds()*10) / 10
}

// redactURI hides the password of a database URI (postgres://u:pw@host/db).
func redactURI(uri string) string {
	u, err := neturl.Parse(uri)
	if err != nil || u.User == nil {
		return uri
	}
	if _, ok := u.User.Password(); ok {
		u.User = neturl.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}

// unavailableOf is the readiness check of a store whose database can
// become unreachable (PostgreSQL), nil for the embedded one.
func unavailableOf(adapter store.Adapter) func() error {
	if c, ok := adapter.(store.Checker); ok {
		return c.Unavailable
	}
	return nil
}

// storeReady is the readiness check of /health: whether the store can
// still make writes durable (nil for stores that cannot tell).
func storeReady(adapter store.Adapter) func() error {
	if h, ok := adapter.(store.Health); ok {
		return h.Writable
	}
	return nil
}
