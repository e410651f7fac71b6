package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// requestOptions are the options on who a request comes from and what it
// may carry: the maintenance key, trusted proxies, the keyword denylist.
var requestOptions = []*option{
	{name: "maintenanceKey", group: groupKeys, env: []string{"PARSE_SERVER_MAINTENANCE_KEY"},
		usage: "key (X-Parse-Maintenance-Key) for data fixes: writes pass CLPs and ACLs, reads show account internals",
		field: func(o *Options) any { return &o.MaintenanceKey }},
	{name: "maintenanceKeyIps", group: groupKeys, env: []string{"PARSE_SERVER_MAINTENANCE_KEY_IPS"},
		usage: "IPs or CIDR ranges allowed to use the maintenance key (empty: none)",
		field: func(o *Options) any { return &o.MaintenanceKeyIPs }},
	{name: "trustProxy", group: groupHTTP, env: []string{"PARSE_SERVER_TRUST_PROXY"},
		def:   "false",
		usage: "proxies whose X-Forwarded-For names the client: true, a hop count, or IPs/CIDRs/loopback",
		field: func(o *Options) any { return &o.TrustProxy }},
	{name: "requestKeywordDenylist", group: groupQuery, env: []string{"PARSE_SERVER_REQUEST_KEYWORD_DENYLIST"},
		def:   "_bsontype: Code, constructor, __proto__",
		usage: "{key, value} regular expressions refused (105) anywhere in written data and file metadata",
		field: func(o *Options) any { return &o.RequestKeywordDenylist }},
}

// databaseOptionsOption is databaseOptions: only allowPublicExplain has a
// meaning here; the database clients' settings are ignored with a warning.
var databaseOptionsOption = &option{name: "databaseOptions", group: groupData, env: []string{"PARSE_SERVER_DATABASE_OPTIONS"},
	def:   `{"allowPublicExplain": false}`,
	usage: "allowPublicExplain: explain without the master key; other keys (MongoDB, pg settings) are ignored",
	field: func(o *Options) any { return &o.DatabaseOptions }}

// AllowPublicExplain is databaseOptions.allowPublicExplain (Parse Server
// 9's default: false).
func (o *Options) AllowPublicExplain() bool {
	b, _ := o.DatabaseOptions["allowPublicExplain"].(bool)
	return b
}

// IgnoredDatabaseOptions are the databaseOptions keys without meaning here.
func (o *Options) IgnoredDatabaseOptions() []string {
	var out []string
	for k := range o.DatabaseOptions {
		if k != "allowPublicExplain" {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// securityOption is security: enableCheck serves GET /security, the
// configuration's check report; enableCheckLog logs failed checks.
var securityOption = &option{name: "security", group: groupKeys, env: []string{"PARSE_SERVER_SECURITY"},
	usage: `{"enableCheck": true, "enableCheckLog": false}: GET /security reports weak settings`,
	field: func(o *Options) any { return &o.Security }}

// schemaOption is Parse Server's schema option (schema.go).
var schemaOption = &option{name: "schema", group: groupData, env: []string{"PARSE_SERVER_SCHEMA"},
	usage: `classes applied at start-up: {"definitions": [...], "lockSchemas": true, ...}`,
	field: func(o *Options) any { return &o.Schema }}

// TrustProxy is trustProxy, read as Express reads its "trust proxy": the
// zero value trusts no proxy.
type TrustProxy struct {
	All   bool     // true: every hop; the left-most X-Forwarded-For address is the client
	Hops  int      // a number: that many proxies in front of the server
	Addrs []string // proxies at these IPs or CIDR ranges, or loopback, linklocal, uniquelocal
}

// trustedRangeNames are the named ranges trustProxy accepts.
var trustedRangeNames = map[string]bool{"loopback": true, "linklocal": true, "uniquelocal": true}

// asTrustProxy accepts a boolean, a number of hops, a list of addresses
// (array or comma-separated) or their text.
func asTrustProxy(raw any) (TrustProxy, error) {
	switch v := raw.(type) {
	case bool:
		return TrustProxy{All: v}, nil
	case json.Number:
		n, err := strconv.Atoi(v.String())
		if err != nil || n < 0 {
			return TrustProxy{}, fmt.Errorf("want a number of hops, got %s", v)
		}
		return TrustProxy{Hops: n}, nil
	case string:
		// Parse Server reads the text as JSON first: "1" is one hop.
		switch s := strings.TrimSpace(v); s {
		case "true", "false":
			return TrustProxy{All: s == "true"}, nil
		default:
			if n, err := strconv.Atoi(s); err == nil && n >= 0 {
				return TrustProxy{Hops: n}, nil
			}
		}
	}
	list, err := asList(raw)
	if err != nil {
		return TrustProxy{}, fmt.Errorf("want true, a number of hops or a list of addresses: %w", err)
	}
	for _, a := range list {
		if trustedRangeNames[strings.ToLower(a)] {
			continue
		}
		if _, err := netip.ParseAddr(a); err == nil {
			continue
		}
		if _, err := netip.ParsePrefix(a); err == nil {
			continue
		}
		return TrustProxy{}, fmt.Errorf("%q is not an IP address, a CIDR range or loopback, linklocal, uniquelocal", a)
	}
	return TrustProxy{Addrs: list}, nil
}

// DefaultRequestKeywordDenylist is Parse Server's requestKeywordDenylist.
func DefaultRequestKeywordDenylist() []map[string]any {
	return []map[string]any{{"key": "_bsontype", "value": "Code"}, {"key": "constructor"}, {"key": "__proto__"}}
}

// checkDenylist refuses entries with neither key nor value, other keys,
// or a key or value pattern that is not a regular expression.
func checkDenylist(list []map[string]any) error {
	var errs []error
	for i, e := range list {
		_, hasKey := e["key"]
		_, hasValue := e["value"]
		if !hasKey && !hasValue {
			errs = append(errs, fmt.Errorf("entry %d: want a key, a value or both", i))
		}
		for k, v := range e {
			switch k {
			case "key":
				s, ok := v.(string)
				if !ok {
					errs = append(errs, fmt.Errorf("entry %d: key must be a string", i))
				} else if _, err := regexp.Compile(s); err != nil {
					errs = append(errs, fmt.Errorf("entry %d: key %q is not a regular expression", i, s))
				}
			case "value":
				if s, ok := v.(string); ok {
					if _, err := regexp.Compile(s); err != nil {
						errs = append(errs, fmt.Errorf("entry %d: value %q is not a regular expression", i, s))
					}
				}
			default:
				errs = append(errs, fmt.Errorf("entry %d: unknown key %q (want key and value)", i, k))
			}
		}
	}
	return errors.Join(errs...)
}

// optionsWithoutEffect are options Parse Server 9 takes that change nothing
// Quarry's clients can observe, accepted in silence with their values.
var optionsWithoutEffect = []*option{
	{name: "enableCollationCaseComparison", group: groupQuery, env: []string{"PARSE_SERVER_ENABLE_COLLATION_CASE_COMPARISON"},
		usage: "accepted either way: how MongoDB compares names case-insensitively; same results",
		field: func(o *Options) any { return &o.EnableCollationCaseComparison }},
	{name: "allowExpiredAuthDataToken", group: groupSession, env: []string{"PARSE_SERVER_ALLOW_EXPIRED_AUTH_DATA_TOKEN"},
		usage: "log in with authData equal to the stored one without asking the provider again",
		field: func(o *Options) any { return &o.AllowExpiredAuthDataToken }},
	{name: "encodeParseObjectInCloudFunction", group: groupLog, env: []string{"PARSE_SERVER_ENCODE_PARSE_OBJECT_IN_CLOUD_FUNCTION"},
		def:   "true (Parse Server 9 removed the option)",
		usage: "objects and pointers in cloud function params arrive as Parse.Object; false is refused",
		field: func(o *Options) any { return &o.EncodeParseObjectInCloudFunction }},
}

// ignoredBecause says why an option in unsupported is ignored; the ones
// not listed are not built yet.
var ignoredBecause = map[string]string{
	"cluster":                              "no meaning here: one Quarry process uses every core; several instances share PostgreSQL (docs/scaling.md)",
	"collectionPrefix":                     "no meaning here: a MongoDB setting",
	"databaseAdapter":                      "no meaning here: the store is chosen by databaseURI",
	"directAccess":                         "no meaning here: cloud code always calls the server directly",
	"cacheMaxSize":                         "no meaning here: Quarry keeps sessions, roles and schemas in memory itself (cacheAdapter shares them)",
	"cacheTTL":                             "no meaning here: Quarry keeps sessions, roles and schemas in memory itself (cacheAdapter shares them)",
	"enableSingleSchemaCache":              "no meaning here: there is one schema cache",
	"schemaCacheTTL":                       "no meaning here: schema changes reach every instance through the change log",
	"analyticsAdapter":                     "no meaning here: /events are stored by Quarry",
	"dashboardOptions":                     "no meaning here: Parse Dashboard's settings",
	"enableExpressErrorHandler":            "no meaning here: there is no Express",
	"middleware":                           "no meaning here: a JavaScript function for Express",
	"serverStartComplete":                  "no meaning here: a JavaScript callback",
	"serverCloseComplete":                  "no meaning here: a JavaScript callback",
	"loggerAdapter":                        "no meaning here: logs go to stderr (docs/operations.md)",
	"logsFolder":                           "no meaning here: logs go to stderr (docs/operations.md)",
	"maxLogFiles":                          "no meaning here: logs go to stderr (docs/operations.md)",
	"logLevels":                            "no meaning here: logLevel sets the level of every line",
	"startLiveQueryServer":                 "no meaning here: LiveQuery is served on the API's port, or by quarry livequery",
	"userSensitiveFields":                  "Parse Server removed it: use protectedFields",
	"nonMasterExplain":                     "an older Parse Server option: use databaseOptions.allowPublicExplain",
	"liveQuery.pubSubAdapter":              "no meaning here: LiveQuery scales out through liveQuery.redisURL or PostgreSQL",
	"liveQuery.wssAdapter":                 "no meaning here: Quarry serves WebSockets itself",
	"liveQuery.redisOptions":               "no meaning here: node-redis client settings; liveQuery.redisURL says where Redis is",
	"liveQueryServerOptions.pubSubAdapter": "no meaning here: LiveQuery scales out through liveQueryServerOptions.redisURL or PostgreSQL",
	"liveQueryServerOptions.redisOptions":  "no meaning here: node-redis client settings; liveQueryServerOptions.redisURL says where Redis is",
	"liveQueryServerOptions.wssAdapter":    "no meaning here: Quarry serves WebSockets itself",
	"push.adapterOptions":                  "no meaning here: options of a JavaScript push adapter; push.adapter and its own keys configure Quarry's (docs/push.md)",
	"push.android.apiKey":                  "the legacy FCM server key no longer works (Google shut that API down): give push.android.firebaseServiceAccount",
}

// whyIgnoredEnv is whyIgnored for a PARSE_SERVER_ variable of an ignored
// option.
func whyIgnoredEnv(env string) string {
	for _, n := range unsupported {
		if "PARSE_SERVER_"+envSuffix(n) == env {
			return whyIgnored(n)
		}
	}
	return "not supported yet"
}

func whyIgnored(name string) string {
	if why, ok := ignoredBecause[name]; ok {
		return why
	}
	return "not supported yet"
}
