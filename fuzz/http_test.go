package fuzz

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand"
	"net/url"
	"strings"
	"testing"

	"github.com/quarrydata/quarry/server/servertest"
)

// httpRoute is one route the HTTP fuzzer aims at. Query routes take the
// input as query parameters; the others as the raw request body.
type httpRoute struct {
	method, path string
	query        bool
}

// httpRoutes cover every endpoint family; {id}, {uid}, {aud} and {role}
// are replaced by objects made before fuzzing.
var httpRoutes = []httpRoute{
	{"POST", "/classes/Fuzz", false},
	{"PUT", "/classes/Fuzz/{id}", false},
	{"GET", "/classes/Fuzz", true},
	{"GET", "/classes/Fuzz/{id}", true},
	{"DELETE", "/classes/Fuzz/{id}", false},
	{"POST", "/users", false},
	{"GET", "/users", true},
	{"PUT", "/users/{uid}", false},
	{"GET", "/users/me", true},
	{"POST", "/login", false},
	{"GET", "/login", true},
	{"POST", "/logout", false},
	{"POST", "/verifyPassword", false},
	{"GET", "/sessions", true},
	{"POST", "/sessions", false},
	{"PUT", "/sessions/me", false},
	{"POST", "/roles", false},
	{"GET", "/roles", true},
	{"PUT", "/roles/{role}", false},
	{"GET", "/schemas", true},
	{"POST", "/schemas/Fuzz", false},
	{"PUT", "/schemas/Fuzz", false},
	{"POST", "/schemas", false},
	{"POST", "/batch", false},
	{"GET", "/config", true},
	{"PUT", "/config", false},
	{"POST", "/installations", false},
	{"GET", "/installations", true},
	{"GET", "/aggregate/Fuzz", true},
	{"POST", "/functions/hello", false},
	{"GET", "/push_audiences", true},
	{"POST", "/push_audiences", false},
	{"PUT", "/push_audiences/{aud}", false},
	{"POST", "/events/AppOpened", false},
	{"GET", "/serverInfo", true},
}

// queryParams are the parameter names a query route's input is sent as.
var queryParams = []string{"where", "order", "limit", "skip", "count", "keys", "include", "excludeKeys",
	"pipeline", "distinct", "group", "match", "explain", "redirectClassNameForKey", "username", "password"}

// httpTarget is a running server with the objects the routes name.
type httpTarget struct {
	srv                  *servertest.Server
	id, uid, aud, role   string
	token                string
	replace              *strings.Replacer
	master, app, session map[string]string
}

func startHTTPTarget(tb testing.TB) *httpTarget {
	tb.Helper()
	h := &httpTarget{srv: servertest.Start(tb, nil), master: servertest.Master(), app: servertest.App()}
	mk := func(path string, body any, headers map[string]string) map[string]any {
		res := h.srv.Do(tb, "POST", path, body, headers)
		if res.Status >= 300 {
			tb.Fatalf("POST %s: %d %s", path, res.Status, res.Body)
		}
		return res.Map()
	}
	h.id, _ = mk("/classes/Fuzz", map[string]any{"n": 1, "s": "x", "arr": []any{1}}, h.master)["objectId"].(string)
	u := mk("/users", map[string]any{"username": "fuzzer", "password": "secret"}, h.app)
	h.uid, _ = u["objectId"].(string)
	h.token, _ = u["sessionToken"].(string)
	h.aud, _ = mk("/push_audiences", map[string]any{"name": "all", "query": `{"deviceType":"ios"}`}, h.master)["objectId"].(string)
	h.role, _ = mk("/roles", map[string]any{"name": "Fuzzers", "ACL": map[string]any{"*": map[string]any{"read": true}}}, h.master)["objectId"].(string)
	h.session = servertest.App()
	h.session["X-Parse-Session-Token"] = h.token
	h.replace = strings.NewReplacer("{id}", h.id, "{uid}", h.uid, "{aud}", h.aud, "{role}", h.role)
	return h
}

// encodeQuery turns input into query parameters: "k=v&..." pieces, each
// escaped; a piece without "=" is the value of the parameter pick names.
func encodeQuery(input []byte, pick uint8) string {
	var parts []string
	for _, piece := range strings.Split(string(input), "&") {
		k, v, ok := strings.Cut(piece, "=")
		if !ok {
			k, v = queryParams[int(pick)%len(queryParams)], piece
		}
		parts = append(parts, url.QueryEscape(k)+"="+url.QueryEscape(v))
	}
	return strings.Join(parts, "&")
}

// checkReply holds a reply to the rules every route keeps: no 5xx but
// 503, JSON bodies, and errors as {code, error}.
func checkReply(t *testing.T, what string, status int, body []byte) {
	t.Helper()
	if status >= 500 && status != 503 {
		t.Fatalf("%s: HTTP %d %s", what, status, body)
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("%s: HTTP %d with a body that is not JSON: %q", what, status, body)
	}
	if status < 400 {
		return
	}
	e, _ := v.(map[string]any)
	msg, ok := e["error"].(string)
	if !ok {
		t.Fatalf("%s: HTTP %d without an error message: %s", what, status, body)
	}
	// Parse's one error without a code: 403 {"error":"unauthorized..."}.
	if _, ok := e["code"].(float64); !ok && !(status == 403 && strings.HasPrefix(msg, "unauthorized")) {
		t.Fatalf("%s: HTTP %d without a numeric code: %s", what, status, body)
	}
}

// FuzzHTTPRoutes sends the input to the route it picks, as the body or
// as query parameters, with the credentials it picks; the reply keeps the
// rules of checkReply and the server stays healthy.
func FuzzHTTPRoutes(f *testing.F) {
	seeds := []struct {
		route string
		body  string
	}{
		{"POST /classes/Fuzz", `{"n":2,"loc":{"__type":"GeoPoint","latitude":1,"longitude":2}}`},
		{"PUT /classes/Fuzz/{id}", `{"n":{"__op":"Increment","amount":1},"arr":{"__op":"AddUnique","objects":[3]}}`},
		{"GET /classes/Fuzz", `{"n":{"$gt":0},"s":{"$regex":"^x","$options":"i"}}`},
		{"GET /classes/Fuzz", `where={"$or":[{"n":1},{"s":"x"}]}&order=-n&limit=2&count=1`},
		{"POST /users", `{"username":"u2","password":"p","email":"u2@example.com"}`},
		{"POST /login", `{"username":"fuzzer","password":"secret"}`},
		{"GET /login", `username=fuzzer&password=secret`},
		{"POST /roles", `{"name":"R2","ACL":{"*":{"read":true}},"users":{"__op":"AddRelation","objects":[]}}`},
		{"POST /schemas/Fuzz", `{"className":"Fuzz","fields":{"t":{"type":"String"}}}`},
		{"PUT /schemas/Fuzz", `{"fields":{"t":{"__op":"Delete"}},"classLevelPermissions":{"find":{"*":true}}}`},
		{"POST /batch", `{"requests":[{"method":"POST","path":"/parse/classes/Fuzz","body":{"n":3}}]}`},
		{"PUT /config", `{"params":{"a":1},"masterKeyOnly":{"a":true}}`},
		{"POST /installations", `{"deviceType":"ios","installationId":"abc","deviceToken":"t"}`},
		{"GET /aggregate/Fuzz", `pipeline=[{"$group":{"_id":"$s","total":{"$sum":"$n"}}}]`},
		{"GET /aggregate/Fuzz", `distinct=s&where={"n":1}`},
		{"POST /functions/hello", `{"a":1}`},
		{"POST /push_audiences", `{"name":"x","query":"{\"deviceType\":\"android\"}"}`},
		{"POST /classes/Fuzz", `{"a":` + strings.Repeat("[", 200)},
		{"POST /batch", `{"requests":"x"}`},
	}
	for _, s := range seeds {
		for i, r := range httpRoutes {
			if r.method+" "+r.path == s.route {
				f.Add(uint8(i), uint8(0), []byte(s.body))
			}
		}
	}
	for i := range httpRoutes {
		f.Add(uint8(i), uint8(0x80), []byte("structured"))
	}
	h := startHTTPTarget(f)
	f.Fuzz(h.exercise)
}

// TestHTTPRoutesStructured sends random bodies of Parse words to every
// route with every kind of caller: the fuzz target's checks, as a test.
func TestHTTPRoutesStructured(t *testing.T) {
	h := startHTTPTarget(t)
	for i := 0; i < 8*len(httpRoutes); i++ {
		h.exercise(t, uint8(i), uint8(0x80|i/len(httpRoutes)), []byte(fmt.Sprint(i)))
	}
}

// exercise is one fuzz execution: input goes to the route it picks.
func (h *httpTarget) exercise(t *testing.T, route, who uint8, input []byte) {
	r := httpRoutes[int(route)%len(httpRoutes)]
	path := h.replace.Replace(r.path)
	headers := []map[string]string{h.master, h.app, h.session, nil}[who%4]
	if who&0x80 != 0 {
		// Structured mode: the input seeds a random body of Parse words.
		sum := fnv.New64a()
		sum.Write(input)
		input, _ = json.Marshal(randomParseValue(rand.New(rand.NewSource(int64(sum.Sum64()))), 0))
	}
	var body any
	if r.query {
		path += "?" + encodeQuery(input, who/4)
	} else {
		body = input
	}
	res := h.srv.Do(t, r.method, path, body, headers)
	checkReply(t, r.method+" "+path+" "+string(input), res.Status, res.Body)
	if health := h.srv.Do(t, "GET", "/health", nil, nil); health.Status != 200 {
		t.Fatalf("after %s %s %q: /health answers %d %s", r.method, path, input, health.Status, health.Body)
	}
}

// parseWords are keys and strings a Parse request is made of.
var parseWords = []string{"username", "password", "email", "name", "ACL", "fields", "className", "requests",
	"params", "where", "pipeline", "__op", "objects", "amount", "__type", "iso", "latitude", "longitude",
	"objectId", "method", "path", "body", "classLevelPermissions", "deviceType", "installationId", "query",
	"users", "roles", "sessionToken", "authData", "type", "targetClass", "$gt", "$in", "$regex", "$or",
	"$group", "$match", "_id", "*", "read", "Increment", "AddRelation", "Delete", "Pointer", "Date",
	"GeoPoint", "Relation", "/parse/classes/Fuzz", "POST", "PUT", "String", "Number", "n", "s", "Fuzz"}

// randomParseValue is a random JSON value over parseWords; objects are
// the most likely, as request bodies are.
func randomParseValue(r *rand.Rand, depth int) any {
	word := func() string { return parseWords[r.Intn(len(parseWords))] }
	switch k := r.Intn(10); {
	case depth > 3 || k == 0:
		return word()
	case k == 1:
		return []any{-1.0, 0.0, 1.0, 2.5, 1e21, 91.0}[r.Intn(6)]
	case k == 2:
		return []any{true, false, nil}[r.Intn(3)]
	case k == 3:
		var a []any
		for i := r.Intn(4); i > 0; i-- {
			a = append(a, randomParseValue(r, depth+1))
		}
		return a
	}
	m := map[string]any{}
	for i := 1 + r.Intn(4); i > 0; i-- {
		m[word()] = randomParseValue(r, depth+1)
	}
	return m
}
