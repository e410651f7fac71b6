package transport

import (
	"bytes"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"strings"
	"unicode/utf8"

	gojson "github.com/goccy/go-json"
	"github.com/valyala/fasthttp"

	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
)

// call is one API request after the envelope is unwrapped: who calls, the
// JSON body (credentials removed) and the URL parameters. Batch items are
// calls too, so endpoints never touch fasthttp directly.
type call struct {
	auth   service.Auth
	body   map[string]any
	query  map[string]any // URL query parameters, each JSON-decoded when possible
	params pathParams
	base   string // scheme://host + mount path, for Location headers
	// raw is the request as sent, for endpoints whose meaning depends on
	// the order of JSON keys or URL parameters (aggregate stages, $sort);
	// empty for batch items.
	raw rawRequest
	// readAfterWrites is the X-Quarry-Read-After-Writes header: a query
	// waits until this instance holds every commit made before it.
	readAfterWrites bool

	status   int
	location string
	headers  [][2]string // extra response headers (name, value)
	// The query's plan and the objects it examined, for the request log
	// and metrics; set by findReply.
	plan     string
	examined int
	// found is a find's or get's result: the reply's objects, and the
	// plan the slow-query line describes.
	found service.FindResult
	// claimed is the request id claimed for idempotency, given back if
	// the request fails.
	claimed string
	// ip is the client's address (rate limits count by it); set only
	// when rate limits are on.
	ip string
	// path is the request's path as routed (a trailing slash trimmed),
	// kept for the log line; empty for batch items.
	path string
	// routed is the request's route, nil until routed: its first segment
	// is the family metrics and the log line name (Server.family).
	routed *route
}

// rawRequest is a request's body and URL parameters in the order sent.
type rawRequest struct {
	body  []byte      // valid while the request is served
	query [][2]string // name, value
}

// param reads a query parameter, from the URL or (JS SDK style) the body.
func (c *call) param(name string) (any, bool) {
	if v, ok := c.query[name]; ok {
		return v, true
	}
	v, ok := c.body[name]
	return v, ok
}

// errUnauthorized is the 403 without a code that Parse answers for a bad
// application id or key.
type errUnauthorized struct{ msg string }

func (e errUnauthorized) Error() string { return e.msg }

var unauthorized = errUnauthorized{"unauthorized"}

// errHTTP is a refusal carrying its own HTTP status and no Parse code, as
// Parse Server answers body-parser failures.
type errHTTP struct {
	status int
	msg    string
}

func (e errHTTP) Error() string { return e.msg }

// errTooLarge refuses a body over maxUploadSize, in the shape fasthttp's
// own (slightly larger) limit answers.
var errTooLarge = errHTTP{fasthttp.StatusRequestEntityTooLarge, "request entity too large"}

// bodyCredentialKeys are the JS SDK's envelope fields; they are removed
// from the body before any endpoint sees it.
var bodyCredentialKeys = []string{"_method", "_ApplicationId", "_JavaScriptKey", "_ClientKey", "_MasterKey",
	"_SessionToken", "_InstallationId", "_ClientVersion", "_RevocableSession", "_ContentType", "_context", "_noBody"}

// header reads X-Parse-<name>, falling back to the specification's X-Svc-<name>.
func header(ctx *fasthttp.RequestCtx, name string) string {
	return string(headerBytes(ctx, name))
}

// headerBytes is header without the copy: valid while the request is served.
func headerBytes(ctx *fasthttp.RequestCtx, name string) []byte {
	if v := ctx.Request.Header.Peek("X-Parse-" + name); len(v) > 0 {
		return v
	}
	return ctx.Request.Header.Peek("X-Svc-" + name)
}

// decodeBody parses a request body as JSON whatever its content type, with
// the UTF-8, depth and number checks that keep bad input from reaching the
// service.
func (s *Server) decodeBody(raw []byte) (map[string]any, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return map[string]any{}, nil
	}
	if !utf8.Valid(raw) {
		return nil, schema.Errorf(schema.CodeInvalidJSON, "Invalid JSON: body is not valid UTF-8")
	}
	if d := jsonDepth(raw); d > s.opts.MaxJSONDepth {
		return nil, schema.Errorf(schema.CodeInvalidJSON, "Invalid JSON: nested deeper than %d levels", s.opts.MaxJSONDepth)
	}
	var v any
	// goccy/go-json: the same values as encoding/json (the UTF-8 and depth
	// checks above run first either way), a third of the allocations
	// (transport/decode_bench_test.go).
	if err := gojson.Unmarshal(raw, &v); err != nil {
		return nil, schema.Errorf(schema.CodeInvalidJSON, "Invalid JSON")
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, schema.Errorf(schema.CodeInvalidJSON, "Invalid JSON: the body must be an object")
	}
	return m, nil
}

// jsonDepth measures the deepest nesting of arrays and objects without
// decoding, so a hostile body cannot exhaust the decoder's stack.
func jsonDepth(b []byte) int {
	depth, maxDepth := 0, 0
	inString, escaped := false, false
	for _, c := range b {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
			if depth > maxDepth {
				maxDepth = depth
			}
		case '}', ']':
			depth--
		}
	}
	return maxDepth
}

// envelope unwraps a request into a call: body, method override,
// credentials, and the key checks.
func (s *Server) envelope(ctx *fasthttp.RequestCtx) (*call, error) {
	hdr := readRequestHeaders(&ctx.Request.Header)
	return s.unwrap(ctx, &hdr)
}

// clientKeys are the client keys a request sent (headers, body or basic
// auth).
type clientKeys struct {
	client, javascript, rest, dotnet string
}

// unwrap is envelope over the request's headers, already read.
func (s *Server) unwrap(ctx *fasthttp.RequestCtx, hdr *requestHeaders) (*call, error) {
	// query stays nil without URL parameters (it is only read then).
	c := &call{status: fasthttp.StatusOK, readAfterWrites: hdr.wantsReadAfterWrites()}
	if len(ctx.PostBody()) > s.opts.MaxBodyBytes {
		return nil, errTooLarge
	}
	body, err := s.decodeBody(ctx.PostBody())
	bodyIsJSON := err == nil
	if err != nil {
		body = map[string]any{}
	}
	if m, ok := body["_method"].(string); ok && ctx.IsPost() {
		ctx.Request.Header.SetMethod(strings.ToUpper(m))
	}
	c.raw.body = bytes.TrimSpace(ctx.PostBody())
	ctx.QueryArgs().VisitAll(func(k, v []byte) {
		if c.query == nil {
			c.query = map[string]any{}
		}
		c.raw.query = append(c.raw.query, [2]string{string(k), string(v)})
		var decoded any
		if gojson.Unmarshal(v, &decoded) == nil {
			c.query[string(k)] = decoded
		} else {
			c.query[string(k)] = string(v)
		}
	})

	// Compared as bytes: the usual request's keys cost no copy.
	appIDSent := hdr.get(hdrApplicationID)
	master := hdr.get(hdrMasterKey)
	keys := clientKeys{
		client: hdr.str(hdrClientKey), javascript: hdr.str(hdrJavaScriptKey),
		rest: hdr.str(hdrRESTAPIKey), dotnet: hdr.str(hdrWindowsKey),
	}
	c.auth.SessionToken = hdr.str(hdrSessionToken)
	c.auth.InstallationID = hdr.str(hdrInstallationID)

	if string(appIDSent) != s.opts.AppID {
		// JS SDK style: credentials travel in the body.
		bodyApp, _ := body["_ApplicationId"].(string)
		if bodyApp == "" || bodyApp != s.opts.AppID {
			if u, p, ok := basicAuth(hdr.authorization); ok && u == s.opts.AppID {
				if js, isJS := strings.CutPrefix(p, "javascript-key="); isJS {
					keys.javascript = js
				} else {
					master = []byte(p)
				}
			} else {
				return nil, unauthorized
			}
		} else {
			if len(master) > 0 && !equalKey(master, s.opts.MasterKey) {
				return nil, unauthorized
			}
			keys.javascript, _ = body["_JavaScriptKey"].(string)
			keys.client, _ = body["_ClientKey"].(string)
			if m, ok := body["_MasterKey"].(string); ok {
				master = []byte(m)
			}
			if t, ok := body["_SessionToken"]; ok && t != nil {
				c.auth.SessionToken = toString(t)
			}
			if i, ok := body["_InstallationId"].(string); ok {
				c.auth.InstallationID = i
			}
		}
	} else if u, p, ok := basicAuth(hdr.authorization); ok && u == s.opts.AppID {
		if js, isJS := strings.CutPrefix(p, "javascript-key="); isJS {
			keys.javascript = js
		} else {
			master = []byte(p)
		}
	}
	if ctxVal, ok := body["_context"]; ok {
		if err := checkContext(ctxVal); err != nil {
			return nil, err
		}
	}
	cloudContext := hdr.get(hdrCloudContext)
	if len(cloudContext) > 0 {
		if err := checkContext(string(cloudContext)); err != nil {
			return nil, err
		}
	}
	// For cloud code (functions.go).
	c.auth.Request = s.requestInfo(ctx, body, cloudContext, s.opts.CloudCode || s.webhooks.HasWebhooks())
	if len(body) > 0 {
		for _, k := range bodyCredentialKeys {
			delete(body, k)
		}
	}
	if s.maintenance(ctx, c, hdr) {
		// Parse's maintenance scope: no other key, no session.
		c.auth.SessionToken = ""
	} else if err := s.checkKeys(ctx, c, master, &keys); err != nil {
		return nil, err
	}
	if !bodyIsJSON {
		// Any method: a DELETE whose body is garbage must not delete.
		return nil, err
	}
	c.body = body
	return c, nil
}

func checkContext(v any) error {
	switch x := v.(type) {
	case map[string]any:
		return nil
	case string:
		var m map[string]any
		if json.Unmarshal([]byte(x), &m) == nil && m != nil {
			return nil
		}
	}
	return schema.Errorf(schema.CodeInvalidJSON, "Invalid object for context.")
}

func (s *Server) checkKeys(ctx *fasthttp.RequestCtx, c *call, master []byte, keys *clientKeys) error {
	if len(master) > 0 {
		switch {
		case equalKey(master, s.opts.MasterKey):
			if !s.masterAllowed(ctx) {
				return unauthorized
			}
			c.auth.Master = true
			return nil
		case s.opts.ReadOnlyMasterKey != "" && equalKey(master, s.opts.ReadOnlyMasterKey):
			if !s.masterAllowed(ctx) {
				return unauthorized
			}
			c.auth.Master, c.auth.ReadOnly = true, true
			return nil
		}
		// A wrong master key is no key at all; the client keys decide.
	}
	configured := [...]struct{ sent, want string }{
		{keys.client, s.opts.ClientKey}, {keys.javascript, s.opts.JavaScriptKey},
		{keys.rest, s.opts.RESTAPIKey}, {keys.dotnet, s.opts.DotNetKey},
	}
	anyConfigured := false
	for _, k := range configured {
		if k.want == "" {
			continue
		}
		anyConfigured = true
		if equalKey(k.sent, k.want) {
			return nil
		}
	}
	if anyConfigured {
		return unauthorized
	}
	return nil
}

// maintenance reports whether the request carries the maintenance key
// from an address maintenanceKeyIps allows, and then marks its caller. A
// key from another address is logged and counts as no key, as in Parse
// Server: the other credentials decide.
func (s *Server) maintenance(ctx *fasthttp.RequestCtx, c *call, hdr *requestHeaders) bool {
	key := hdr.get(hdrMaintenanceKey)
	if len(key) == 0 || !equalKey(key, s.opts.MaintenanceKey) {
		return false
	}
	if len(s.maintenanceIP) == 0 || !addrIn(s.clientIP(ctx), s.maintenanceIP) {
		s.maintenanceRefused.Log("ip", s.clientIP(ctx))
		return false
	}
	c.auth.Maintenance = true
	return true
}

// equalKey compares secrets in constant time.
func equalKey[T string | []byte](got T, want string) bool {
	return want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// basicAuth reads the user and password of an Authorization header.
func basicAuth(header []byte) (user, pass string, ok bool) {
	if len(header) == 0 {
		return "", "", false
	}
	scheme, rest, found := strings.Cut(string(header), " ")
	if !found || !strings.EqualFold(scheme, "basic") {
		return "", "", false
	}
	dec, err := base64.StdEncoding.DecodeString(strings.TrimSpace(rest))
	if err != nil {
		return "", "", false
	}
	parts := strings.Split(string(dec), ":")
	if len(parts) != 2 {
		return "", "", false
	}
	return parts[0], parts[1], true
}

func toString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case nil:
		return ""
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// errMasterRequired is Parse's 403 for master-key-only routes.
var errMasterRequired = errUnauthorized{"unauthorized: master key is required"}

// requireMaster refuses callers without the master key (a read-only master
// key passes; writes it attempts fail in the service with 119).
func requireMaster(c *call) error {
	if !c.auth.Master {
		return errMasterRequired
	}
	return nil
}
