package config

import (
	"strings"
	"time"
	"unicode"
)

// option describes one supported option. The table below is the single
// source of names, environment variables, help text and setters: Load, the
// validator and Usage all iterate it.
type option struct {
	name  string   // Parse Server spelling: flag name and config file key
	group string   // heading in Usage
	usage string   // one-line meaning
	env   []string // Parse Server's environment variables, after QUARRY_<NAME>
	def   string   // shown as the default instead of the value in Defaults()
	// field returns a pointer to the option's field: *string, *int, *bool,
	// *[]string, *int64 (a size) or *time.Duration (seconds). nil marks an
	// object option whose keys are the dotted options after it.
	field func(o *Options) any
}

// Usage groups, in the order Usage prints them.
const (
	groupKeys    = "App identity and keys"
	groupHTTP    = "HTTP server"
	groupData    = "Storage and uploads"
	groupQuery   = "Queries, requests and limits"
	groupSession = "Sessions"
	groupLive    = "LiveQuery"
	groupGraphQL = "GraphQL"
	groupLog     = "Logging and cloud code"
)

var groups = []string{groupKeys, groupHTTP, groupData, groupQuery, groupSession, groupLive, groupGraphQL, groupLog}

var options = []*option{
	{name: "appId", group: groupKeys, env: []string{"PARSE_SERVER_APPLICATION_ID"},
		def:   `"quarry-dev" (a development start)`,
		usage: "unique application id; clients send it as X-Parse-Application-Id",
		field: func(o *Options) any { return &o.AppID }},
	{name: "masterKey", group: groupKeys, env: []string{"PARSE_SERVER_MASTER_KEY"},
		def:   "generated on first start and kept with the data",
		usage: "key that overrides every permission (ACL, CLP, schema)",
		field: func(o *Options) any { return &o.MasterKey }},
	{name: "readOnlyMasterKey", group: groupKeys, env: []string{"PARSE_SERVER_READ_ONLY_MASTER_KEY"},
		usage: "key that reads like the master key but fails every write",
		field: func(o *Options) any { return &o.ReadOnlyMasterKey }},
	{name: "clientKey", group: groupKeys, env: []string{"PARSE_SERVER_CLIENT_KEY"},
		usage: "optional key of the iOS, macOS and Android SDKs",
		field: func(o *Options) any { return &o.ClientKey }},
	{name: "javascriptKey", group: groupKeys, env: []string{"PARSE_SERVER_JAVASCRIPT_KEY"},
		usage: "optional key of the JavaScript SDK",
		field: func(o *Options) any { return &o.JavaScriptKey }},
	{name: "restAPIKey", group: groupKeys, env: []string{"PARSE_SERVER_REST_API_KEY"},
		usage: "optional key of REST clients",
		field: func(o *Options) any { return &o.RESTAPIKey }},
	{name: "dotNetKey", group: groupKeys, env: []string{"PARSE_SERVER_DOT_NET_KEY"},
		usage: "optional key of the Unity and .NET SDKs",
		field: func(o *Options) any { return &o.DotNetKey }},
	{name: "fileKey", group: groupKeys, env: []string{"PARSE_SERVER_FILE_KEY"},
		usage: "key giving a prefix for file storage",
		field: func(o *Options) any { return &o.FileKey }},
	{name: "masterKeyIps", group: groupKeys, env: []string{"PARSE_SERVER_MASTER_KEY_IPS"},
		usage: "IPs or CIDR ranges allowed to use the master key (0.0.0.0/0,::/0 = any)",
		field: func(o *Options) any { return &o.MasterKeyIPs }},

	{name: "host", group: groupHTTP, env: []string{"PARSE_SERVER_HOST"},
		usage: "address to listen on",
		field: func(o *Options) any { return &o.Host }},
	{name: "port", group: groupHTTP, env: []string{"PORT"},
		usage: "port to listen on (1-65535; 0 picks a free port)",
		field: func(o *Options) any { return &o.Port }},
	{name: "mountPath", group: groupHTTP, env: []string{"PARSE_SERVER_MOUNT_PATH"},
		usage: "path prefix of the REST API",
		field: func(o *Options) any { return &o.MountPath }},
	{name: "serverURL", group: groupHTTP, env: []string{"PARSE_SERVER_URL"},
		def:   "http://localhost:<port><mountPath>",
		usage: "internal address of the REST API (http:// or https://)",
		field: func(o *Options) any { return &o.ServerURL }},
	{name: "publicServerURL", group: groupHTTP, env: []string{"PARSE_PUBLIC_SERVER_URL"},
		def:   "serverURL",
		usage: "public address of the REST API, used in file URLs",
		field: func(o *Options) any { return &o.PublicServerURL }},
	{name: "allowOrigin", group: groupHTTP, env: []string{"PARSE_SERVER_ALLOW_ORIGIN"},
		usage: "CORS origins allowed to call the API (* = any)",
		field: func(o *Options) any { return &o.AllowOrigin }},
	{name: "allowHeaders", group: groupHTTP, env: []string{"PARSE_SERVER_ALLOW_HEADERS"},
		usage: "extra request headers allowed by CORS",
		field: func(o *Options) any { return &o.AllowHeaders }},

	{name: "databaseURI", group: groupData, env: []string{"PARSE_SERVER_DATABASE_URI"},
		usage: "where the data lives (a file path for the embedded store)",
		field: func(o *Options) any { return &o.DatabaseURI }},
	{name: "maxUploadSize", group: groupData, env: []string{"PARSE_SERVER_MAX_UPLOAD_SIZE"},
		usage: "largest file upload or JSON body: bytes, or a number with kb, mb or gb",
		field: func(o *Options) any { return &o.MaxUploadSize }},

	// Files: see files.go.
	{name: "filesAdapter", group: groupData, env: []string{"PARSE_SERVER_FILES_ADAPTER"},
		usage: `where uploaded files live: "local" (beside the database), "s3", or "postgres" (large objects)`,
		field: func(o *Options) any { return &o.Files.Adapter }},
	{name: "filesSubDirectory", group: groupData, env: []string{"PARSE_SERVER_FILES_SUB_DIRECTORY"},
		def:   "<databaseURI>.files",
		usage: "directory of the local files adapter",
		field: func(o *Options) any { return &o.Files.Directory }},
	{name: "encryptionKey", group: groupData, env: []string{"PARSE_SERVER_ENCRYPTION_KEY"},
		usage: "encrypts files of the local adapter with AES-256-GCM (never lose or change it: quarry files rotate-key)",
		field: func(o *Options) any { return &o.Files.EncryptionKey }},
	{name: "preserveFileName", group: groupData, env: []string{"PARSE_SERVER_PRESERVE_FILE_NAME"},
		usage: "store files under the uploaded name, without a unique random prefix",
		field: func(o *Options) any { return &o.Files.PreserveFileName }},
	{name: "fileUpload", group: groupData, env: []string{"PARSE_SERVER_FILE_UPLOAD_OPTIONS"},
		def:   "authenticated users only",
		usage: `object: who may upload files without the master key, and which extensions`},
	{name: "fileUpload.enableForPublic", group: groupData,
		usage: "callers without a session may upload",
		field: func(o *Options) any { return &o.Files.FileUpload.EnableForPublic }},
	{name: "fileUpload.enableForAnonymousUser", group: groupData,
		usage: "anonymous users may upload",
		field: func(o *Options) any { return &o.Files.FileUpload.EnableForAnonymousUser }},
	{name: "fileUpload.enableForAuthenticatedUser", group: groupData,
		usage: "signed-in users may upload (default true)",
		field: func(o *Options) any { return &o.Files.FileUpload.EnableForAuthenticatedUser }},
	{name: "fileUpload.fileExtensions", group: groupData,
		def:   "all but active content (html, svg, js, xml …)",
		usage: `allowed extensions: regexps matched against the whole extension, or "*"`,
		field: func(o *Options) any { return &o.Files.FileUpload.FileExtensions }},
	{name: "s3Bucket", group: groupData,
		usage: "bucket of the s3 files adapter",
		field: func(o *Options) any { return &o.Files.S3.Bucket }},
	{name: "s3Prefix", group: groupData, usage: "prefix of object keys in s3Bucket (e.g. files/)",
		field: func(o *Options) any { return &o.Files.S3.Prefix }},
	{name: "s3Region", group: groupData, env: []string{"AWS_REGION"}, usage: "region of s3Bucket",
		field: func(o *Options) any { return &o.Files.S3.Region }},
	{name: "s3Endpoint", group: groupData,
		usage: "host[:port] of an S3-compatible service (MinIO, R2 …); empty means AWS; http:// for plain HTTP",
		field: func(o *Options) any { return &o.Files.S3.Endpoint }},
	{name: "s3AccessKey", group: groupData, env: []string{"AWS_ACCESS_KEY_ID"},
		usage: "S3 access key; empty tries the AWS environment and instance roles",
		field: func(o *Options) any { return &o.Files.S3.AccessKey }},
	{name: "s3SecretKey", group: groupData, env: []string{"AWS_SECRET_ACCESS_KEY"},
		usage: "S3 secret key", field: func(o *Options) any { return &o.Files.S3.SecretKey }},
	{name: "s3DirectAccess", group: groupData,
		usage: "file URLs point at the bucket (public, or with s3PresignedUrl) instead of at Quarry",
		field: func(o *Options) any { return &o.Files.S3.DirectAccess }},
	{name: "s3BaseUrl", group: groupData,
		usage: "with s3DirectAccess: the address in front of the bucket, e.g. a CDN",
		field: func(o *Options) any { return &o.Files.S3.BaseURL }},
	{name: "s3PresignedUrl", group: groupData,
		usage: "with s3DirectAccess: file URLs are presigned GET URLs (a private bucket)",
		field: func(o *Options) any { return &o.Files.S3.PresignedURL }},
	{name: "s3PresignedUrlExpires", group: groupData, def: "900",
		usage: "seconds a presigned file URL stays valid",
		field: func(o *Options) any { return &o.Files.S3.PresignedURLExpires }},

	{name: "defaultLimit", group: groupQuery, env: []string{"PARSE_SERVER_DEFAULT_LIMIT"},
		usage: "page size of a query that gives no limit",
		field: func(o *Options) any { return &o.DefaultLimit }},
	{name: "maxLimit", group: groupQuery, env: []string{"PARSE_SERVER_MAX_LIMIT"},
		def:   "0 (unlimited)",
		usage: "larger query limits are capped to this; 0 = unlimited",
		field: func(o *Options) any { return &o.MaxLimit }},
	{name: "batchSize", group: groupQuery,
		usage: "most commands in one POST /batch",
		field: func(o *Options) any { return &o.BatchSize }},
	{name: "maxScan", group: groupQuery,
		usage: "objects a query may examine without an index before it fails with 154; 0 = no budget",
		field: func(o *Options) any { return &o.MaxScan }},
	{name: "maxScanMasterKey", group: groupQuery,
		usage: "apply maxScan to master-key requests too (they are exempt by default)",
		field: func(o *Options) any { return &o.MaxScanMasterKey }},
	{name: "maxScanWarnOnly", group: groupQuery,
		usage: "log queries over maxScan instead of refusing them with 154",
		field: func(o *Options) any { return &o.MaxScanWarnOnly }},
	{name: "nearSphereMaxDistanceMiles", group: groupQuery,
		usage: "limit, in miles, of a $nearSphere that gives no maximum distance; 0 = no limit",
		field: func(o *Options) any { return &o.NearSphereMaxDistanceMiles }},
	{name: "indexes", group: groupQuery,
		usage: "secondary indexes to keep, as Class.field (dot paths allowed), e.g. GameScore.score,Post.author",
		field: func(o *Options) any { return &o.Indexes }},
	{name: "gcHeadroomPercent", group: groupQuery,
		usage: "GC runs after the heap grows this percent of live data (at least 64 MB); 0: GOGC 100",
		field: func(o *Options) any { return &o.GCHeadroomPercent }},
	{name: "sqlClasses", group: groupQuery,
		usage: "custom classes kept out of memory and queried in PostgreSQL (postgres:// only), e.g. Event,Log",
		field: func(o *Options) any { return &o.SQLClasses }},
	{name: "sqlClassesOver", group: groupQuery,
		usage: "also keep out of memory custom classes of more rows at start-up (PostgreSQL); 0 = none",
		field: func(o *Options) any { return &o.SQLClassesOver }},
	{name: "queryReadAfterWrites", group: groupQuery,
		usage: "queries wait for all earlier commits (PostgreSQL; per request: X-Quarry-Read-After-Writes)",
		field: func(o *Options) any { return &o.QueryReadAfterWrites }},
	{name: "maxJSONDepth", group: groupQuery,
		usage: "deepest nesting of objects and arrays accepted in a JSON body",
		field: func(o *Options) any { return &o.MaxJSONDepth }},
	{name: "allowClientClassCreation", group: groupQuery, env: []string{"PARSE_SERVER_ALLOW_CLIENT_CLASS_CREATION"},
		usage: "let clients without the master key create classes (schemaless)",
		field: func(o *Options) any { return &o.AllowClientClassCreation }},

	{name: "sessionLength", group: groupSession, env: []string{"PARSE_SERVER_SESSION_LENGTH"},
		usage: "lifetime of a new session, in seconds",
		field: func(o *Options) any { return &o.SessionLength }},
	{name: "protectedFields", group: groupQuery, env: []string{"PARSE_SERVER_PROTECTED_FIELDS"},
		def:   `{"_User": {"*": ["email"]}}`,
		usage: "fields hidden per class and caller, as a CLP's protectedFields; every class's CLP adds to them",
		field: func(o *Options) any { return &o.ProtectedFields }},
	{name: "allowCustomObjectId", group: groupQuery, env: []string{"PARSE_SERVER_ALLOW_CUSTOM_OBJECT_ID"},
		usage: "a create may name its objectId (1-64 letters, digits, - and _; 137 if taken)",
		field: func(o *Options) any { return &o.AllowCustomObjectID }},
	{name: "objectIdSize", group: groupQuery, env: []string{"PARSE_SERVER_OBJECT_ID_SIZE"},
		usage: "length of the objectIds the server makes (10 to 64)",
		field: func(o *Options) any { return &o.ObjectIDSize }},
	{name: "convertUsernameToLowercase", group: groupSession, env: []string{"PARSE_SERVER_CONVERT_USERNAME_TO_LOWERCASE"},
		usage: "store usernames lower-cased, and look them up so at login",
		field: func(o *Options) any { return &o.ConvertUsernameToLowercase }},
	{name: "convertEmailToLowercase", group: groupSession, env: []string{"PARSE_SERVER_CONVERT_EMAIL_TO_LOWERCASE"},
		usage: "store users' email addresses lower-cased",
		field: func(o *Options) any { return &o.ConvertEmailToLowercase }},
	{name: "extendSessionOnUse", group: groupSession, env: []string{"PARSE_SERVER_EXTEND_SESSION_ON_USE"},
		usage: "a session used past half its life is extended to sessionLength from then",
		field: func(o *Options) any { return &o.ExtendSessionOnUse }},
	{name: "compatibility", group: groupSession,
		usage: `"specification" (default) or "parse-server" (Parse Server 9's defaults where they differ)`,
		field: func(o *Options) any { return &o.Compatibility }},
	{name: "enforcePrivateUsers", group: groupSession, env: []string{"PARSE_SERVER_ENFORCE_PRIVATE_USERS"},
		usage: "new users readable only by themselves (default: readable by all, per the spec)",
		field: func(o *Options) any { return &o.EnforcePrivateUsers }},
	{name: "auth", group: groupSession, env: []string{"PARSE_SERVER_AUTH_PROVIDERS"},
		usage: "third-party sign-in providers and their settings, e.g. {\"google\":{\"clientId\":\"...\"}} (docs/auth.md)",
		field: func(o *Options) any { return &o.Auth.Providers }},
	{name: "enableAnonymousUsers", group: groupSession, env: []string{"PARSE_SERVER_ENABLE_ANON_USERS"},
		usage: "allow anonymous users (authData.anonymous)",
		field: func(o *Options) any { return &o.Auth.EnableAnonymousUsers }},
	{name: "enableInsecureAuthAdapters", group: groupSession, env: []string{"PARSE_SERVER_ENABLE_INSECURE_AUTH_ADAPTERS"},
		usage: "accept deprecated insecure authData payloads of every provider",
		field: func(o *Options) any { return &o.Auth.EnableInsecureAuthAdapters }},
	{name: "passwordHashCost", group: groupSession,
		usage: "bcrypt cost of stored password hashes (4 to 31; each step doubles the work)",
		field: func(o *Options) any { return &o.PasswordHashCost }},

	{name: "idempotencyOptions", group: groupQuery, env: []string{"PARSE_SERVER_EXPERIMENTAL_IDEMPOTENCY_OPTIONS"},
		def:   "off",
		usage: `object {"paths": [...], "ttl": seconds}: a repeated X-Parse-Request-Id gets 159`},
	{name: "idempotencyOptions.paths", group: groupQuery,
		usage: `regexps of paths below the mount path to deduplicate, e.g. "classes/.*"`,
		field: func(o *Options) any { return &o.Idempotency.Paths }},
	{name: "idempotencyOptions.ttl", group: groupQuery,
		usage: "seconds a request id is remembered (default 300)",
		field: func(o *Options) any { return &o.Idempotency.TTL }},
	{name: "rateLimit", group: groupQuery, env: []string{"PARSE_SERVER_RATE_LIMIT"},
		def:   "none",
		usage: `array of {"requestPath", "requestTimeWindow" (ms), "requestCount", ...}: 429 beyond (docs/security.md)`,
		field: func(o *Options) any { return &o.RateLimit }},
	{name: "scheduledPush", group: groupQuery, env: []string{"PARSE_SERVER_SCHEDULED_PUSH"}, def: "false",
		usage: "a future push_time waits (Quarry sends it then); off, push_time is ignored with a warning",
		field: func(o *Options) any { return &o.ScheduledPush }},
	{name: "push", group: groupQuery, env: []string{"PARSE_SERVER_PUSH"},
		def:   "none",
		usage: `object {"adapter": "log"}: how POST /push delivers (see docs/push.md)`},
	{name: "push.adapter", group: groupQuery,
		usage: `"log" (a dry run), "fcm", "apns", or "native" (APNs for Apple devices, FCM for others)`,
		field: func(o *Options) any { return &o.Push.Adapter }},
	{name: "push.fcm", group: groupQuery,
		def:   "none",
		usage: `object {"projectId", "serviceAccountFile", "endpoint", "tokenURI"}`},
	{name: "push.fcm.projectId", group: groupQuery,
		usage: "Firebase project (default: the service account's project_id)",
		field: func(o *Options) any { return &o.Push.FCM.ProjectID }},
	{name: "push.fcm.serviceAccountFile", group: groupQuery,
		usage: "service account key file (JSON) allowed to send with FCM",
		field: func(o *Options) any { return &o.Push.FCM.ServiceAccountFile }},
	{name: "push.fcm.endpoint", group: groupQuery,
		usage: "FCM API base URL (default https://fcm.googleapis.com)",
		field: func(o *Options) any { return &o.Push.FCM.Endpoint }},
	{name: "push.fcm.tokenURI", group: groupQuery,
		usage: "OAuth token URI (default: the service account's token_uri)",
		field: func(o *Options) any { return &o.Push.FCM.TokenURI }},
	{name: "push.ios", group: groupQuery,
		usage: `APNs entries for iOS devices, as Parse Server writes them (see docs/push.md)`,
		field: func(o *Options) any { return &o.Push.IOS }},
	{name: "push.osx", group: groupQuery,
		usage: "APNs entries for macOS devices, as push.ios",
		field: func(o *Options) any { return &o.Push.OSX }},
	{name: "push.tvos", group: groupQuery,
		usage: "APNs entries for tvOS devices, as push.ios",
		field: func(o *Options) any { return &o.Push.TVOS }},
	{name: "push.watchos", group: groupQuery,
		usage: "APNs entries for watchOS devices, as push.ios",
		field: func(o *Options) any { return &o.Push.WatchOS }},
	{name: "push.android", group: groupQuery,
		def:   "none",
		usage: `object {"firebaseServiceAccount": "<key file>"}: Android devices through FCM`},
	{name: "push.android.firebaseServiceAccount", group: groupQuery,
		usage: "service account key file (JSON) for Android pushes through FCM HTTP v1",
		field: func(o *Options) any { return &o.Push.Android.FirebaseServiceAccount }},
	{name: "push.apns", group: groupQuery,
		def:   "none",
		usage: `object: Apple Push Notification service for push.adapter "apns" or "native" (see docs/push.md)`},
	{name: "push.apns.topics", group: groupQuery,
		usage: "the app's bundle ids; a device's appIdentifier picks its topic, the first is the default",
		field: func(o *Options) any { return &o.Push.APNs.Topics }},
	{name: "push.apns.environment", group: groupQuery,
		usage: `"production" (default), "development", or "both" (production, then development)`,
		field: func(o *Options) any { return &o.Push.APNs.Environment }},
	{name: "push.apns.tokenKeyFile", group: groupQuery,
		usage: "token authentication: the .p8 signing key from Apple's developer site",
		field: func(o *Options) any { return &o.Push.APNs.TokenKeyFile }},
	{name: "push.apns.keyId", group: groupQuery,
		usage: "token authentication: the key's id",
		field: func(o *Options) any { return &o.Push.APNs.KeyID }},
	{name: "push.apns.teamId", group: groupQuery,
		usage: "token authentication: the developer team id",
		field: func(o *Options) any { return &o.Push.APNs.TeamID }},
	{name: "push.apns.certFile", group: groupQuery,
		usage: "certificate authentication: the push certificate (PEM)",
		field: func(o *Options) any { return &o.Push.APNs.CertFile }},
	{name: "push.apns.certKeyFile", group: groupQuery,
		usage: "certificate authentication: the certificate's private key (PEM)",
		field: func(o *Options) any { return &o.Push.APNs.CertKeyFile }},
	{name: "push.apns.productionURL", group: groupQuery,
		usage: "replaces https://api.push.apple.com (proxies, tests)",
		field: func(o *Options) any { return &o.Push.APNs.ProductionURL }},
	{name: "push.apns.developmentURL", group: groupQuery,
		usage: "replaces https://api.sandbox.push.apple.com (proxies, tests)",
		field: func(o *Options) any { return &o.Push.APNs.DevelopmentURL }},
	{name: "push.apns.caFile", group: groupQuery,
		usage: "PEM CAs trusted for the APNs hosts besides the system's (proxies, tests)",
		field: func(o *Options) any { return &o.Push.APNs.CAFile }},
	{name: "liveQuery", group: groupLive, env: []string{"PARSE_SERVER_LIVE_QUERY"},
		def:   "none",
		usage: `object {"classNames": [...], "redisURL": "..."}; as a flag or variable, JSON text`},
	{name: "liveQuery.classNames", group: groupLive, env: []string{"PARSE_SERVER_LIVEQUERY_CLASSNAMES"},
		usage: "classes that publish LiveQuery events",
		field: func(o *Options) any { return &o.LiveQuery.ClassNames }},
	{name: "liveQuery.redisURL", group: groupLive, env: []string{"PARSE_SERVER_LIVEQUERY_REDIS_URL"},
		def:   "in-process only",
		usage: "Redis server passing LiveQuery events between instances (redis:// or rediss://)",
		field: func(o *Options) any { return &o.LiveQuery.RedisURL }},
	{name: "liveQueryServerOptions", group: groupLive, env: []string{"PARSE_SERVER_LIVE_QUERY_SERVER_OPTIONS"},
		def:   "see below",
		usage: "object: the LiveQuery server's options, here or standalone (quarry livequery); JSON text as a flag"},
	{name: "liveQueryServerOptions.appId", group: groupLive, env: []string{"PARSE_LIVE_QUERY_SERVER_APP_ID"},
		def:   "appId",
		usage: "application id of the LiveQuery server",
		field: func(o *Options) any { return &o.LiveQueryServer.AppID }},
	{name: "liveQueryServerOptions.masterKey", group: groupLive, env: []string{"PARSE_LIVE_QUERY_SERVER_MASTER_KEY"},
		def:   "masterKey",
		usage: "a connect presenting this key reads every object",
		field: func(o *Options) any { return &o.LiveQueryServer.MasterKey }},
	{name: "liveQueryServerOptions.serverURL", group: groupLive, env: []string{"PARSE_LIVE_QUERY_SERVER_SERVER_URL"},
		def:   "serverURL",
		usage: "REST server a standalone LiveQuery server asks about session tokens",
		field: func(o *Options) any { return &o.LiveQueryServer.ServerURL }},
	{name: "liveQueryServerOptions.keyPairs", group: groupLive, env: []string{"PARSE_LIVE_QUERY_SERVER_KEY_PAIRS"},
		def:   "none (every connect accepted)",
		usage: "object: keys of which a connect must present one (the five below)"},
	{name: "liveQueryServerOptions.keyPairs.javascriptKey", group: groupLive,
		usage: "connects may present this javascriptKey",
		field: func(o *Options) any { return &o.LiveQueryServer.KeyPairs.JavaScriptKey }},
	{name: "liveQueryServerOptions.keyPairs.restAPIKey", group: groupLive,
		usage: "connects may present this restAPIKey",
		field: func(o *Options) any { return &o.LiveQueryServer.KeyPairs.RESTAPIKey }},
	{name: "liveQueryServerOptions.keyPairs.clientKey", group: groupLive,
		usage: "connects may present this clientKey",
		field: func(o *Options) any { return &o.LiveQueryServer.KeyPairs.ClientKey }},
	{name: "liveQueryServerOptions.keyPairs.windowsKey", group: groupLive,
		usage: "connects may present this windowsKey",
		field: func(o *Options) any { return &o.LiveQueryServer.KeyPairs.WindowsKey }},
	{name: "liveQueryServerOptions.keyPairs.masterKey", group: groupLive,
		usage: "connects may present this masterKey (and then read every object)",
		field: func(o *Options) any { return &o.LiveQueryServer.KeyPairs.MasterKey }},
	{name: "liveQueryServerOptions.websocketTimeout", group: groupLive, env: []string{"PARSE_LIVE_QUERY_SERVER_WEBSOCKET_TIMEOUT"},
		usage: "milliseconds between pings; a client that missed the last pong is disconnected",
		field: func(o *Options) any { return &o.LiveQueryServer.WebsocketTimeout }},
	{name: "liveQueryServerOptions.cacheTimeout", group: groupLive, env: []string{"PARSE_LIVE_QUERY_SERVER_CACHE_TIMEOUT"},
		usage: "milliseconds a session token's lookup is cached (writes to _Session and _Role clear it)",
		field: func(o *Options) any { return &o.LiveQueryServer.CacheTimeout }},
	{name: "liveQueryServerOptions.logLevel", group: groupLive, env: []string{"PARSE_LIVE_QUERY_SERVER_LOG_LEVEL"},
		usage: "LiveQuery log level: VERBOSE, INFO, ERROR or NONE",
		field: func(o *Options) any { return &o.LiveQueryServer.LogLevel }},
	{name: "liveQueryServerOptions.port", group: groupLive, env: []string{"PARSE_LIVE_QUERY_SERVER_PORT"},
		def:   "port",
		usage: "port of a standalone LiveQuery server (quarry livequery)",
		field: func(o *Options) any { return &o.LiveQueryServer.Port }},
	{name: "liveQueryServerOptions.redisURL", group: groupLive, env: []string{"PARSE_LIVE_QUERY_SERVER_REDIS_URL"},
		def:   "liveQuery.redisURL",
		usage: "Redis server the LiveQuery server receives changes from",
		field: func(o *Options) any { return &o.LiveQueryServer.RedisURL }},
	{name: "liveQueryServerOptions.maxSubscriptionsPerClient", group: groupLive, def: "1000",
		usage: "subscriptions one LiveQuery connection may hold; past it a subscribe fails (155)",
		field: func(o *Options) any { return &o.LiveQueryServer.MaxSubscriptionsPerClient }},
	{name: "liveQueryServerOptions.maxSubscriptionsPerUser", group: groupLive, def: "none",
		usage: "subscriptions one user may hold over all connections (and GraphQL); past it 155",
		field: func(o *Options) any { return &o.LiveQueryServer.MaxSubscriptionsPerUser }},
	{name: "liveQueryServerOptions.maxSubscriptions", group: groupLive, def: "200000",
		usage: "subscriptions the app's LiveQuery server may hold in all; past it 155",
		field: func(o *Options) any { return &o.LiveQueryServer.MaxSubscriptions }},

	{name: "mountGraphQL", group: groupGraphQL, env: []string{"PARSE_SERVER_MOUNT_GRAPHQL"},
		usage: "serve the GraphQL API",
		field: func(o *Options) any { return &o.MountGraphQL }},
	{name: "graphQLPath", group: groupGraphQL, env: []string{"PARSE_SERVER_GRAPHQL_PATH"},
		usage: "path of the GraphQL API, at the server root",
		field: func(o *Options) any { return &o.GraphQLPath }},
	{name: "mountPlayground", group: groupGraphQL, env: []string{"PARSE_SERVER_MOUNT_PLAYGROUND"},
		usage: "serve the GraphQL playground; never in production",
		field: func(o *Options) any { return &o.MountPlayground }},
	{name: "playgroundPath", group: groupGraphQL, env: []string{"PARSE_SERVER_PLAYGROUND_PATH"},
		usage: "path of the GraphQL playground, at the server root",
		field: func(o *Options) any { return &o.PlaygroundPath }},
	{name: "graphQLPublicIntrospection", group: groupGraphQL, env: []string{"PARSE_SERVER_GRAPHQL_PUBLIC_INTROSPECTION"},
		usage: "let callers without the master key introspect the GraphQL schema",
		field: func(o *Options) any { return &o.GraphQLPublicIntrospection }},
	{name: "graphQLMaxDepth", group: groupGraphQL, def: "20",
		usage: "deepest selection nesting of one GraphQL query (fragments expanded); negative = no cap",
		field: func(o *Options) any { return &o.GraphQLMaxDepth }},
	{name: "graphQLMaxAliases", group: groupGraphQL, def: "50",
		usage: "most aliased fields in one GraphQL query; negative = no cap",
		field: func(o *Options) any { return &o.GraphQLMaxAliases }},
	{name: "graphQLMaxFields", group: groupGraphQL, def: "1000",
		usage: "most fields in one GraphQL query, fragments expanded; negative = no cap",
		field: func(o *Options) any { return &o.GraphQLMaxFields }},
	{name: "graphQLMaxComplexity", group: groupGraphQL, def: "100000",
		usage: "most fields one GraphQL reply can hold (each per object of its connections); negative = no cap",
		field: func(o *Options) any { return &o.GraphQLMaxComplexity }},
	{name: "graphQLCustomTypeDefs", group: groupGraphQL,
		usage: "GraphQL schema language added to the generated schema (@resolve fields call cloud functions)",
		field: func(o *Options) any { return &o.GraphQLCustomTypeDefs }},
	{name: "graphQLSchema", group: groupGraphQL, env: []string{"PARSE_SERVER_GRAPH_QLSCHEMA"},
		usage: "path of a .graphql file added to the generated schema, like graphQLCustomTypeDefs",
		field: func(o *Options) any { return &o.GraphQLSchema }},

	{name: "logLevel", group: groupLog, env: []string{"PARSE_SERVER_LOG_LEVEL"},
		usage: "one of " + strings.Join(LogLevels, ", "),
		field: func(o *Options) any { return &o.LogLevel }},
	{name: "verbose", group: groupLog, env: []string{"VERBOSE"},
		usage: `same as logLevel "verbose" unless logLevel is given`,
		field: func(o *Options) any { return &o.Verbose }},
	{name: "cloud", group: groupLog, env: []string{"PARSE_SERVER_CLOUD"},
		usage: "JavaScript cloud code entry file (main.js); relative require() is resolved from its folder",
		field: func(o *Options) any { return &o.Cloud }},
	{name: "cloudCodeTimeout", group: groupLog,
		usage: "milliseconds one cloud function or trigger may run before it fails with 124 (jobs: no limit)",
		field: func(o *Options) any { return &o.CloudCodeTimeout }},
	{name: "cloudCodeMaxMemory", group: groupLog,
		usage: "most the heap may grow during one cloud function, job or trigger run (141 beyond); 0 = no bound",
		field: func(o *Options) any { return &o.CloudCodeMaxMemory }},
	{name: "cloudCodeEnv", group: groupLog,
		usage: "environment variables cloud code's process.env shows (none by default)",
		field: func(o *Options) any { return &o.CloudCodeEnv }},
	{name: "webhookKey", group: groupLog, env: []string{"PARSE_SERVER_WEBHOOK_KEY"},
		usage: "sent as X-Parse-Webhook-Key with every webhook call (/hooks)",
		field: func(o *Options) any { return &o.WebhookKey }},
	{name: "outboundAllowPrivate", group: groupLog,
		usage: "let webhooks and httpRequest reach loopback, private, link-local addresses (refused by default)",
		field: func(o *Options) any { return &o.OutboundAllowPrivate }},
	{name: "maxServerSubscriptions", group: groupLog,
		usage: "most server-side subscriptions (/hooks/subscriptions: changes to webhooks and Redis streams); 0 = off",
		field: func(o *Options) any { return &o.MaxServerSubscriptions }},
	{name: "outboundAllowList", group: groupLog,
		usage: "internal IPs or CIDR networks webhooks and httpRequest may reach all the same",
		field: func(o *Options) any { return &o.OutboundAllowList }},
	{name: "silent", group: groupLog, env: []string{"SILENT"},
		usage: "no log output at all",
		field: func(o *Options) any { return &o.Silent }},
	{name: "jsonLogs", group: groupLog, env: []string{"JSON_LOGS"},
		usage: "log lines as JSON objects (default: key=value text)",
		field: func(o *Options) any { return &o.JSONLogs }},
	{name: "requestLogPercent", group: groupLog,
		usage: "percent of successful requests given a log line (errors always are), 0 to 100",
		field: func(o *Options) any { return &o.RequestLogPercent }},
	{name: "slowQueryMs", group: groupLog,
		usage: "queries slower than this many milliseconds are logged as warnings with their plan (0: never)",
		field: func(o *Options) any { return &o.SlowQueryMs }},
	{name: "metricsIps", group: groupLog,
		usage: "IPs or CIDR ranges allowed to read /metrics (empty: any)",
		field: func(o *Options) any { return &o.MetricsIPs }},
	{name: "metricsPort", group: groupLog,
		usage: "serve /metrics on this port of host instead of the main port (0: the main port)",
		field: func(o *Options) any { return &o.MetricsPort }},
	{name: "pprofAddress", group: groupLog,
		usage: "address of Go's profiler (e.g. 127.0.0.1:6060); off when empty",
		field: func(o *Options) any { return &o.PprofAddress }},
	{name: "cacheAdapter", group: groupData, env: []string{"PARSE_SERVER_CACHE_ADAPTER"},
		def:   "none",
		usage: `Redis cache of session, role and schema lookups: redis://... or {"module": "redis", "options": {...}}`,
		field: func(o *Options) any { return &o.CacheAdapter }},
}

// unsupported lists Parse Server options that Quarry accepts and ignores
// with a warning, so that a Parse Server config file still starts. Any other
// unknown name is an error.
var unsupported = []string{
	"analyticsAdapter", "cacheMaxSize",
	"cacheTTL", "cluster", "collectionPrefix", "dashboardOptions",
	"databaseAdapter", "directAccess",
	"enableExpressErrorHandler",
	"enableSingleSchemaCache",
	"loggerAdapter", "logLevels",
	"logsFolder", "maxLogFiles",
	"middleware", "nonMasterExplain",
	"schemaCacheTTL",
	"serverCloseComplete", "serverStartComplete",
	"startLiveQueryServer", "userSensitiveFields",
	"push.adapterOptions", "push.android.apiKey",
	"liveQuery.pubSubAdapter", "liveQuery.redisOptions", "liveQuery.wssAdapter",
	"liveQueryServerOptions.pubSubAdapter", "liveQueryServerOptions.redisOptions", "liveQueryServerOptions.wssAdapter",
}

var (
	byName        = map[string]*option{}
	isUnsupported = map[string]bool{}
)

func init() {
	options = append(options, accountOptions...) // accounts.go
	options = append(options, requestOptions...) // requests.go
	options = append(options, optionsWithoutEffect...)
	options = append(options, schemaOption, databaseOptionsOption, securityOption, pagesOption)
	groups = append(groups, groupAccounts)
	for _, o := range options {
		byName[o.name] = o
	}
	for _, n := range unsupported {
		isUnsupported[n] = true
	}
}

// envNames returns the environment variables of o, highest precedence first.
func (o *option) envNames() []string {
	return append([]string{"QUARRY_" + envSuffix(o.name)}, o.env...)
}

// envSuffix turns an option name into UPPER_SNAKE case: appId -> APP_ID,
// restAPIKey -> REST_API_KEY, graphQLPath -> GRAPHQL_PATH,
// liveQuery.classNames -> LIVE_QUERY_CLASS_NAMES.
func envSuffix(name string) string {
	name = strings.NewReplacer("GraphQL", "Graphql", "graphQL", "graphql").Replace(name)
	rs := []rune(name)
	var b strings.Builder
	for i, r := range rs {
		if r == '.' {
			b.WriteByte('_')
			continue
		}
		if i > 0 && unicode.IsUpper(r) {
			prev := rs[i-1]
			nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
				b.WriteByte('_')
			}
		}
		b.WriteRune(unicode.ToUpper(r))
	}
	return b.String()
}

// typeName is the value type shown by Usage.
func (o *option) typeName() string {
	if o.field == nil {
		return "json"
	}
	switch o.field(&Options{}).(type) {
	case *string:
		return "string"
	case *int:
		return "int"
	case *bool:
		return "bool"
	case *[]string:
		return "list"
	case *int64:
		return "size"
	case *time.Duration:
		return "seconds"
	case *[]map[string]any:
		return "objects"
	case *TrustProxy:
		return "proxies"
	case *map[string]any, *[]RateLimitOptions, *CacheAdapterOptions:
		return "json"
	}
	panic("config: option " + o.name + " has an unsupported field type")
}

// subOptions returns the dotted options of the object option o, in table order.
func (o *option) subOptions() []*option {
	var subs []*option
	for _, s := range options {
		if strings.HasPrefix(s.name, o.name+".") {
			subs = append(subs, s)
		}
	}
	return subs
}
