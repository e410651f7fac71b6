package config

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestEnvNames(t *testing.T) {
	wantEnv := map[string]string{
		// Email and account policies (accounts.go).
		"appName":                                           "QUARRY_APP_NAME PARSE_SERVER_APP_NAME",
		"verifyUserEmails":                                  "QUARRY_VERIFY_USER_EMAILS PARSE_SERVER_VERIFY_USER_EMAILS",
		"sendUserEmailVerification":                         "QUARRY_SEND_USER_EMAIL_VERIFICATION PARSE_SERVER_SEND_USER_EMAIL_VERIFICATION",
		"preventLoginWithUnverifiedEmail":                   "QUARRY_PREVENT_LOGIN_WITH_UNVERIFIED_EMAIL PARSE_SERVER_PREVENT_LOGIN_WITH_UNVERIFIED_EMAIL",
		"preventSignupWithUnverifiedEmail":                  "QUARRY_PREVENT_SIGNUP_WITH_UNVERIFIED_EMAIL PARSE_SERVER_PREVENT_SIGNUP_WITH_UNVERIFIED_EMAIL",
		"emailVerifyTokenValidityDuration":                  "QUARRY_EMAIL_VERIFY_TOKEN_VALIDITY_DURATION PARSE_SERVER_EMAIL_VERIFY_TOKEN_VALIDITY_DURATION",
		"emailVerifyTokenReuseIfValid":                      "QUARRY_EMAIL_VERIFY_TOKEN_REUSE_IF_VALID PARSE_SERVER_EMAIL_VERIFY_TOKEN_REUSE_IF_VALID",
		"emailVerifySuccessOnInvalidEmail":                  "QUARRY_EMAIL_VERIFY_SUCCESS_ON_INVALID_EMAIL PARSE_SERVER_EMAIL_VERIFY_SUCCESS_ON_INVALID_EMAIL",
		"emailAdapter":                                      "QUARRY_EMAIL_ADAPTER PARSE_SERVER_EMAIL_ADAPTER",
		"emailAdapter.module":                               "QUARRY_EMAIL_ADAPTER_MODULE",
		"emailAdapter.options":                              "QUARRY_EMAIL_ADAPTER_OPTIONS",
		"emailAdapter.options.host":                         "QUARRY_EMAIL_ADAPTER_OPTIONS_HOST",
		"emailAdapter.options.port":                         "QUARRY_EMAIL_ADAPTER_OPTIONS_PORT",
		"emailAdapter.options.username":                     "QUARRY_EMAIL_ADAPTER_OPTIONS_USERNAME",
		"emailAdapter.options.password":                     "QUARRY_EMAIL_ADAPTER_OPTIONS_PASSWORD",
		"emailAdapter.options.fromAddress":                  "QUARRY_EMAIL_ADAPTER_OPTIONS_FROM_ADDRESS",
		"emailAdapter.options.secure":                       "QUARRY_EMAIL_ADAPTER_OPTIONS_SECURE",
		"emailAdapter.options.verificationEmailTemplate":    "QUARRY_EMAIL_ADAPTER_OPTIONS_VERIFICATION_EMAIL_TEMPLATE",
		"emailAdapter.options.passwordResetEmailTemplate":   "QUARRY_EMAIL_ADAPTER_OPTIONS_PASSWORD_RESET_EMAIL_TEMPLATE",
		"emailAdapter.options.queueSize":                    "QUARRY_EMAIL_ADAPTER_OPTIONS_QUEUE_SIZE",
		"emailAdapter.options.maxAttempts":                  "QUARRY_EMAIL_ADAPTER_OPTIONS_MAX_ATTEMPTS",
		"customPages":                                       "QUARRY_CUSTOM_PAGES PARSE_SERVER_CUSTOM_PAGES",
		"customPages.invalidLink":                           "QUARRY_CUSTOM_PAGES_INVALID_LINK",
		"customPages.invalidVerificationLink":               "QUARRY_CUSTOM_PAGES_INVALID_VERIFICATION_LINK",
		"customPages.linkSendSuccess":                       "QUARRY_CUSTOM_PAGES_LINK_SEND_SUCCESS",
		"customPages.linkSendFail":                          "QUARRY_CUSTOM_PAGES_LINK_SEND_FAIL",
		"customPages.choosePassword":                        "QUARRY_CUSTOM_PAGES_CHOOSE_PASSWORD",
		"customPages.passwordResetSuccess":                  "QUARRY_CUSTOM_PAGES_PASSWORD_RESET_SUCCESS",
		"customPages.verifyEmailSuccess":                    "QUARRY_CUSTOM_PAGES_VERIFY_EMAIL_SUCCESS",
		"passwordPolicy":                                    "QUARRY_PASSWORD_POLICY PARSE_SERVER_PASSWORD_POLICY",
		"passwordPolicy.validatorPattern":                   "QUARRY_PASSWORD_POLICY_VALIDATOR_PATTERN",
		"passwordPolicy.validationError":                    "QUARRY_PASSWORD_POLICY_VALIDATION_ERROR",
		"passwordPolicy.validatorCallback":                  "QUARRY_PASSWORD_POLICY_VALIDATOR_CALLBACK",
		"passwordPolicy.doNotAllowUsername":                 "QUARRY_PASSWORD_POLICY_DO_NOT_ALLOW_USERNAME",
		"passwordPolicy.maxPasswordAge":                     "QUARRY_PASSWORD_POLICY_MAX_PASSWORD_AGE",
		"passwordPolicy.maxPasswordHistory":                 "QUARRY_PASSWORD_POLICY_MAX_PASSWORD_HISTORY",
		"passwordPolicy.resetTokenValidityDuration":         "QUARRY_PASSWORD_POLICY_RESET_TOKEN_VALIDITY_DURATION",
		"passwordPolicy.resetTokenReuseIfValid":             "QUARRY_PASSWORD_POLICY_RESET_TOKEN_REUSE_IF_VALID",
		"passwordPolicy.resetPasswordSuccessOnInvalidEmail": "QUARRY_PASSWORD_POLICY_RESET_PASSWORD_SUCCESS_ON_INVALID_EMAIL",
		"accountLockout":                                    "QUARRY_ACCOUNT_LOCKOUT PARSE_SERVER_ACCOUNT_LOCKOUT",
		"accountLockout.duration":                           "QUARRY_ACCOUNT_LOCKOUT_DURATION",
		"accountLockout.threshold":                          "QUARRY_ACCOUNT_LOCKOUT_THRESHOLD",
		"accountLockout.unlockOnPasswordReset":              "QUARRY_ACCOUNT_LOCKOUT_UNLOCK_ON_PASSWORD_RESET",
		"expireInactiveSessions":                            "QUARRY_EXPIRE_INACTIVE_SESSIONS PARSE_SERVER_EXPIRE_INACTIVE_SESSIONS",
		"revokeSessionOnPasswordReset":                      "QUARRY_REVOKE_SESSION_ON_PASSWORD_RESET PARSE_SERVER_REVOKE_SESSION_ON_PASSWORD_RESET",

		"appId":                            "QUARRY_APP_ID PARSE_SERVER_APPLICATION_ID",
		"masterKey":                        "QUARRY_MASTER_KEY PARSE_SERVER_MASTER_KEY",
		"readOnlyMasterKey":                "QUARRY_READ_ONLY_MASTER_KEY PARSE_SERVER_READ_ONLY_MASTER_KEY",
		"clientKey":                        "QUARRY_CLIENT_KEY PARSE_SERVER_CLIENT_KEY",
		"javascriptKey":                    "QUARRY_JAVASCRIPT_KEY PARSE_SERVER_JAVASCRIPT_KEY",
		"restAPIKey":                       "QUARRY_REST_API_KEY PARSE_SERVER_REST_API_KEY",
		"dotNetKey":                        "QUARRY_DOT_NET_KEY PARSE_SERVER_DOT_NET_KEY",
		"fileKey":                          "QUARRY_FILE_KEY PARSE_SERVER_FILE_KEY",
		"masterKeyIps":                     "QUARRY_MASTER_KEY_IPS PARSE_SERVER_MASTER_KEY_IPS",
		"host":                             "QUARRY_HOST PARSE_SERVER_HOST",
		"port":                             "QUARRY_PORT PORT",
		"mountPath":                        "QUARRY_MOUNT_PATH PARSE_SERVER_MOUNT_PATH",
		"serverURL":                        "QUARRY_SERVER_URL PARSE_SERVER_URL",
		"publicServerURL":                  "QUARRY_PUBLIC_SERVER_URL PARSE_PUBLIC_SERVER_URL",
		"allowOrigin":                      "QUARRY_ALLOW_ORIGIN PARSE_SERVER_ALLOW_ORIGIN",
		"allowHeaders":                     "QUARRY_ALLOW_HEADERS PARSE_SERVER_ALLOW_HEADERS",
		"databaseURI":                      "QUARRY_DATABASE_URI PARSE_SERVER_DATABASE_URI",
		"maxUploadSize":                    "QUARRY_MAX_UPLOAD_SIZE PARSE_SERVER_MAX_UPLOAD_SIZE",
		"defaultLimit":                     "QUARRY_DEFAULT_LIMIT PARSE_SERVER_DEFAULT_LIMIT",
		"maxLimit":                         "QUARRY_MAX_LIMIT PARSE_SERVER_MAX_LIMIT",
		"batchSize":                        "QUARRY_BATCH_SIZE",
		"maxScan":                          "QUARRY_MAX_SCAN",
		"maxScanMasterKey":                 "QUARRY_MAX_SCAN_MASTER_KEY",
		"maxScanWarnOnly":                  "QUARRY_MAX_SCAN_WARN_ONLY",
		"nearSphereMaxDistanceMiles":       "QUARRY_NEAR_SPHERE_MAX_DISTANCE_MILES",
		"indexes":                          "QUARRY_INDEXES",
		"sqlClasses":                       "QUARRY_SQL_CLASSES",
		"sqlClassesOver":                   "QUARRY_SQL_CLASSES_OVER",
		"compatibility":                    "QUARRY_COMPATIBILITY",
		"queryReadAfterWrites":             "QUARRY_QUERY_READ_AFTER_WRITES",
		"protectedFields":                  "QUARRY_PROTECTED_FIELDS PARSE_SERVER_PROTECTED_FIELDS",
		"allowCustomObjectId":              "QUARRY_ALLOW_CUSTOM_OBJECT_ID PARSE_SERVER_ALLOW_CUSTOM_OBJECT_ID",
		"objectIdSize":                     "QUARRY_OBJECT_ID_SIZE PARSE_SERVER_OBJECT_ID_SIZE",
		"enableCollationCaseComparison":    "QUARRY_ENABLE_COLLATION_CASE_COMPARISON PARSE_SERVER_ENABLE_COLLATION_CASE_COMPARISON",
		"allowExpiredAuthDataToken":        "QUARRY_ALLOW_EXPIRED_AUTH_DATA_TOKEN PARSE_SERVER_ALLOW_EXPIRED_AUTH_DATA_TOKEN",
		"encodeParseObjectInCloudFunction": "QUARRY_ENCODE_PARSE_OBJECT_IN_CLOUD_FUNCTION PARSE_SERVER_ENCODE_PARSE_OBJECT_IN_CLOUD_FUNCTION",
		"databaseOptions":                  "QUARRY_DATABASE_OPTIONS PARSE_SERVER_DATABASE_OPTIONS",
		"security":                         "QUARRY_SECURITY PARSE_SERVER_SECURITY",
		"schema":                           "QUARRY_SCHEMA PARSE_SERVER_SCHEMA",
		"maintenanceKey":                   "QUARRY_MAINTENANCE_KEY PARSE_SERVER_MAINTENANCE_KEY",
		"maintenanceKeyIps":                "QUARRY_MAINTENANCE_KEY_IPS PARSE_SERVER_MAINTENANCE_KEY_IPS",
		"trustProxy":                       "QUARRY_TRUST_PROXY PARSE_SERVER_TRUST_PROXY",
		"requestKeywordDenylist":           "QUARRY_REQUEST_KEYWORD_DENYLIST PARSE_SERVER_REQUEST_KEYWORD_DENYLIST",
		"convertUsernameToLowercase":       "QUARRY_CONVERT_USERNAME_TO_LOWERCASE PARSE_SERVER_CONVERT_USERNAME_TO_LOWERCASE",
		"convertEmailToLowercase":          "QUARRY_CONVERT_EMAIL_TO_LOWERCASE PARSE_SERVER_CONVERT_EMAIL_TO_LOWERCASE",
		"extendSessionOnUse":               "QUARRY_EXTEND_SESSION_ON_USE PARSE_SERVER_EXTEND_SESSION_ON_USE",
		"enforcePrivateUsers":              "QUARRY_ENFORCE_PRIVATE_USERS PARSE_SERVER_ENFORCE_PRIVATE_USERS",
		"auth":                             "QUARRY_AUTH PARSE_SERVER_AUTH_PROVIDERS",
		"enableAnonymousUsers":             "QUARRY_ENABLE_ANONYMOUS_USERS PARSE_SERVER_ENABLE_ANON_USERS",
		"enableInsecureAuthAdapters":       "QUARRY_ENABLE_INSECURE_AUTH_ADAPTERS PARSE_SERVER_ENABLE_INSECURE_AUTH_ADAPTERS",
		"passwordHashCost":                 "QUARRY_PASSWORD_HASH_COST",
		"maxJSONDepth":                     "QUARRY_MAX_JSON_DEPTH",
		"allowClientClassCreation":         "QUARRY_ALLOW_CLIENT_CLASS_CREATION PARSE_SERVER_ALLOW_CLIENT_CLASS_CREATION",
		"sessionLength":                    "QUARRY_SESSION_LENGTH PARSE_SERVER_SESSION_LENGTH",
		"liveQuery":                        "QUARRY_LIVE_QUERY PARSE_SERVER_LIVE_QUERY",
		"liveQuery.classNames":             "QUARRY_LIVE_QUERY_CLASS_NAMES PARSE_SERVER_LIVEQUERY_CLASSNAMES",
		"liveQuery.redisURL":               "QUARRY_LIVE_QUERY_REDIS_URL PARSE_SERVER_LIVEQUERY_REDIS_URL",
		"liveQueryServerOptions":           "QUARRY_LIVE_QUERY_SERVER_OPTIONS PARSE_SERVER_LIVE_QUERY_SERVER_OPTIONS",
		"liveQueryServerOptions.appId":     "QUARRY_LIVE_QUERY_SERVER_OPTIONS_APP_ID PARSE_LIVE_QUERY_SERVER_APP_ID",
		"liveQueryServerOptions.masterKey": "QUARRY_LIVE_QUERY_SERVER_OPTIONS_MASTER_KEY PARSE_LIVE_QUERY_SERVER_MASTER_KEY",
		"liveQueryServerOptions.serverURL": "QUARRY_LIVE_QUERY_SERVER_OPTIONS_SERVER_URL PARSE_LIVE_QUERY_SERVER_SERVER_URL",
		"liveQueryServerOptions.keyPairs":  "QUARRY_LIVE_QUERY_SERVER_OPTIONS_KEY_PAIRS PARSE_LIVE_QUERY_SERVER_KEY_PAIRS",
		"liveQueryServerOptions.keyPairs.javascriptKey": "QUARRY_LIVE_QUERY_SERVER_OPTIONS_KEY_PAIRS_JAVASCRIPT_KEY",
		"liveQueryServerOptions.keyPairs.restAPIKey":    "QUARRY_LIVE_QUERY_SERVER_OPTIONS_KEY_PAIRS_REST_API_KEY",
		"liveQueryServerOptions.keyPairs.clientKey":     "QUARRY_LIVE_QUERY_SERVER_OPTIONS_KEY_PAIRS_CLIENT_KEY",
		"liveQueryServerOptions.keyPairs.windowsKey":    "QUARRY_LIVE_QUERY_SERVER_OPTIONS_KEY_PAIRS_WINDOWS_KEY",
		"liveQueryServerOptions.keyPairs.masterKey":     "QUARRY_LIVE_QUERY_SERVER_OPTIONS_KEY_PAIRS_MASTER_KEY",
		"liveQueryServerOptions.websocketTimeout":       "QUARRY_LIVE_QUERY_SERVER_OPTIONS_WEBSOCKET_TIMEOUT PARSE_LIVE_QUERY_SERVER_WEBSOCKET_TIMEOUT",
		"liveQueryServerOptions.cacheTimeout":           "QUARRY_LIVE_QUERY_SERVER_OPTIONS_CACHE_TIMEOUT PARSE_LIVE_QUERY_SERVER_CACHE_TIMEOUT",
		"liveQueryServerOptions.logLevel":               "QUARRY_LIVE_QUERY_SERVER_OPTIONS_LOG_LEVEL PARSE_LIVE_QUERY_SERVER_LOG_LEVEL",
		"liveQueryServerOptions.port":                   "QUARRY_LIVE_QUERY_SERVER_OPTIONS_PORT PARSE_LIVE_QUERY_SERVER_PORT",
		"liveQueryServerOptions.redisURL":               "QUARRY_LIVE_QUERY_SERVER_OPTIONS_REDIS_URL PARSE_LIVE_QUERY_SERVER_REDIS_URL",
		"mountGraphQL":                                  "QUARRY_MOUNT_GRAPHQL PARSE_SERVER_MOUNT_GRAPHQL",
		"graphQLPath":                                   "QUARRY_GRAPHQL_PATH PARSE_SERVER_GRAPHQL_PATH",
		"mountPlayground":                               "QUARRY_MOUNT_PLAYGROUND PARSE_SERVER_MOUNT_PLAYGROUND",
		"playgroundPath":                                "QUARRY_PLAYGROUND_PATH PARSE_SERVER_PLAYGROUND_PATH",
		"graphQLPublicIntrospection":                    "QUARRY_GRAPHQL_PUBLIC_INTROSPECTION PARSE_SERVER_GRAPHQL_PUBLIC_INTROSPECTION",
		"graphQLMaxDepth":                               "QUARRY_GRAPHQL_MAX_DEPTH",
		"graphQLMaxAliases":                             "QUARRY_GRAPHQL_MAX_ALIASES",
		"graphQLMaxFields":                              "QUARRY_GRAPHQL_MAX_FIELDS",
		"graphQLMaxComplexity":                          "QUARRY_GRAPHQL_MAX_COMPLEXITY",
		"graphQLCustomTypeDefs":                         "QUARRY_GRAPHQL_CUSTOM_TYPE_DEFS",
		"graphQLSchema":                                 "QUARRY_GRAPHQL_SCHEMA PARSE_SERVER_GRAPH_QLSCHEMA",
		"logLevel":                                      "QUARRY_LOG_LEVEL PARSE_SERVER_LOG_LEVEL",
		"verbose":                                       "QUARRY_VERBOSE VERBOSE",
		"cloud":                                         "QUARRY_CLOUD PARSE_SERVER_CLOUD",
		"cloudCodeTimeout":                              "QUARRY_CLOUD_CODE_TIMEOUT",
		"cloudCodeMaxMemory":                            "QUARRY_CLOUD_CODE_MAX_MEMORY",
		"cloudCodeEnv":                                  "QUARRY_CLOUD_CODE_ENV",
		"gcHeadroomPercent":                             "QUARRY_GC_HEADROOM_PERCENT",
		"webhookKey":                                    "QUARRY_WEBHOOK_KEY PARSE_SERVER_WEBHOOK_KEY",
		"outboundAllowPrivate":                          "QUARRY_OUTBOUND_ALLOW_PRIVATE",
		"outboundAllowList":                             "QUARRY_OUTBOUND_ALLOW_LIST",
		"maxServerSubscriptions":                        "QUARRY_MAX_SERVER_SUBSCRIPTIONS",
		"silent":                                        "QUARRY_SILENT SILENT",
		"jsonLogs":                                      "QUARRY_JSON_LOGS JSON_LOGS",
		"requestLogPercent":                             "QUARRY_REQUEST_LOG_PERCENT",
		"slowQueryMs":                                   "QUARRY_SLOW_QUERY_MS",
		"metricsIps":                                    "QUARRY_METRICS_IPS",
		"metricsPort":                                   "QUARRY_METRICS_PORT",
		"pprofAddress":                                  "QUARRY_PPROF_ADDRESS",
		"idempotencyOptions":                            "QUARRY_IDEMPOTENCY_OPTIONS PARSE_SERVER_EXPERIMENTAL_IDEMPOTENCY_OPTIONS",
		"rateLimit":                                     "QUARRY_RATE_LIMIT PARSE_SERVER_RATE_LIMIT",
		"pages":                                         "QUARRY_PAGES PARSE_SERVER_PAGES",
		"scheduledPush":                                 "QUARRY_SCHEDULED_PUSH PARSE_SERVER_SCHEDULED_PUSH",
		"push":                                          "QUARRY_PUSH PARSE_SERVER_PUSH",
		"push.adapter":                                  "QUARRY_PUSH_ADAPTER",
		"push.fcm":                                      "QUARRY_PUSH_FCM",
		"push.fcm.projectId":                            "QUARRY_PUSH_FCM_PROJECT_ID",
		"push.fcm.serviceAccountFile":                   "QUARRY_PUSH_FCM_SERVICE_ACCOUNT_FILE",
		"push.fcm.endpoint":                             "QUARRY_PUSH_FCM_ENDPOINT",
		"push.fcm.tokenURI":                             "QUARRY_PUSH_FCM_TOKEN_URI",
		"push.ios":                                      "QUARRY_PUSH_IOS",
		"push.osx":                                      "QUARRY_PUSH_OSX",
		"push.tvos":                                     "QUARRY_PUSH_TVOS",
		"push.watchos":                                  "QUARRY_PUSH_WATCHOS",
		"push.android":                                  "QUARRY_PUSH_ANDROID",
		"push.android.firebaseServiceAccount":           "QUARRY_PUSH_ANDROID_FIREBASE_SERVICE_ACCOUNT",
		"push.apns":                                     "QUARRY_PUSH_APNS",
		"push.apns.topics":                              "QUARRY_PUSH_APNS_TOPICS",
		"push.apns.environment":                         "QUARRY_PUSH_APNS_ENVIRONMENT",
		"push.apns.tokenKeyFile":                        "QUARRY_PUSH_APNS_TOKEN_KEY_FILE",
		"push.apns.keyId":                               "QUARRY_PUSH_APNS_KEY_ID",
		"push.apns.teamId":                              "QUARRY_PUSH_APNS_TEAM_ID",
		"push.apns.certFile":                            "QUARRY_PUSH_APNS_CERT_FILE",
		"push.apns.certKeyFile":                         "QUARRY_PUSH_APNS_CERT_KEY_FILE",
		"push.apns.productionURL":                       "QUARRY_PUSH_APNS_PRODUCTION_URL",
		"push.apns.developmentURL":                      "QUARRY_PUSH_APNS_DEVELOPMENT_URL",
		"push.apns.caFile":                              "QUARRY_PUSH_APNS_CA_FILE",
		"idempotencyOptions.paths":                      "QUARRY_IDEMPOTENCY_OPTIONS_PATHS",
		"idempotencyOptions.ttl":                        "QUARRY_IDEMPOTENCY_OPTIONS_TTL",
		"filesAdapter":                                  "QUARRY_FILES_ADAPTER PARSE_SERVER_FILES_ADAPTER",
		"filesSubDirectory":                             "QUARRY_FILES_SUB_DIRECTORY PARSE_SERVER_FILES_SUB_DIRECTORY",
		"encryptionKey":                                 "QUARRY_ENCRYPTION_KEY PARSE_SERVER_ENCRYPTION_KEY",
		"preserveFileName":                              "QUARRY_PRESERVE_FILE_NAME PARSE_SERVER_PRESERVE_FILE_NAME",
		"fileUpload":                                    "QUARRY_FILE_UPLOAD PARSE_SERVER_FILE_UPLOAD_OPTIONS",
		"fileUpload.enableForPublic":                    "QUARRY_FILE_UPLOAD_ENABLE_FOR_PUBLIC",
		"fileUpload.enableForAnonymousUser":             "QUARRY_FILE_UPLOAD_ENABLE_FOR_ANONYMOUS_USER",
		"fileUpload.enableForAuthenticatedUser":         "QUARRY_FILE_UPLOAD_ENABLE_FOR_AUTHENTICATED_USER",
		"fileUpload.fileExtensions":                     "QUARRY_FILE_UPLOAD_FILE_EXTENSIONS",
		"s3Bucket":                                      "QUARRY_S3_BUCKET",
		"s3Prefix":                                      "QUARRY_S3_PREFIX",
		"s3Region":                                      "QUARRY_S3_REGION AWS_REGION",
		"s3Endpoint":                                    "QUARRY_S3_ENDPOINT",
		"s3AccessKey":                                   "QUARRY_S3_ACCESS_KEY AWS_ACCESS_KEY_ID",
		"s3SecretKey":                                   "QUARRY_S3_SECRET_KEY AWS_SECRET_ACCESS_KEY",
		"s3DirectAccess":                                "QUARRY_S3_DIRECT_ACCESS",
		"s3BaseUrl":                                     "QUARRY_S3_BASE_URL",
		"s3PresignedUrl":                                "QUARRY_S3_PRESIGNED_URL",
		"s3PresignedUrlExpires":                         "QUARRY_S3_PRESIGNED_URL_EXPIRES",
		"cacheAdapter":                                  "QUARRY_CACHE_ADAPTER PARSE_SERVER_CACHE_ADAPTER",

		// The LiveQuery subscription quotas.
		"liveQueryServerOptions.maxSubscriptionsPerClient": "QUARRY_LIVE_QUERY_SERVER_OPTIONS_MAX_SUBSCRIPTIONS_PER_CLIENT",
		"liveQueryServerOptions.maxSubscriptionsPerUser":   "QUARRY_LIVE_QUERY_SERVER_OPTIONS_MAX_SUBSCRIPTIONS_PER_USER",
		"liveQueryServerOptions.maxSubscriptions":          "QUARRY_LIVE_QUERY_SERVER_OPTIONS_MAX_SUBSCRIPTIONS",
	}
	if len(wantEnv) != len(options) {
		t.Errorf("table has %d options, test knows %d", len(options), len(wantEnv))
	}
	for _, o := range options {
		if got := strings.Join(o.envNames(), " "); got != wantEnv[o.name] {
			t.Errorf("%s: env %q, want %q", o.name, got, wantEnv[o.name])
		}
	}
}

func TestOptionTable(t *testing.T) {
	seen := map[string]bool{}
	for _, o := range options {
		if seen[o.name] {
			t.Errorf("%s listed twice", o.name)
		}
		seen[o.name] = true
		if isUnsupported[o.name] {
			t.Errorf("%s is both supported and ignored", o.name)
		}
		if o.usage == "" || !slices.Contains(groups, o.group) {
			t.Errorf("%s: missing usage or unknown group %q", o.name, o.group)
		}
		_ = o.typeName() // panics on a field type set cannot handle
		if parent, _, ok := strings.Cut(o.name, "."); ok && (byName[parent] == nil || byName[parent].field != nil) {
			t.Errorf("%s: parent %s is not an object option", o.name, parent)
		}
	}
	for _, n := range unsupported {
		if seen[n] {
			t.Errorf("%s listed twice among ignored options", n)
		}
		seen[n] = true
	}
	// Every supported option can be set from a flag and from the environment.
	for _, o := range options {
		if o.field == nil {
			continue
		}
		value := map[string]string{"string": "x", "int": "7", "bool": "true", "list": "a", "size": "1kb", "seconds": "9", "objects": `{"a": 1}`, "json": "{}", "proxies": "true"}[o.typeName()]
		if o.name == "rateLimit" {
			value = `[{"requestPath": "*", "requestTimeWindow": 1000, "requestCount": 1}]`
		}
		var flagErr, envErr error
		l := &loader{opts: Defaults(), from: map[string]string{}}
		l.apply(assignment{name: o.name, raw: value, source: "test"})
		flagErr = errors.Join(l.errs...)
		l2 := &loader{opts: Defaults(), from: map[string]string{}}
		for _, a := range l2.parseEnv([]string{o.envNames()[0] + "=" + value}) {
			l2.apply(a)
		}
		envErr = errors.Join(l2.errs...)
		if flagErr != nil || envErr != nil || l.from[o.name] != "test" || l2.from[o.name] != "env "+o.envNames()[0] {
			t.Errorf("%s: cannot be set: %v %v", o.name, flagErr, envErr)
		}
	}
}

func TestUsage(t *testing.T) {
	var buf bytes.Buffer
	Usage(&buf)
	out := buf.String()
	for _, o := range options {
		if !strings.Contains(out, "--"+o.name+" <"+o.typeName()+">") {
			t.Errorf("usage lacks --%s with its type", o.name)
		}
		for _, e := range o.envNames() {
			if !strings.Contains(out, e) {
				t.Errorf("usage lacks env %s", e)
			}
		}
		if !strings.Contains(out, "file: "+o.fileForm()) {
			t.Errorf("usage lacks the file form of %s", o.name)
		}
	}
	for _, n := range unsupported {
		if !strings.Contains(out, n) {
			t.Errorf("usage lacks ignored option %s", n)
		}
	}
	for _, s := range append(groups,
		"--port <int>  (default: 1337)",
		"--maxUploadSize <size>  (default: 10mb)",
		"--masterKeyIps <list>  (default: 127.0.0.1,::1)",
		"--sessionLength <seconds>  (default: 31536000)",
		"--allowClientClassCreation <bool>  (default: true)",
		`--databaseURI <string>  (default: "./quarry-data/quarry.db")`,
		"generated on first start",
		`"liveQuery": {"classNames": ["a", "b"]}`,
		"-h, --help",
	) {
		if !strings.Contains(out, s) {
			t.Errorf("usage lacks %q", s)
		}
	}
	for i, line := range strings.Split(out, "\n") {
		if len(line) > 110 {
			t.Errorf("usage line %d is %d long: %q", i+1, len(line), line)
		}
	}
}

func TestParseSize(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		err  bool
	}{
		{"0", 0, false},
		{"1048576", 1 << 20, false},
		{"20mb", 20 << 20, false},
		{"10MB", 10 << 20, false},
		{"512kb", 512 << 10, false},
		{"512 KB", 512 << 10, false},
		{" 1gb ", 1 << 30, false},
		{"2GiB", 2 << 30, false},
		{"1tb", 1 << 40, false},
		{"100b", 100, false},
		{"5k", 5 << 10, false},
		{"1.5mb", 3 << 19, false},
		{"0.5kb", 512, false},
		{"", 0, true},
		{"mb", 0, true},
		{"lots", 0, true},
		{"-1mb", 0, true},
		{"10 megabytes", 0, true},
		{"1.2.3mb", 0, true},
		{"10mb5", 0, true},
		{"9999999999tb", 0, true},
		{"99999999999999999999", 0, true},
		{"1e3", 0, true},
	} {
		got, err := ParseSize(c.in)
		if c.err {
			if err == nil || !errors.Is(err, ErrInvalidSize) {
				t.Errorf("ParseSize(%q) = %d, %v; want ErrInvalidSize", c.in, got, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
}

func TestFormatSize(t *testing.T) {
	for _, n := range []int64{0, 1, 1000, 1024, 10 << 20, 20 << 20, 3 << 19, 1 << 30, 5 << 40} {
		s := FormatSize(n)
		back, err := ParseSize(s)
		if err != nil || back != n {
			t.Errorf("FormatSize(%d) = %q, reads back as %d, %v", n, s, back, err)
		}
	}
	want(t, FormatSize(10<<20), "10mb")
	want(t, FormatSize(1536), "1536")
}

func TestEnvSuffix(t *testing.T) {
	for in, out := range map[string]string{
		"appId": "APP_ID", "restAPIKey": "REST_API_KEY", "databaseURI": "DATABASE_URI",
		"graphQLPath": "GRAPHQL_PATH", "mountGraphQL": "MOUNT_GRAPHQL", "maxJSONDepth": "MAX_JSON_DEPTH",
		"liveQuery.redisURL": "LIVE_QUERY_REDIS_URL", "http2Port": "HTTP2_PORT",
	} {
		if got := envSuffix(in); got != out {
			t.Errorf("envSuffix(%q) = %q, want %q", in, got, out)
		}
	}
}

func TestNormalizePath(t *testing.T) {
	for in, out := range map[string]string{"/parse": "/parse", "/parse/": "/parse", "/": "/", "//": "/", "/a/b//": "/a/b"} {
		got, err := normalizePath(in)
		if err != nil || got != out {
			t.Errorf("normalizePath(%q) = %q, %v; want %q", in, got, err, out)
		}
	}
	for _, in := range []string{"", "parse", "/a b", "/a#b"} {
		if _, err := normalizePath(in); err == nil {
			t.Errorf("normalizePath(%q): no error", in)
		}
	}
}

func TestSuggest(t *testing.T) {
	for in, out := range map[string]string{
		"appid": "appId", "apId": "appId", "masterkeyips": "masterKeyIps", "pushh": "push",
		"databaseUri": "databaseURI", "xyzzy": "", "mountGraphql": "mountGraphQL",
	} {
		if got := suggest(in); got != out {
			t.Errorf("suggest(%q) = %q, want %q", in, got, out)
		}
	}
}
