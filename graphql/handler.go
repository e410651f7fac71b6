package graphql

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/valyala/fasthttp"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/validator"

	"github.com/quarrydata/quarry/accounts"
	"github.com/quarrydata/quarry/fileapi"
	"github.com/quarrydata/quarry/hangup"
	"github.com/quarrydata/quarry/ratelimit"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
)

// Default limits on one request's document (graphQLMaxDepth,
// graphQLMaxAliases, graphQLMaxFields). The standard introspection query
// of GraphiQL and Apollo fits well inside them.
const (
	DefaultMaxDepth   = 20
	DefaultMaxAliases = 50
	DefaultMaxFields  = 1000
	// DefaultMaxComplexity allows a page of 100 objects with 100 fields,
	// each with a page of 10 included objects of 10 fields.
	DefaultMaxComplexity = 100_000
)

// Options configure the GraphQL front end.
type Options struct {
	// PublicIntrospection lets callers without the master key run
	// __schema and __type queries (graphQLPublicIntrospection).
	PublicIntrospection bool
	// MaxDepth, MaxAliases and MaxFields cap a document's selection
	// depth, its aliased fields and its fields in all, fragments expanded
	// (0 means the default; negative means no cap).
	MaxDepth, MaxAliases, MaxFields int
	// MaxComplexity caps the fields a reply can hold, each counted once
	// per object its enclosing connections can return (their first or
	// last, else 100): graphQLMaxComplexity (0 the default, negative none).
	MaxComplexity int
	// CustomTypeDefs is graphQLCustomTypeDefs: schema language added to
	// the generated schema. Fields it adds to Query or Mutation resolve
	// with @resolve (a cloud function) or @mock (a fixed value).
	CustomTypeDefs string
	// FunctionNames lists the defined cloud functions, for the
	// CloudCodeFunction enum of callCloudCode; nil makes functionName a
	// String (no enum).
	FunctionNames func() []string
	Logger        *slog.Logger
	// Events feeds subscriptions (the LiveQuery engine); nil generates no
	// Subscription type.
	Events Events
	// Authenticate checks the credentials a WebSocket connection sends in
	// its connection_init payload, named as HTTP headers, exactly as an
	// HTTP request's would be checked. Without it, sockets are refused.
	Authenticate func(headers map[string]string, remote net.Addr) (service.Auth, error)
	// RateLimit counts each root field as the REST operation it performs
	// (logIn as POST /login, createX as POST /classes/X), by the
	// client's address, so a rule cannot be bypassed through GraphQL;
	// nil limits nothing.
	RateLimit *ratelimit.Limiter
	// LockSchemas refuses createClass, updateClass and deleteClass as
	// REST refuses POST/PUT/DELETE /schemas under the schema option's
	// lockSchemas: 119, same message.
	LockSchemas bool
}

// Handler serves GraphQL requests over a service.
type Handler struct {
	svc   *service.Service
	acc   *accounts.Accounts
	files *fileapi.Files
	opts  Options
	log   *slog.Logger

	mu      sync.Mutex
	current *model
	key     []*schema.Class // the class schemas current was built from
	cfgKey  string          // and the /graphql-config class filter
	fnKey   string          // and the cloud functions

	// filter is the class filter of the last GraphQL configuration read.
	filter atomic.Pointer[filterFrom]

	sockets sockets
}

// New returns a handler over svc.
func New(svc *service.Service, opts Options) *Handler {
	if opts.MaxDepth == 0 {
		opts.MaxDepth = DefaultMaxDepth
	}
	if opts.MaxAliases == 0 {
		opts.MaxAliases = DefaultMaxAliases
	}
	if opts.MaxComplexity == 0 {
		opts.MaxComplexity = DefaultMaxComplexity
	}
	if opts.MaxFields == 0 {
		opts.MaxFields = DefaultMaxFields
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Handler{svc: svc, acc: accounts.New(svc), files: fileapi.New(svc), opts: opts, log: opts.Logger}
}

// Model returns the generated schema for the current class schemas,
// rebuilding it when any class schema changed since the last call (class
// schemas are replaced, never mutated, so comparing pointers suffices).
func (h *Handler) model() (*model, error) {
	classes := h.svc.Classes()
	filter, err := h.classFilter()
	if err != nil {
		return nil, err
	}
	cfg := modelConfig{keep: filter.keep(), custom: h.opts.CustomTypeDefs, anyFunction: h.opts.FunctionNames == nil,
		classConfigs: filter.classConfigs}
	if !cfg.anyFunction {
		cfg.functions = h.opts.FunctionNames()
	}
	if h.opts.Events != nil {
		cfg.subscribes = h.opts.Events.Serves
	}
	fnKey := strings.Join(cfg.functions, "\x00")
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.current != nil && samePointers(classes, h.key) && filter.key == h.cfgKey && fnKey == h.fnKey {
		return h.current, nil
	}
	m, err := buildModel(classes, cfg)
	if err != nil {
		return nil, err
	}
	if len(m.dropped) > 0 {
		h.log.Warn("graphql: graphQLCustomTypeDefs extends types the schema does not hold (classes without objects yet?); those extensions are left out",
			"types", strings.Join(m.dropped, ", "))
	}
	h.current, h.key, h.cfgKey, h.fnKey = m, classes, filter.key, fnKey
	return m, nil
}

// classFilter is /graphql-config: enabledForClasses, disabledForClasses
// (Parse Server's names) and classConfigs.
type classFilter struct {
	enabled, disabled map[string]bool
	classConfigs      map[string]*classConfig
	key               string
}

// filterFrom is the class filter made from one GraphQL configuration.
type filterFrom struct {
	settings *service.GraphQLSettings
	filter   classFilter
}

// classFilter is the filter of the stored configuration, made once per
// change of it: the service shares one decoded configuration until the
// next change, so a request reads it with no lock, decoding or encoding.
func (h *Handler) classFilter() (classFilter, error) {
	g := h.svc.GraphQLSettings()
	if g.Err != nil {
		return classFilter{}, g.Err
	}
	if last := h.filter.Load(); last != nil && last.settings == g {
		return last.filter, nil
	}
	f := makeClassFilter(g.Config)
	h.filter.Store(&filterFrom{settings: g, filter: f})
	return f, nil
}

// makeClassFilter reads a decoded configuration, which it does not
// modify.
func makeClassFilter(cfg map[string]any) classFilter {
	if len(cfg) == 0 {
		return classFilter{}
	}
	f := classFilter{}
	set := func(v any) map[string]bool {
		list, _ := v.([]any)
		if list == nil {
			return nil
		}
		m := map[string]bool{}
		for _, x := range list {
			if s, ok := x.(string); ok {
				m[s] = true
			}
		}
		return m
	}
	f.enabled, f.disabled = set(cfg["enabledForClasses"]), set(cfg["disabledForClasses"])
	f.classConfigs = classConfigs(cfg["classConfigs"])
	key, _ := json.Marshal([]any{cfg["enabledForClasses"], cfg["disabledForClasses"], cfg["classConfigs"]})
	f.key = string(key)
	return f
}

// keep reports which classes the filter lets through, nil for all; _User
// always stays, since viewer and the user mutations need its type.
func (f classFilter) keep() func(string) bool {
	if f.enabled == nil && f.disabled == nil {
		return nil
	}
	return func(c string) bool {
		return c == "_User" || (f.enabled == nil || f.enabled[c]) && !f.disabled[c]
	}
}

func samePointers(a, b []*schema.Class) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// SDL returns the schema currently generated, in GraphQL's schema language.
func (h *Handler) SDL() (string, error) {
	m, err := h.model()
	if err != nil {
		return "", err
	}
	return m.sdl, nil
}

// request is a GraphQL request body.
type request struct {
	Query         string         `json:"query"`
	Variables     map[string]any `json:"variables"`
	OperationName string         `json:"operationName"`
}

// response is a GraphQL response body.
type response struct {
	Errors []gqlError `json:"errors,omitempty"`
	Data   any        `json:"data,omitempty"`
}

// Serve answers one HTTP request for the caller auth (the transport has
// checked the keys and resolved the session). GraphQL errors are answered
// with status 200, malformed requests with 400; never a 5xx for a bad
// query.
func (h *Handler) Serve(ctx *fasthttp.RequestCtx, auth service.Auth) {
	defer func() {
		if r := recover(); r != nil {
			h.log.Error("graphql: request panicked", "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			ctx.Response.ResetBody() // keep the CORS headers transport set
			writeResponse(ctx, fasthttp.StatusOK, requestError(schema.CodeInternalServerError, "Internal server error."))
		}
	}()
	var req request
	switch {
	case ctx.IsGet():
		args := ctx.QueryArgs()
		req.Query = string(args.Peek("query"))
		req.OperationName = string(args.Peek("operationName"))
		if v := args.Peek("variables"); len(v) > 0 && json.Unmarshal(v, &req.Variables) != nil {
			writeResponse(ctx, fasthttp.StatusBadRequest, requestError(codeBadRequest, "Variables are not valid JSON."))
			return
		}
	case ctx.IsPost() && isMultipart(ctx):
		var err error
		if req, err = multipartRequest(ctx); err != nil {
			code, msg := schema.CodeInvalidJSON, "The multipart request could not be read."
			if pe, ok := schema.AsError(err); ok {
				code, msg = pe.Code, pe.Message
			}
			writeResponse(ctx, fasthttp.StatusBadRequest, requestError(code, msg))
			return
		}
	case ctx.IsPost():
		dec := json.NewDecoder(bytes.NewReader(ctx.PostBody()))
		dec.UseNumber()
		if err := dec.Decode(&req); err != nil {
			writeResponse(ctx, fasthttp.StatusBadRequest, requestError(codeBadRequest, "The body must be a JSON object {query, variables, operationName}."))
			return
		}
		req.Variables = plainNumbers(req.Variables).(map[string]any)
	default:
		ctx.Response.Header.Set("Allow", "GET, POST")
		writeResponse(ctx, fasthttp.StatusMethodNotAllowed, requestError(codeBadRequest, "GraphQL accepts GET and POST."))
		return
	}
	if req.Query == "" {
		writeResponse(ctx, fasthttp.StatusBadRequest, requestError(codeBadRequest, "Must provide a query string."))
		return
	}
	clientGone := hangup.Watch(ctx.Conn())
	resp, status := h.execute(clientGone, auth.WithContext(clientGone), ctx.RemoteIP().String(), req.Query, req.OperationName, req.Variables, ctx.IsGet())
	clientGone.Stop()
	if status == fasthttp.StatusMethodNotAllowed {
		ctx.Response.Header.Set("Allow", "POST")
	}
	writeResponse(ctx, status, resp)
}

// requestError is a response of one error with code (a Parse error code,
// or one of Apollo's names) in extensions.code.
func requestError(code any, msg string) response {
	return response{Errors: []gqlError{{Message: msg, Extensions: map[string]any{"code": code}}}}
}

// encode writes a response: errors first, then data when there is any.
func (r response) encode() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	if len(r.Errors) > 0 {
		errs, err := json.Marshal(r.Errors)
		if err != nil {
			return nil, err
		}
		b.WriteString(`"errors":`)
		b.Write(errs)
	}
	if r.Data != nil {
		if len(r.Errors) > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"data":`)
		if err := writeValue(&b, r.Data); err != nil {
			return nil, err
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func writeResponse(ctx *fasthttp.RequestCtx, status int, r response) {
	b, err := r.encode()
	if err != nil {
		status, b = fasthttp.StatusOK, []byte(`{"errors":[{"message":"Internal server error.","extensions":{"code":1}}]}`)
	}
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json; charset=utf-8")
	ctx.SetBody(b)
}

// plainNumbers turns json.Number values into float64 (or int64 for whole
// numbers written without a fraction), as gqlparser's coercion expects.
func plainNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case map[string]any:
		if x == nil {
			return map[string]any{}
		}
		for k, e := range x {
			x[k] = plainNumbers(e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = plainNumbers(e)
		}
		return x
	}
	return v
}

// Execute runs a GraphQL request in process for auth and returns the JSON
// response body, exactly as Serve would send it. Rate limits count it as
// an internal request.
func (h *Handler) Execute(auth service.Auth, query, operationName string, vars map[string]any) []byte {
	resp, _ := h.execute(context.Background(), auth, internalIP, query, operationName, vars, false)
	b, err := resp.encode()
	if err != nil {
		return []byte(`{"errors":[{"message":"Internal server error.","extensions":{"code":1}}]}`)
	}
	return b
}

// execute runs a query document for auth, a client at ip (internalIP: in
// process), and says which HTTP status answers it. readOnly refuses
// mutations (a GET request). A request that cannot run at all (it does not
// parse or validate, names no operation, has variables of the wrong type,
// asks for introspection without the right) is answered as Apollo Server
// answers it under Parse Server: a 4xx status and Apollo's code in
// extensions.code; errors of a running operation keep Parse's codes and
// status 200. A query stops resolving fields once clientGone is done (the
// client hung up); mutations run to their end whatever the client does.
func (h *Handler) execute(clientGone context.Context, auth service.Auth, ip, query, operationName string, vars map[string]any, readOnly bool) (response, int) {
	m, err := h.model()
	if err != nil {
		h.log.Error("graphql: schema generation failed", "err", err)
		return requestError(schema.CodeInternalServerError, "Internal server error."), fasthttp.StatusOK
	}
	doc, errs, kind := m.document(query, h.opts.MaxFields)
	if len(errs) > 0 {
		return response{Errors: fromGQLErrors(errs, kind)}, fasthttp.StatusBadRequest
	}
	op := doc.Operations.ForName(operationName)
	if op == nil {
		msg := "Unknown operation named \"" + operationName + "\"."
		if operationName == "" {
			msg = "Must provide an operation name when the document holds several operations."
		}
		return requestError(codeOperationResolution, msg), fasthttp.StatusBadRequest
	}
	if err := h.checkLimits(op, vars); err != nil {
		return requestError(codeValidationFailed, err.Error()), fasthttp.StatusBadRequest
	}
	if !auth.Master && !h.opts.PublicIntrospection && introspects(op.SelectionSet, map[string]bool{}) {
		return requestError(schema.CodeOperationForbidden, "Introspection is not allowed: it needs the master key (or graphQLPublicIntrospection)."), fasthttp.StatusForbidden
	}
	coerced, verr := validator.VariableValues(m.schema, op, vars)
	if verr != nil {
		return response{Errors: fromGQLErrors(gqlerror.List{asGQLError(verr)}, codeBadUserInput)}, fasthttp.StatusBadRequest
	}
	coerced = plainLists(coerced).(map[string]any)
	e := &executor{h: h, m: m, auth: auth, vars: coerced, ip: ip}
	if op.Operation == ast.Query {
		e.clientGone = clientGone
	}
	var root *ast.Definition
	switch op.Operation {
	case ast.Mutation:
		if readOnly {
			return requestError(codeBadRequest, "GET requests only run queries; send a mutation with POST."), fasthttp.StatusMethodNotAllowed
		}
		root = m.schema.Mutation
	case ast.Subscription:
		return requestError(schema.CodeInvalidQuery, "Subscriptions run over a WebSocket (graphql-transport-ws) on this path."), fasthttp.StatusOK
	default:
		root = m.schema.Query
	}
	data, ok := e.selectionSet(op.SelectionSet, root, rootValue{}, nil)
	resp := response{Errors: e.errors}
	if ok {
		resp.Data = data
	} else {
		resp.Data = nullData
	}
	return resp, fasthttp.StatusOK
}

// Apollo Server's codes for requests that cannot run (extensions.code).
const (
	codeParseFailed         = "GRAPHQL_PARSE_FAILED"
	codeValidationFailed    = "GRAPHQL_VALIDATION_FAILED"
	codeBadUserInput        = "BAD_USER_INPUT"
	codeBadRequest          = "BAD_REQUEST"
	codeOperationResolution = "OPERATION_RESOLUTION_FAILURE"
)

var nullData = json.RawMessage("null")

func asGQLError(err error) *gqlerror.Error {
	if ge, ok := err.(*gqlerror.Error); ok {
		return ge
	}
	return gqlerror.Wrap(err)
}

func fromGQLErrors(list gqlerror.List, code any) []gqlError {
	out := make([]gqlError, 0, len(list))
	for _, ge := range list {
		e := gqlError{Message: ge.Message, Extensions: map[string]any{"code": code}}
		for _, l := range ge.Locations {
			e.Locations = append(e.Locations, location{l.Line, l.Column})
		}
		for _, p := range ge.Path {
			e.Path = append(e.Path, p)
		}
		out = append(out, e)
	}
	return out
}

// introspects reports whether a selection asks for __schema or __type.
func introspects(set ast.SelectionSet, seen map[string]bool) bool {
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			if s.Name == "__schema" || s.Name == "__type" {
				return true
			}
		case *ast.InlineFragment:
			if introspects(s.SelectionSet, seen) {
				return true
			}
		case *ast.FragmentSpread:
			if s.Definition != nil && !seen[s.Name] {
				seen[s.Name] = true
				if introspects(s.Definition.SelectionSet, seen) {
					return true
				}
			}
		}
	}
	return false
}
