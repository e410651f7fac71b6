package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"regexp"
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
		s := strings.TrimSpace(v)
		if b, err := strconv.ParseBool(s); err == nil {
			return TrustProxy{All: b}, nil
		}
		if n, err := strconv.Atoi(s); err == nil && n >= 0 {
			return TrustProxy{Hops: n}, nil
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
