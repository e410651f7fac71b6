package transport_test

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/quarrydata/quarry/auth"
	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server/servertest"
)

// The options on who a request comes from and what it may carry:
// maintenanceKey and maintenanceKeyIps, trustProxy, requestKeywordDenylist.

// TestScenarioMaintenanceKey: the maintenance key writes past CLPs and
// ACLs, reads as the public but sees Parse's internal account fields, is
// refused master-key-only routes, and counts as no key from an address
// maintenanceKeyIps does not list.
func TestScenarioMaintenanceKey(t *testing.T) {
	srv := servertest.Start(t, func(o *config.Options) {
		o.MaintenanceKey = "maint-key"
		o.Accounts.AccountLockout = config.AccountLockout{Duration: 1, Threshold: 5}
	})
	app := servertest.App()
	maint := with(app, "X-Parse-Maintenance-Key", "maint-key")
	srv.Do(t, "POST", "/schemas/Locked", map[string]any{"className": "Locked",
		"classLevelPermissions": map[string]any{"find": map[string]any{"*": true}, "get": map[string]any{"*": true},
			"create": map[string]any{}, "update": map[string]any{}, "delete": map[string]any{}}}, servertest.Master())
	hidden := mustCreate(t, srv, "Locked", map[string]any{"n": 1, "ACL": map[string]any{}})
	userID, _ := signUp(t, srv, "ivy", "ivy@example.com")
	srv.Do(t, "POST", "/login", loginBody("ivy", "wrong"), app) // _failed_login_count: 1

	runScenarios(t, srv, []scenario{
		{name: "public create refused by the CLP", method: "POST", path: "/classes/Locked", headers: app,
			body: map[string]any{"n": 2}, expectedStatus: 400, check: codeIs(119)},
		{name: "maintenance create passes the CLP", method: "POST", path: "/classes/Locked", headers: maint,
			body: map[string]any{"n": 2}, expectedStatus: 201},
		{name: "maintenance update passes an empty ACL", method: "PUT", path: "/classes/Locked/" + hidden, headers: maint,
			body: map[string]any{"n": 3}, expectedStatus: 200},
		{name: "maintenance reads as the public", method: "GET", path: "/classes/Locked/" + hidden, headers: maint,
			expectedStatus: 404, check: codeIs(101)},
		{name: "maintenance sees internal account fields, not the hash", method: "GET", path: "/users/" + userID, headers: maint,
			expectedStatus: 200, expectedContains: []string{`"_failed_login_count":1`, `"email":"ivy@example.com"`},
			notExpectedContains: []string{"_hashed_password", "_username_lc", `"password":`}},
		{name: "the master key does not", method: "GET", path: "/users/" + userID, headers: servertest.Master(),
			expectedStatus: 200, notExpectedContains: []string{"_failed_login_count"}},
		{name: "schemas stay master-only", method: "GET", path: "/schemas", headers: maint, expectedStatus: 403},
		{name: "config writes stay master-only", method: "PUT", path: "/config", headers: maint,
			body: map[string]any{"params": map[string]any{"a": 1}}, expectedStatus: 403},
		{name: "a wrong maintenance key is no key", method: "POST", path: "/classes/Locked",
			headers: with(app, "X-Parse-Maintenance-Key", "guess"), body: map[string]any{"n": 4}, expectedStatus: 400, check: codeIs(119)},
	})
	// Check the locked object's update went through.
	if got := mustGet(t, srv, "Locked", hidden); got["n"] != float64(3) {
		t.Errorf("after the maintenance update n = %v, want 3", got["n"])
	}

	elsewhere := servertest.Start(t, func(o *config.Options) {
		o.MaintenanceKey = "maint-key"
		o.MaintenanceKeyIPs = []string{"10.0.0.0/8"}
	})
	elsewhere.Do(t, "POST", "/schemas/Locked", map[string]any{"className": "Locked",
		"classLevelPermissions": map[string]any{"create": map[string]any{}}}, servertest.Master())
	runScenarios(t, elsewhere, []scenario{
		{name: "from an address outside maintenanceKeyIps the key is ignored", method: "POST", path: "/classes/Locked",
			headers: maint, body: map[string]any{"n": 1}, expectedStatus: 400, check: codeIs(119)},
	})
}

// TestScenarioTrustProxy: with trustProxy, masterKeyIps, maintenanceKeyIps
// and rate limits see the client X-Forwarded-For names, as Express picks
// it; without it they see the connection's address.
func TestScenarioTrustProxy(t *testing.T) {
	master := func(xff string) map[string]string {
		h := servertest.Master()
		if xff != "" {
			h["X-Forwarded-For"] = xff
		}
		return h
	}
	cases := []struct {
		name   string
		trust  config.TrustProxy
		xff    string
		status int
	}{
		{"untrusted: the peer counts", config.TrustProxy{}, "10.1.2.3", 403},
		{"true: the left-most address", config.TrustProxy{All: true}, "10.1.2.3, 192.168.0.9", 200},
		{"true: a forged left-most address is believed", config.TrustProxy{All: true}, "10.1.2.3, 10.9.9.9", 200},
		{"one hop: the right-most address", config.TrustProxy{Hops: 1}, "10.9.9.9, 10.1.2.3", 200},
		{"one hop: not the one before", config.TrustProxy{Hops: 1}, "10.1.2.3, 10.9.9.9", 403},
		{"two hops", config.TrustProxy{Hops: 2}, "10.1.2.3, 10.9.9.9", 200},
		{"loopback and a CIDR trusted", config.TrustProxy{Addrs: []string{"loopback", "192.168.0.0/16"}}, "10.1.2.3, 192.168.4.4", 200},
		{"an untrusted hop stops the walk", config.TrustProxy{Addrs: []string{"loopback"}}, "10.1.2.3, 10.9.9.9", 403},
		{"the peer not trusted: header ignored", config.TrustProxy{Addrs: []string{"192.168.0.0/16"}}, "10.1.2.3", 403},
		{"no header: the peer", config.TrustProxy{All: true}, "", 403},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := servertest.Start(t, func(o *config.Options) {
				o.MasterKeyIPs = []string{"10.1.2.0/24"}
				o.TrustProxy = c.trust
			})
			sc := scenario{name: c.name, method: "GET", path: "/schemas", headers: master(c.xff), expectedStatus: c.status}
			sc.run(t, srv)
		})
	}

	t.Run("rate limits count per forwarded client", func(t *testing.T) {
		srv := servertest.Start(t, func(o *config.Options) {
			o.TrustProxy = config.TrustProxy{Addrs: []string{"loopback"}}
			o.RateLimit = []config.RateLimitOptions{{RequestPath: "/classes/*", RequestTimeWindow: 3600_000, RequestCount: 1}}
		})
		from := func(ip string) map[string]string { return with(servertest.App(), "X-Forwarded-For", ip) }
		runScenarios(t, srv, []scenario{
			{name: "first client", method: "GET", path: "/classes/Thing", headers: from("10.0.0.1"), expectedStatus: 200},
			{name: "first client again", method: "GET", path: "/classes/Thing", headers: from("10.0.0.1"), expectedStatus: 429},
			{name: "second client", method: "GET", path: "/classes/Thing", headers: from("10.0.0.2"), expectedStatus: 200},
		})
	})
}

// TestTrustProxyGraphQL: GraphQL's rate limits count the forwarded client
// too (the rule covers REST and GraphQL log-ins alike).
func TestTrustProxyGraphQL(t *testing.T) {
	srv := servertest.Start(t, func(o *config.Options) {
		o.MountGraphQL = true
		o.TrustProxy = config.TrustProxy{Addrs: []string{"loopback"}}
		o.RateLimit = []config.RateLimitOptions{{RequestPath: "/login", RequestTimeWindow: 3600_000, RequestCount: 1, ErrorResponseMessage: "slow down"}}
	})
	from := func(ip string) map[string]string { return with(servertest.App(), "X-Forwarded-For", ip) }
	const logIn = `{"query":"mutation { logIn(input: {username: \"u\", password: \"p\"}) { viewer { sessionToken } } }"}`
	for i, c := range []struct {
		ip      string
		limited bool
	}{{"10.0.0.1", false}, {"10.0.0.1", true}, {"10.0.0.2", false}} {
		res := doRoot(t, srv, "POST", "/graphql", logIn, from(c.ip))
		if got := strings.Contains(string(res.Body), "slow down"); got != c.limited {
			t.Errorf("request %d from %s: limited %v, want %v: %s", i, c.ip, got, c.limited, res.Body)
		}
	}
}

// TestScenarioRequestKeywordDenylist: Parse's default list, a list of the
// operator's own (keys and values as regular expressions, at any depth),
// and an empty list.
func TestScenarioRequestKeywordDenylist(t *testing.T) {
	denied := func(entry string) func(testing.TB, servertest.Response) {
		return msgIs(105, "Prohibited keyword in request data: "+entry+".")
	}
	post := func(name string, body map[string]any, status int, check func(testing.TB, servertest.Response)) scenario {
		return scenario{name: name, method: "POST", path: "/classes/Doc", headers: servertest.Master(), body: body,
			expectedStatus: status, check: check}
	}
	nested := func(k string, v any) map[string]any { return map[string]any{"o": map[string]any{k: v}} }
	cases := []struct {
		name  string
		list  []map[string]any
		table []scenario
	}{
		{"default", nil, []scenario{
			post("constructor nested", nested("constructor", 1), 400, denied(`{"key":"constructor"}`)),
			post("__proto__ in an array", map[string]any{"a": []any{map[string]any{"__proto__": map[string]any{}}}}, 400,
				denied(`{"key":"__proto__"}`)),
			post("_bsontype Code", nested("_bsontype", "Code"), 400, denied(`{"key":"_bsontype","value":"Code"}`)),
			post("_bsontype other", nested("_bsontype", "Other"), 201, nil),
		}},
		{"own list", []map[string]any{{"key": "^secret"}, {"value": "DROP +TABLE"}}, []scenario{
			post("key pattern", nested("secretive", 1), 400, denied(`{"key":"^secret"}`)),
			post("key pattern unanchored at the end", nested("notsecret", 1), 201, nil),
			post("value pattern deep in an array", map[string]any{"a": []any{"ok", "x; DROP  TABLE y"}}, 400,
				denied(`{"value":"DROP +TABLE"}`)),
			post("constructor no longer denied", nested("constructor", 1), 201, nil),
		}},
		{"empty list", []map[string]any{}, []scenario{
			post("constructor allowed", nested("constructor", 1), 201, nil),
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := servertest.Start(t, func(o *config.Options) {
				if c.list != nil {
					o.RequestKeywordDenylist = c.list
				}
			})
			runScenarios(t, srv, c.table)
			if c.list == nil {
				// Updates are scanned too.
				id := mustCreate(t, srv, "Doc", map[string]any{"n": 1})
				res := srv.Do(t, "PUT", "/classes/Doc/"+id, nested("constructor", 1), servertest.App())
				if res.Status != 400 || !strings.Contains(string(res.Body), `"code":105`) {
					t.Errorf("update with a denied key: %d %s", res.Status, res.Body)
				}
				// So are file metadata and tags.
				file := map[string]any{"base64": base64.StdEncoding.EncodeToString([]byte("x")), "_ApplicationId": servertest.AppID,
					"_MasterKey": servertest.MasterKey, "fileData": map[string]any{"metadata": map[string]any{"__proto__": "x"}}}
				res = srv.Do(t, "POST", "/files/m.txt", file, nil)
				if res.Status != 400 || !strings.Contains(string(res.Body), `Prohibited keyword in request data: {\"key\":\"__proto__\"}.`) {
					t.Errorf("file metadata with a denied key: %d %s", res.Status, res.Body)
				}
			}
		})
	}
}

// TestScenarioAllowExpiredAuthDataToken: a log-in with exactly the
// authData a user has stored asks the provider again by default (its
// token may have expired: refused), and not with allowExpiredAuthDataToken.
func TestScenarioAllowExpiredAuthDataToken(t *testing.T) {
	for _, allow := range []bool{false, true} {
		srv := servertest.Start(t, func(o *config.Options) {
			o.Auth.Providers = map[string]any{"acme": map[string]any{"word": "swordfish"}}
			o.Auth.Adapters = map[string]auth.Adapter{"acme": acmeAdapter{}}
			o.AllowExpiredAuthDataToken = allow
		})
		// acme keeps {"id"} only: a log-in with it alone carries no word.
		stored := authBody("acme", map[string]any{"id": "a-7"})
		again := scenario{name: "stored authData again", method: "POST", path: "/users", headers: servertest.App(), body: stored,
			expectedStatus: 400, check: msgIs(251, "acme says no.")}
		if allow {
			again.expectedStatus, again.check = 200, nil
			again.expectedContains = []string{`"sessionToken":"r:`}
		}
		runScenarios(t, srv, []scenario{
			{name: "sign up", method: "POST", path: "/users", headers: servertest.App(),
				body: authBody("acme", map[string]any{"id": "a-7", "word": "swordfish"}), expectedStatus: 201},
			again,
			{name: "changed authData is checked either way", method: "POST", path: "/users", headers: servertest.App(),
				body: authBody("acme", map[string]any{"id": "a-7", "word": "trout"}), expectedStatus: 400, check: codeIs(251)},
		})
	}
}
