package config

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// finish derives the computed fields, normalizes paths and validates.
func (l *loader) finish() {
	o := l.opts
	o.DevMode = l.from["appId"] == ""
	o.LiveQuery.AllClasses = o.DevMode && len(o.LiveQuery.ClassNames) == 0
	if o.Verbose && l.from["logLevel"] == "" {
		o.LogLevel = "verbose"
	}
	o.LogLevel = strings.ToLower(strings.TrimSpace(o.LogLevel))
	switch o.Compatibility {
	case CompatSpecification:
	case CompatParseServer:
		// Parse Server 9's defaults, unless the operator chose otherwise.
		if l.from["enforcePrivateUsers"] == "" {
			o.EnforcePrivateUsers = true
		}
	default:
		l.fail("compatibility", l.source("compatibility"), fmt.Errorf("must be %q or %q, got %q", CompatSpecification, CompatParseServer, o.Compatibility))
	}

	check := func(name string, err error) {
		if err != nil {
			l.fail(name, l.source(name), err)
		}
	}
	for _, p := range []struct {
		name string
		path *string
	}{{"mountPath", &o.MountPath}, {"graphQLPath", &o.GraphQLPath}, {"playgroundPath", &o.PlaygroundPath}} {
		v, err := normalizePath(*p.path)
		check(p.name, err)
		*p.path = v
	}

	if o.AppID == "" {
		check("appId", errors.New("must not be empty"))
	}
	if o.MasterKey != "" && o.ReadOnlyMasterKey == o.MasterKey {
		check("readOnlyMasterKey", errors.New("must differ from masterKey"))
	}
	for _, ip := range o.MasterKeyIPs {
		if _, err := netip.ParseAddr(ip); err == nil {
			continue
		}
		if _, err := netip.ParsePrefix(ip); err == nil {
			continue
		}
		check("masterKeyIps", fmt.Errorf("%q is not an IP address or CIDR range", ip))
	}
	for _, ip := range o.MaintenanceKeyIPs {
		if _, err := netip.ParseAddr(ip); err == nil {
			continue
		}
		if _, err := netip.ParsePrefix(ip); err == nil {
			continue
		}
		check("maintenanceKeyIps", fmt.Errorf("%q is not an IP address or CIDR range", ip))
	}
	if o.MaintenanceKey != "" && (o.MaintenanceKey == o.MasterKey || o.MaintenanceKey == o.ReadOnlyMasterKey) {
		check("maintenanceKey", errors.New("must differ from masterKey and readOnlyMasterKey"))
	}
	check("requestKeywordDenylist", checkDenylist(o.RequestKeywordDenylist))
	check("schema", checkSchemaOption(o.Schema))
	for k, v := range o.Security {
		if _, isBool := v.(bool); (k != "enableCheck" && k != "enableCheckLog") || !isBool {
			check("security", fmt.Errorf("%s: want enableCheck or enableCheckLog, true or false (checkGroups, JavaScript, cannot be given here)", k))
		}
	}
	if v, ok := o.DatabaseOptions["allowPublicExplain"]; ok {
		if _, isBool := v.(bool); !isBool {
			check("databaseOptions", errors.New("allowPublicExplain: want true or false"))
		}
	}
	if !o.EncodeParseObjectInCloudFunction {
		check("encodeParseObjectInCloudFunction", errors.New("false is not supported: Parse Server 9 removed the option, "+
			"and objects and pointers in cloud function params always arrive as Parse.Object instances; remove it"))
	}
	if o.Port < 0 || o.Port > 65535 {
		check("port", fmt.Errorf("must be between 1 and 65535 (or 0 for any free port), got %d", o.Port))
	}
	if strings.TrimSpace(o.Host) == "" {
		check("host", errors.New("must not be empty"))
	}
	check("serverURL", checkHTTPURL(o.ServerURL))
	check("publicServerURL", checkHTTPURL(o.PublicServerURL))
	if len(o.AllowOrigin) == 0 {
		check("allowOrigin", errors.New(`must list at least one origin ("*" for any)`))
	}
	if strings.TrimSpace(o.DatabaseURI) == "" {
		check("databaseURI", errors.New("must not be empty"))
	} else if isMongoURI(o.DatabaseURI) {
		check("databaseURI", errors.New("MongoDB is not a store Quarry runs on: move the data in with `quarry import --from mongodb-export-dir` "+
			"(the embedded store, a file path) or run on PostgreSQL (postgres://…) to share one database between instances; see docs/migration.md"))
	}
	if o.MaxUploadSize <= 0 {
		check("maxUploadSize", fmt.Errorf("must be more than 0 bytes, got %d", o.MaxUploadSize))
	}
	atLeast := func(name string, v, min int) {
		if v < min {
			check(name, fmt.Errorf("must be at least %d, got %d", min, v))
		}
	}
	atLeast("defaultLimit", o.DefaultLimit, 1)
	atLeast("maxLimit", o.MaxLimit, 0)
	atLeast("batchSize", o.BatchSize, 1)
	atLeast("maxScan", o.MaxScan, 0)
	atLeast("sqlClassesOver", o.SQLClassesOver, 0)
	atLeast("nearSphereMaxDistanceMiles", o.NearSphereMaxDistanceMiles, 0)
	if o.PasswordHashCost < 4 || o.PasswordHashCost > 31 {
		check("passwordHashCost", fmt.Errorf("must be between 4 and 31, got %d", o.PasswordHashCost))
	}
	atLeast("maxJSONDepth", o.MaxJSONDepth, 1)
	if o.SessionLength <= 0 {
		check("sessionLength", errors.New("must be at least 1 second"))
	}
	for _, ix := range o.Indexes {
		class, field, ok := strings.Cut(ix, ".")
		if !ok || !validClassName(class) || field == "" || strings.HasPrefix(field, ".") || strings.HasSuffix(field, ".") {
			check("indexes", fmt.Errorf("%q is not Class.field", ix))
		}
	}
	if err := checkCacheAdapter(o.CacheAdapter); err != nil {
		check("cacheAdapter", err)
	}
	for _, c := range o.SQLClasses {
		if !validClassName(c) || strings.HasPrefix(c, "_") {
			check("sqlClasses", fmt.Errorf("%q is not a custom class name", c))
		}
	}
	if err := validateRateLimits(o.RateLimit); err != nil {
		check("rateLimit", err)
	}
	for _, c := range o.LiveQuery.ClassNames {
		if !validClassName(c) {
			check("liveQuery.classNames", fmt.Errorf("%q is not a class name", c))
		}
	}
	if o.LiveQuery.RedisURL != "" {
		u, err := url.Parse(o.LiveQuery.RedisURL)
		if err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") {
			check("liveQuery.redisURL", fmt.Errorf("want a redis:// or rediss:// URL, got %q", o.LiveQuery.RedisURL))
		}
	}
	lq := &o.LiveQueryServer
	if lq.RedisURL != "" {
		if u, err := url.Parse(lq.RedisURL); err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") {
			check("liveQueryServerOptions.redisURL", fmt.Errorf("want a redis:// or rediss:// URL, got %q", lq.RedisURL))
		}
	}
	check("liveQueryServerOptions.serverURL", checkHTTPURL(lq.ServerURL))
	if lq.WebsocketTimeout < 1 {
		check("liveQueryServerOptions.websocketTimeout", fmt.Errorf("must be at least 1 ms, got %d", lq.WebsocketTimeout))
	}
	for name, n := range map[string]int{"maxSubscriptionsPerClient": lq.MaxSubscriptionsPerClient,
		"maxSubscriptionsPerUser": lq.MaxSubscriptionsPerUser, "maxSubscriptions": lq.MaxSubscriptions} {
		if n < 0 {
			check("liveQueryServerOptions."+name, fmt.Errorf("must be 0 (the default) or more, got %d", n))
		}
	}
	if lq.CacheTimeout < 0 {
		check("liveQueryServerOptions.cacheTimeout", fmt.Errorf("must be 0 ms or more, got %d", lq.CacheTimeout))
	}
	if lq.Port < 0 || lq.Port > 65535 {
		check("liveQueryServerOptions.port", fmt.Errorf("must be between 1 and 65535 (0: the port option), got %d", lq.Port))
	}
	lq.LogLevel = strings.ToUpper(strings.TrimSpace(lq.LogLevel))
	if !slices.Contains(LiveQueryLogLevels, lq.LogLevel) {
		check("liveQueryServerOptions.logLevel", fmt.Errorf("want one of %s, got %q", strings.Join(LiveQueryLogLevels, ", "), lq.LogLevel))
	}
	if o.MountGraphQL && o.GraphQLPath == o.MountPath {
		check("graphQLPath", fmt.Errorf("must differ from mountPath %q", o.MountPath))
	}
	if o.MountPlayground && o.PlaygroundPath == o.GraphQLPath {
		check("playgroundPath", fmt.Errorf("must differ from graphQLPath %q", o.GraphQLPath))
	}
	if o.MountPlayground && o.PlaygroundPath == o.MountPath {
		check("playgroundPath", fmt.Errorf("must differ from mountPath %q", o.MountPath))
	}
	if !slices.Contains(LogLevels, o.LogLevel) {
		check("logLevel", fmt.Errorf("want one of %s, got %q", strings.Join(LogLevels, ", "), o.LogLevel))
	}
	for _, p := range o.Idempotency.Paths {
		if _, err := regexp.Compile("^(?:" + p + ")$"); err != nil {
			check("idempotencyOptions.paths", fmt.Errorf("%q is not a regular expression", p))
		}
	}
	if o.Idempotency.TTL < 1 {
		check("idempotencyOptions.ttl", fmt.Errorf("must be at least 1 second, got %d", o.Idempotency.TTL))
	}
	if o.RequestLogPercent < 0 || o.RequestLogPercent > 100 {
		check("requestLogPercent", fmt.Errorf("must be between 0 and 100, got %d", o.RequestLogPercent))
	}
	if o.GCHeadroomPercent < 0 || o.GCHeadroomPercent > 1000 {
		check("gcHeadroomPercent", fmt.Errorf("must be between 0 (Go's default) and 1000, got %d", o.GCHeadroomPercent))
	}
	if o.CloudCodeTimeout < 1 {
		check("cloudCodeTimeout", fmt.Errorf("must be at least 1 ms, got %d", o.CloudCodeTimeout))
	}
	if o.CloudCodeMaxMemory < 0 || o.CloudCodeMaxMemory > 0 && o.CloudCodeMaxMemory < MinCloudCodeMaxMemory {
		check("cloudCodeMaxMemory", fmt.Errorf("must be 0 (no bound) or at least %s, got %d bytes", FormatSize(MinCloudCodeMaxMemory), o.CloudCodeMaxMemory))
	}
	if o.MetricsPort < 0 || o.MetricsPort > 65535 || o.MetricsPort != 0 && o.MetricsPort == o.Port {
		check("metricsPort", fmt.Errorf("must be a port between 1 and 65535 other than port (or 0 to serve /metrics on the main port), got %d", o.MetricsPort))
	}
	if _, err := o.ProtectedFieldSets(); err != nil {
		check("protectedFields", err)
	}
	if o.ObjectIDSize < 10 || o.ObjectIDSize > 64 {
		// Fewer than 10 characters of 62 make collisions likely in a large
		// class; more than 64 is more than an imported id may hold.
		check("objectIdSize", fmt.Errorf("must be between 10 and 64, got %d", o.ObjectIDSize))
	}
	if o.SlowQueryMs < 0 {
		check("slowQueryMs", fmt.Errorf("must be 0 or more, got %d", o.SlowQueryMs))
	}
	checkFiles(&o.Files, check)
	checkPush(&o.Push, check)
	checkAccounts(o, check, l.warn)
	checkPages(o.Pages, check, l.warn)

	// Options Quarry accepts but does not act on yet: each says so once at
	// start-up rather than leaving the operator to wonder.
	notYet := []struct {
		name, what string
		set        bool
	}{
		{"mountPlayground", "the playground is served only with mountGraphQL", o.MountPlayground && !o.MountGraphQL},
		{"fileKey", "legacy hosted file URLs are not made", o.FileKey != ""},
	}
	for _, n := range notYet {
		if n.set {
			l.warn("%s (%s): accepted, but it has no effect yet: %s", n.name, l.source(n.name), n.what)
		}
	}
}

// isMongoURI reports a MongoDB connection string (Parse Server's usual
// databaseURI), which an operator moving in is likely to carry over.
func isMongoURI(uri string) bool {
	u := strings.ToLower(strings.TrimSpace(uri))
	return strings.HasPrefix(u, "mongodb://") || strings.HasPrefix(u, "mongodb+srv://")
}

// normalizePath checks that p starts with "/" and drops trailing slashes;
// the root stays "/".
func normalizePath(p string) (string, error) {
	if !strings.HasPrefix(p, "/") {
		return p, fmt.Errorf(`must start with "/", got %q`, p)
	}
	if strings.ContainsAny(p, "?# \t") {
		return p, fmt.Errorf("must be a plain path, got %q", p)
	}
	if t := strings.TrimRight(p, "/"); t != "" {
		return t, nil
	}
	return "/", nil
}

// checkHTTPURL accepts "" or an absolute http(s) URL with a host.
func checkHTTPURL(s string) error {
	if s == "" {
		return nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("want an http:// or https:// URL, got %q", s)
	}
	return nil
}

// validClassName reports whether s follows the class name rule (a letter,
// then letters, digits or underscores); built-in classes start with "_".
func validClassName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		letter := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		switch {
		case letter, r == '_':
		case i > 0 && r >= '0' && r <= '9':
		default:
			return false
		}
	}
	return true
}
