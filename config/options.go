package config

import (
	"fmt"
	"time"
)

// Built-in defaults. Usage prints the values of Defaults, so these constants
// and the help text cannot drift apart.
const (
	// DevAppID is the application id of a development start (no appId given).
	DevAppID = "quarry-dev"
	// DefaultPort is the HTTP port (Parse Server's default).
	DefaultPort = 1337
	// DefaultHost is the listen address.
	DefaultHost = "0.0.0.0"
	// DefaultMountPath is the REST prefix.
	DefaultMountPath = "/parse"
	// DefaultDatabaseURI is where a development start keeps its data.
	DefaultDatabaseURI = "./quarry-data/quarry.db"
	// DefaultMaxUploadSize is the largest file or JSON body, in bytes (10 MB,
	// as the specification says; Parse Server uses 20mb).
	DefaultMaxUploadSize int64 = 10 << 20
	// DefaultQueryLimit is the page size of a query without a limit.
	DefaultQueryLimit = 100
	// DefaultBatchSize is the largest number of commands in one POST /batch.
	DefaultBatchSize = 20
	// DefaultPasswordHashCost is bcrypt's default cost.
	DefaultPasswordHashCost = 10
	// DefaultMaxScan is the number of objects a query may examine without a
	// usable index before it is refused with code 154.
	DefaultMaxScan = 10000
	// DefaultNearSphereMaxMiles limits a $nearSphere that gives no maximum
	// distance, as the specification says (100 miles).
	DefaultNearSphereMaxMiles = 100
	// DefaultMaxJSONDepth is the deepest nesting accepted in a JSON body.
	DefaultMaxJSONDepth = 64
	// DefaultSessionLength is the lifetime of a new session (31536000 s).
	DefaultSessionLength = 365 * 24 * time.Hour
	// DefaultGraphQLPath is where the GraphQL API is mounted (server root).
	DefaultGraphQLPath = "/graphql"
	// DefaultPlaygroundPath is where the GraphQL playground is mounted.
	DefaultPlaygroundPath = "/playground"
	// DefaultLogLevel is the log level when neither logLevel nor verbose is set.
	DefaultLogLevel = "info"
	// DefaultSlowQueryMs is slowQueryMs's default.
	DefaultSlowQueryMs = 500
	// DefaultWebsocketTimeout is the LiveQuery ping interval, in ms.
	DefaultWebsocketTimeout = 10_000
	// DefaultCacheTimeout is how long the LiveQuery server caches a session
	// lookup, in ms: 30 days, as the specification says (Parse Server's
	// code uses 5 s).
	DefaultCacheTimeout = 30 * 24 * 3600 * 1000
	// DefaultCloudCodeTimeout bounds one cloud function or trigger run, in
	// ms (error 124 beyond it). Jobs have no bound.
	DefaultCloudCodeTimeout = 30_000
	// DefaultCloudCodeMaxMemory bounds the heap one cloud function, job or
	// trigger run may grow, in bytes (141 beyond it).
	DefaultCloudCodeMaxMemory int64 = 512 << 20
	// MinCloudCodeMaxMemory is the smallest bound cloudCodeMaxMemory takes:
	// below it ordinary calls would trip on the garbage collector's own
	// granularity.
	MinCloudCodeMaxMemory int64 = 1 << 20
	// DefaultGCHeadroomPercent is gcHeadroomPercent's default: the collector
	// runs when the heap has grown by a quarter of the live data (at least
	// 64 MB), not by all of it as at Go's GOGC 100.
	DefaultGCHeadroomPercent = 25
	// DefaultLiveQueryLogLevel is the LiveQuery server's log level.
	DefaultLiveQueryLogLevel = "INFO"
)

// LiveQueryLogLevels are the accepted values of liveQueryServerOptions.logLevel.
var LiveQueryLogLevels = []string{"VERBOSE", "INFO", "ERROR", "NONE"}

// LogLevels are the accepted values of logLevel, quietest first (Parse
// Server's names).
var LogLevels = []string{"error", "warn", "info", "verbose", "debug", "silly"}

// Options is the server's whole configuration. The comment of each field
// names the option (Parse Server's spelling, used as flag name and config
// file key); Usage describes them all.
type Options struct {
	// AppID is appId: the application id clients must send.
	AppID string
	// MasterKey is masterKey. Empty means the server generates one on first
	// start and keeps it with the data.
	MasterKey string
	// ReadOnlyMasterKey is readOnlyMasterKey: reads as master, fails writes.
	ReadOnlyMasterKey string
	// ClientKey is clientKey (iOS/macOS/Android SDKs). Optional.
	ClientKey string
	// JavaScriptKey is javascriptKey (JS SDK). Optional.
	JavaScriptKey string
	// RESTAPIKey is restAPIKey. Optional.
	RESTAPIKey string
	// DotNetKey is dotNetKey (Unity/.NET SDK). Optional.
	DotNetKey string
	// FileKey is fileKey: the prefix key for file storage.
	FileKey string
	// MasterKeyIPs is masterKeyIps: the addresses (IPs or CIDR ranges) from
	// which the master key is accepted.
	MasterKeyIPs []string
	// MaintenanceKey is maintenanceKey; MaintenanceKeyIPs are the
	// addresses or CIDR ranges it is accepted from (requests.go).
	MaintenanceKey    string
	MaintenanceKeyIPs []string
	// TrustProxy is trustProxy (requests.go).
	TrustProxy TrustProxy
	// EnableCollationCaseComparison is enableCollationCaseComparison:
	// accepted, with no effect on results (requests.go).
	EnableCollationCaseComparison bool
	// AllowExpiredAuthDataToken is allowExpiredAuthDataToken.
	AllowExpiredAuthDataToken bool
	// EncodeParseObjectInCloudFunction is encodeParseObjectInCloudFunction:
	// only true, Parse Server 9's behaviour, is accepted.
	EncodeParseObjectInCloudFunction bool
	// Security is security: enableCheck and enableCheckLog (requests.go).
	Security map[string]any
	// Pages is pages, Parse Server's pages router settings (pages.go).
	Pages map[string]any
	// DatabaseOptions is databaseOptions (requests.go).
	DatabaseOptions map[string]any
	// Schema is the schema option: Parse Server's declared classes
	// (definitions) and its switches; nil: none (schema.go).
	Schema map[string]any
	// RequestKeywordDenylist is requestKeywordDenylist: {key, value}
	// patterns refused in request data.
	RequestKeywordDenylist []map[string]any

	// Port is port; 0 asks the server to pick a free port.
	Port int
	// Host is host: the listen address.
	Host string
	// MountPath is mountPath, normalized: starts with "/", no trailing "/"
	// (the root is "/").
	MountPath string
	// ServerURL is serverURL; empty means derived from host, port and mount path.
	ServerURL string
	// PublicServerURL is publicServerURL, used in file URLs; empty means ServerURL.
	PublicServerURL string
	// AllowOrigin is allowOrigin: CORS origins ("*" for any).
	AllowOrigin []string
	// AllowHeaders is allowHeaders: extra CORS request headers.
	AllowHeaders []string

	// DatabaseURI is databaseURI: where the data lives.
	DatabaseURI string
	// MaxUploadSize is maxUploadSize in bytes: the largest file or JSON body.
	MaxUploadSize int64
	// Files are the file storage options (files.go).
	Files FilesOptions

	// DefaultLimit is defaultLimit: the page size of a query without a limit.
	DefaultLimit int
	// MaxLimit is maxLimit: larger limits are capped to it; 0 means unlimited.
	MaxLimit int
	// BatchSize is batchSize: the most commands in one POST /batch.
	BatchSize int
	// MaxScan is maxScan: the most objects a query may examine without a
	// usable index before it is refused with code 154; 0 means no budget.
	MaxScan int
	// MaxScanMasterKey is maxScanMasterKey: apply MaxScan to master-key
	// requests too (Parse Dashboard browsing is exempt by default).
	MaxScanMasterKey bool
	// MaxScanWarnOnly is maxScanWarnOnly: log over-budget queries instead
	// of refusing them.
	MaxScanWarnOnly bool
	// NearSphereMaxDistanceMiles is nearSphereMaxDistanceMiles: the maximum
	// distance of a $nearSphere that gives none, in miles; 0 means no limit
	// (Parse Server's behaviour).
	NearSphereMaxDistanceMiles int
	// Indexes is indexes: secondary indexes as "Class.field" entries, kept
	// in addition to those declared through the schema API.
	Indexes []string
	// GCHeadroomPercent is gcHeadroomPercent: the heap growth, in percent
	// of the live heap (at least 64 MB), after which the garbage collector
	// runs (package memtune); 0 leaves Go's default (GOGC). An explicit
	// GOGC or GOMEMLIMIT in the environment wins.
	GCHeadroomPercent int
	// SQLClasses is sqlClasses: custom classes kept out of memory, whose
	// queries run in PostgreSQL (a postgres:// databaseURI only).
	SQLClasses []string
	// SQLClassesOver is sqlClassesOver: also keep out of memory the custom
	// classes PostgreSQL estimates at more rows at start-up; 0 = none.
	SQLClassesOver int
	// QueryReadAfterWrites is queryReadAfterWrites: with several instances
	// on one PostgreSQL, every query waits until this instance has applied
	// every commit made before it arrived (reads by id always do).
	QueryReadAfterWrites bool
	// EnforcePrivateUsers is enforcePrivateUsers: new users readable only
	// by themselves.
	EnforcePrivateUsers bool
	// Compatibility is compatibility: CompatSpecification (the default)
	// or CompatParseServer, which switches every default where the
	// specification and Parse Server 9 differ to Parse Server 9's
	// (docs/configuration.md, "Compatibility").
	Compatibility string
	// Auth is third-party sign-in: auth, enableAnonymousUsers and
	// enableInsecureAuthAdapters (auth.go).
	Auth AuthOptions
	// PasswordHashCost is passwordHashCost: the bcrypt cost of passwords.
	PasswordHashCost int
	// MaxJSONDepth is maxJSONDepth: the deepest nesting accepted in a JSON body.
	MaxJSONDepth int
	// AllowClientClassCreation is allowClientClassCreation: whether clients
	// without the master key may create classes by saving to them.
	AllowClientClassCreation bool

	// SessionLength is sessionLength (given in seconds): a new session's lifetime.
	SessionLength time.Duration
	// ProtectedFields is protectedFields: class -> CLP key -> fields
	// hidden from those callers (nil: Parse Server's default, users'
	// emails hidden). ProtectedFieldSets reads it.
	ProtectedFields map[string]any
	// AllowCustomObjectID is allowCustomObjectId: a create may name its
	// objectId.
	AllowCustomObjectID bool
	// ObjectIDSize is objectIdSize: the length of the objectIds the
	// server makes.
	ObjectIDSize int
	// ConvertUsernameToLowercase and ConvertEmailToLowercase are
	// convertUsernameToLowercase and convertEmailToLowercase: _User's
	// username and email are stored lower-cased (and looked up so at
	// login).
	ConvertUsernameToLowercase, ConvertEmailToLowercase bool
	// ExtendSessionOnUse is extendSessionOnUse: a session used past half
	// its life is extended to sessionLength from then.
	ExtendSessionOnUse bool

	// LiveQuery is liveQuery: which classes publish real-time events.
	LiveQuery LiveQueryOptions
	// LiveQueryServer is liveQueryServerOptions: the LiveQuery server's
	// own settings, in this process or standalone (quarry livequery).
	LiveQueryServer LiveQueryServerOptions

	// GraphQLPath is graphQLPath, normalized like MountPath.
	GraphQLPath string
	// MountGraphQL is mountGraphQL: serve the GraphQL API.
	MountGraphQL bool
	// PlaygroundPath is playgroundPath, normalized like MountPath.
	PlaygroundPath string
	// MountPlayground is mountPlayground: serve the GraphQL playground
	// (never in production).
	MountPlayground bool
	// GraphQLPublicIntrospection is graphQLPublicIntrospection: let callers
	// without the master key introspect the GraphQL schema.
	GraphQLPublicIntrospection bool
	// GraphQLMaxDepth, GraphQLMaxAliases and GraphQLMaxFields cap one
	// GraphQL document's nesting, aliases and fields (fragments expanded);
	// 0 takes the graphql package's defaults, negative means no cap.
	GraphQLMaxDepth   int
	GraphQLMaxAliases int
	GraphQLMaxFields  int
	// GraphQLMaxComplexity caps the fields a GraphQL reply can hold, each
	// counted once per object its enclosing connections can return.
	GraphQLMaxComplexity int
	// GraphQLCustomTypeDefs is graphQLCustomTypeDefs: GraphQL schema
	// language added to the generated schema (extend type Query/Mutation
	// with @resolve fields run by cloud functions, @mock fields).
	GraphQLCustomTypeDefs string
	// GraphQLSchema is graphQLSchema: the path of a file holding more
	// such schema language, read at start-up.
	GraphQLSchema string

	// LogLevel is logLevel, one of LogLevels.
	LogLevel string
	// Verbose is verbose: the same as logLevel "verbose" unless logLevel is given.
	Verbose bool
	// Cloud is cloud: the path of the JavaScript cloud code entry file
	// (main.js); empty runs no cloud code.
	Cloud string
	// CloudCodeTimeout is cloudCodeTimeout: the most milliseconds one cloud
	// function or trigger may run before it fails with 124.
	CloudCodeTimeout int
	// CloudCodeMaxMemory is cloudCodeMaxMemory: the most bytes the heap may
	// grow while one cloud function, job or trigger runs before it fails
	// with 141 and its runtime is replaced; 0 sets no bound.
	CloudCodeMaxMemory int64
	// CloudCodeEnv is cloudCodeEnv: the environment variables cloud
	// code's process.env shows; none by default.
	CloudCodeEnv []string
	// WebhookKey is webhookKey: sent as X-Parse-Webhook-Key with every
	// webhook call so that the receiver can tell the call is Quarry's.
	WebhookKey string
	// OutboundAllowPrivate is outboundAllowPrivate: let webhooks and
	// Parse.Cloud.httpRequest reach loopback, private, link-local and
	// other internal addresses (refused by default).
	OutboundAllowPrivate bool
	// MaxServerSubscriptions is maxServerSubscriptions: the most
	// server-side subscriptions (/hooks/subscriptions); 0 turns them off.
	MaxServerSubscriptions int
	// OutboundAllowList is outboundAllowList: internal addresses and CIDR
	// networks webhooks and httpRequest may reach all the same.
	OutboundAllowList []string
	// Silent is silent: no log output at all.
	Silent bool
	// JSONLogs is jsonLogs: log lines as JSON objects instead of key=value text.
	JSONLogs bool
	// RequestLogPercent is requestLogPercent: the share of successful
	// requests given a log line (errors always get one), 0 to 100.
	RequestLogPercent int
	// SlowQueryMs is slowQueryMs: queries slower than this many
	// milliseconds are logged as warnings with their plan; 0 never.
	SlowQueryMs int
	// MetricsIPs is metricsIps: the addresses (IPs or CIDR ranges) allowed
	// to read /metrics; empty allows every address.
	MetricsIPs []string
	// MetricsPort is metricsPort: when set, /metrics is served on this
	// port of Host (still behind MetricsIPs) and not on the main port.
	MetricsPort int
	// PprofAddress is pprofAddress: where Go's profiler listens (e.g.
	// 127.0.0.1:6060); empty turns it off.
	PprofAddress string

	// Idempotency is idempotencyOptions.
	Idempotency IdempotencyOptions
	// Push is the push object (push.go).
	Push PushOptions
	// ScheduledPush is scheduledPush: a push with a future push_time is
	// kept until then; off (Parse Server's default) push_time is ignored
	// and the push is sent at once.
	ScheduledPush bool
	// Accounts are the email flows and account policies (accounts.go).
	Accounts AccountOptions
	// RateLimit is rateLimit: request limits per client address (ratelimit.go).
	RateLimit []RateLimitOptions
	// CacheAdapter is cacheAdapter: the shared lookup cache (cache.go).
	CacheAdapter CacheAdapterOptions

	// DevMode is true when no source gave appId: a development start with
	// AppID DevAppID.
	DevMode bool
	// ConfigFile is the path of the JSON config file that was read, or "".
	ConfigFile string
	// Now is the service's clock, for tests and embedders; no flag, file
	// or environment variable sets it. nil is the real clock.
	Now func() time.Time
}

// IdempotencyOptions is the idempotencyOptions object: with Paths set, a
// POST or PUT on a matching path whose request id was seen within TTL
// seconds is refused with 159.
type IdempotencyOptions struct {
	// Paths are idempotencyOptions.paths: regular expressions matched
	// against the whole path below the mount path.
	Paths []string
	// TTL is idempotencyOptions.ttl in seconds.
	TTL int
}

// DefaultIdempotencyTTL is idempotencyOptions.ttl's default (Parse's).
const DefaultIdempotencyTTL = 300

// LiveQueryOptions is the liveQuery option object.
type LiveQueryOptions struct {
	// ClassNames is liveQuery.classNames: classes that publish LiveQuery events.
	ClassNames []string
	// AllClasses turns LiveQuery on for every class: set for the
	// development start when no classNames are given, so the SDK's
	// subscribe() works out of the box.
	AllClasses bool
	// RedisURL is liveQuery.redisURL: a Redis server shared by several Quarry
	// instances to pass LiveQuery events; empty means in-process only.
	RedisURL string
}

// LiveQueryServerOptions is the liveQueryServerOptions object. AppID,
// MasterKey, ServerURL and RedisURL default to the REST server's (appId,
// masterKey, serverURL, liveQuery.redisURL) when empty.
type LiveQueryServerOptions struct {
	// AppID is liveQueryServerOptions.appId.
	AppID string
	// MasterKey is liveQueryServerOptions.masterKey: a connect presenting
	// it reads everything.
	MasterKey string
	// ServerURL is liveQueryServerOptions.serverURL: the REST server a
	// standalone LiveQuery server asks about session tokens.
	ServerURL string
	// KeyPairs is liveQueryServerOptions.keyPairs: when any is set, a
	// connect must present one of them.
	KeyPairs LiveQueryKeyPairs
	// WebsocketTimeout is liveQueryServerOptions.websocketTimeout in
	// milliseconds: the ping interval.
	WebsocketTimeout int
	// CacheTimeout is liveQueryServerOptions.cacheTimeout in milliseconds:
	// how long a session token's lookup is cached.
	CacheTimeout int
	// LogLevel is liveQueryServerOptions.logLevel: VERBOSE, INFO, ERROR or
	// NONE.
	LogLevel string
	// Port is liveQueryServerOptions.port: where a standalone LiveQuery
	// server listens (0: the port option).
	Port int
	// RedisURL is liveQueryServerOptions.redisURL: the Redis server the
	// LiveQuery server receives changes from.
	RedisURL string
	// MaxSubscriptionsPerClient, MaxSubscriptionsPerUser and
	// MaxSubscriptions are liveQueryServerOptions.maxSubscriptionsPerClient,
	// .maxSubscriptionsPerUser and .maxSubscriptions: the subscription
	// quotas of one connection, one user and the app (0: the LiveQuery
	// server's defaults, 1000, none and 200000).
	MaxSubscriptionsPerClient int
	MaxSubscriptionsPerUser   int
	MaxSubscriptions          int
}

// LiveQueryKeyPairs is liveQueryServerOptions.keyPairs.
type LiveQueryKeyPairs struct {
	JavaScriptKey string
	RESTAPIKey    string
	ClientKey     string
	WindowsKey    string
	MasterKey     string
}

// Map returns the configured key pairs by their connect-message names.
func (k LiveQueryKeyPairs) Map() map[string]string {
	m := map[string]string{}
	for name, v := range map[string]string{"javascriptKey": k.JavaScriptKey, "restAPIKey": k.RESTAPIKey,
		"clientKey": k.ClientKey, "windowsKey": k.WindowsKey, "masterKey": k.MasterKey} {
		if v != "" {
			m[name] = v
		}
	}
	return m
}

// Defaults returns the options of a start with no arguments, no config file
// and no environment: a development start.
// ProtectedFieldSets is ProtectedFields as class -> CLP key -> field
// names; nil when the option is not set.
func (o *Options) ProtectedFieldSets() (map[string]map[string][]string, error) {
	if o.ProtectedFields == nil {
		return nil, nil
	}
	out := map[string]map[string][]string{}
	for class, v := range o.ProtectedFields {
		keys, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: want an object of CLP keys (\"*\", \"authenticated\", \"role:…\", \"userField:…\") to lists of fields", class)
		}
		out[class] = map[string][]string{}
		for key, fv := range keys {
			list, ok := fv.([]any)
			if !ok {
				return nil, fmt.Errorf("%s.%s: want a list of field names", class, key)
			}
			fields := []string{}
			for _, f := range list {
				name, ok := f.(string)
				if !ok || name == "" {
					return nil, fmt.Errorf("%s.%s: want a list of field names", class, key)
				}
				fields = append(fields, name)
			}
			out[class][key] = fields
		}
	}
	return out, nil
}

// The values of compatibility.
const (
	CompatSpecification = "specification"
	CompatParseServer   = "parse-server"
)

// ParseServerDefaults reports compatibility "parse-server".
func (o *Options) ParseServerDefaults() bool { return o.Compatibility == CompatParseServer }

func Defaults() *Options {
	return &Options{
		AppID:                            DevAppID,
		MasterKeyIPs:                     []string{"127.0.0.1", "::1"},
		MaintenanceKeyIPs:                []string{"127.0.0.1", "::1"},
		RequestKeywordDenylist:           DefaultRequestKeywordDenylist(),
		EncodeParseObjectInCloudFunction: true,
		Port:                             DefaultPort,
		Host:                             DefaultHost,
		MountPath:                        DefaultMountPath,
		AllowOrigin:                      []string{"*"},
		DatabaseURI:                      DefaultDatabaseURI,
		MaxUploadSize:                    DefaultMaxUploadSize,
		DefaultLimit:                     DefaultQueryLimit,
		BatchSize:                        DefaultBatchSize,
		MaxScan:                          DefaultMaxScan,
		GCHeadroomPercent:                DefaultGCHeadroomPercent,
		NearSphereMaxDistanceMiles:       DefaultNearSphereMaxMiles,
		PasswordHashCost:                 DefaultPasswordHashCost,
		MaxJSONDepth:                     DefaultMaxJSONDepth,
		AllowClientClassCreation:         true,
		Compatibility:                    CompatSpecification,
		ObjectIDSize:                     10,
		SessionLength:                    DefaultSessionLength,
		GraphQLPath:                      DefaultGraphQLPath,
		PlaygroundPath:                   DefaultPlaygroundPath,
		LogLevel:                         DefaultLogLevel,
		RequestLogPercent:                100,
		SlowQueryMs:                      DefaultSlowQueryMs,
		CloudCodeTimeout:                 DefaultCloudCodeTimeout,
		CloudCodeMaxMemory:               DefaultCloudCodeMaxMemory,
		LiveQueryServer: LiveQueryServerOptions{WebsocketTimeout: DefaultWebsocketTimeout,
			CacheTimeout: DefaultCacheTimeout, LogLevel: DefaultLiveQueryLogLevel},
		LiveQuery:   LiveQueryOptions{AllClasses: true},
		Idempotency: IdempotencyOptions{TTL: DefaultIdempotencyTTL},
		Files:       FilesOptions{Adapter: FilesAdapterLocal, FileUpload: FileUploadOptions{EnableForAuthenticatedUser: true}},
		Accounts:    DefaultAccounts(),
		DevMode:     true,
		Auth:        AuthOptions{EnableAnonymousUsers: true},
	}
}
