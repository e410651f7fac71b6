package graphql

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"runtime/debug"
	"sync"
	"time"

	"github.com/fasthttp/websocket"
	"github.com/valyala/fasthttp"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/validator"

	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
	"github.com/quarrydata/quarry/wsconn"
)

// SocketProtocol is the WebSocket subprotocol of GraphQL subscriptions:
// graphql-ws's "GraphQL over WebSocket" protocol.
const SocketProtocol = "graphql-transport-ws"

// Limits and timings of GraphQL sockets.
const (
	// ConnectionInitTimeout is how long a socket may wait before its
	// connection_init.
	ConnectionInitTimeout = 10 * time.Second
	// MaxSocketMessageBytes is the largest message read; past it the
	// socket is closed (1009).
	MaxSocketMessageBytes = 1 << 20
	// MaxSocketOperations bounds the subscriptions one socket runs.
	MaxSocketOperations = 100
	// SocketQueue is the number of events and replies waiting for one
	// socket; an event that finds it full closes the socket (1013), since
	// the client would otherwise miss events without knowing.
	SocketQueue = 1024
	// SocketPingInterval is how often the server pings; a socket that
	// answered none of the last two is closed.
	SocketPingInterval = 30 * time.Second
	socketWriteTimeout = 10 * time.Second
)

// Close codes of graphql-transport-ws.
const (
	closeBadMessage   = 4400
	closeUnauthorized = 4401
	closeForbidden    = 4403
	closeSubprotocol  = 4406
	closeInitTimeout  = 4408
	closeDuplicateID  = 4409
	closeTooManyInits = 4429
	closeInternal     = 4500
)

// sockets are a handler's open GraphQL sockets, closed by Close.
type sockets struct {
	mu     sync.Mutex
	open   map[*socket]struct{}
	closed bool
	wg     sync.WaitGroup
}

// ServeWebSocket upgrades a request on the GraphQL path to a
// graphql-transport-ws socket. Credentials come in connection_init.
func (h *Handler) ServeWebSocket(ctx *fasthttp.RequestCtx) {
	h.sockets.mu.Lock()
	closed := h.sockets.closed
	if !closed {
		h.sockets.wg.Add(1)
	}
	h.sockets.mu.Unlock()
	if closed {
		ctx.Error("The server is shutting down", fasthttp.StatusServiceUnavailable)
		return
	}
	remote := ctx.RemoteAddr()
	up := websocket.FastHTTPUpgrader{
		Subprotocols: []string{SocketProtocol},
		// Credentials travel in messages, never in cookies: any origin.
		CheckOrigin: func(*fasthttp.RequestCtx) bool { return true },
	}
	err := up.Upgrade(ctx, func(conn *websocket.Conn) {
		defer h.sockets.wg.Done()
		h.serveSocket(conn, remote)
	})
	if err != nil {
		h.sockets.wg.Done()
		h.log.Info("graphql: WebSocket upgrade refused", "remote", remote.String(), "err", err)
	}
}

// Close closes every GraphQL socket (1001) and waits for them to end.
func (h *Handler) Close() {
	h.sockets.mu.Lock()
	h.sockets.closed = true
	open := make([]*socket, 0, len(h.sockets.open))
	for s := range h.sockets.open {
		open = append(open, s)
	}
	h.sockets.mu.Unlock()
	for _, s := range open {
		s.close(websocket.CloseGoingAway, "server shutting down")
	}
	h.sockets.wg.Wait()
}

// socket is one graphql-transport-ws connection. Its reader handles the
// client's messages in order; its writer runs subscription results and
// writes everything queued, so the feed's dispatchers only ever enqueue.
type socket struct {
	h      *Handler
	conn   *wsconn.Conn[queued]
	remote net.Addr

	mu     sync.Mutex
	inited bool // connection_init received
	acked  bool
	auth   service.Auth
	ops    map[string]*subscription
}

// queued is a message to write, or an event to run first.
type queued struct {
	msg    []byte
	id     string
	sub    *subscription
	ev     Event
	failed error // the subscription's session stopped resolving
}

func (h *Handler) serveSocket(conn *websocket.Conn, remote net.Addr) {
	s := &socket{h: h, remote: remote, ops: map[string]*subscription{}}
	s.conn = wsconn.New(conn, wsconn.Config[queued]{
		ReadLimit:    MaxSocketMessageBytes,
		PingInterval: SocketPingInterval,
		WriteTimeout: socketWriteTimeout,
		Queue:        SocketQueue,
		Handle:       s.handle,
		Write:        s.writeQueued,
		// A bug while reading or writing closes this socket, never the
		// server.
		Panicked: func(v any, stack []byte) {
			h.log.Error("graphql: socket panicked", "panic", fmt.Sprint(v), "stack", string(stack))
		},
		InternalErrorCode:   closeInternal,
		InternalErrorReason: "Internal server error",
	})
	defer func() {
		if r := recover(); r != nil {
			h.log.Error("graphql: socket panicked", "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			s.close(closeInternal, "Internal server error")
		}
		s.stopAll()
		h.sockets.mu.Lock()
		delete(h.sockets.open, s)
		h.sockets.mu.Unlock()
	}()
	if conn.Subprotocol() != SocketProtocol {
		s.close(closeSubprotocol, "Subprotocol not acceptable")
		return
	}
	h.sockets.mu.Lock()
	closing := h.sockets.closed
	if h.sockets.open == nil {
		h.sockets.open = map[*socket]struct{}{}
	}
	h.sockets.open[s] = struct{}{}
	h.sockets.mu.Unlock()
	if closing { // Close ran while this socket was being upgraded
		s.close(websocket.CloseGoingAway, "server shutting down")
		return
	}
	initTimer := time.AfterFunc(ConnectionInitTimeout, func() {
		s.mu.Lock()
		acked := s.acked
		s.mu.Unlock()
		if !acked {
			s.close(closeInitTimeout, "Connection initialisation timeout")
		}
	})
	defer initTimer.Stop()
	s.conn.Run()
}

// wsMessage is a message of the protocol.
type wsMessage struct {
	ID      string          `json:"id,omitempty"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// handle acts on one client message; false when the socket was closed.
func (s *socket) handle(data []byte) bool {
	var msg wsMessage
	if err := json.Unmarshal(data, &msg); err != nil || msg.Type == "" {
		s.close(closeBadMessage, "Invalid message received")
		return false
	}
	switch msg.Type {
	case "connection_init":
		return s.init(msg.Payload)
	case "ping":
		s.write(wsMessage{Type: "pong"})
	case "pong":
	case "subscribe":
		return s.subscribe(msg)
	case "complete":
		s.mu.Lock()
		sub := s.ops[msg.ID]
		delete(s.ops, msg.ID)
		s.mu.Unlock()
		if sub != nil && sub.cancel != nil {
			sub.cancel()
		}
	default:
		s.close(closeBadMessage, "Invalid message received")
		return false
	}
	return true
}

// init authenticates the socket with the credentials of connection_init:
// payload.headers, or the payload itself, holding X-Parse-* (or X-Svc-*)
// headers by name.
func (s *socket) init(payload json.RawMessage) bool {
	s.mu.Lock()
	again := s.inited
	s.inited = true
	s.mu.Unlock()
	if again {
		s.close(closeTooManyInits, "Too many initialisation requests")
		return false
	}
	var p map[string]any
	if len(payload) > 0 && string(payload) != "null" && json.Unmarshal(payload, &p) != nil {
		s.close(closeBadMessage, "Invalid message received")
		return false
	}
	src := p
	if h, ok := p["headers"].(map[string]any); ok {
		src = h
	}
	headers := map[string]string{}
	for k, v := range src {
		if str, ok := v.(string); ok {
			headers[k] = str
		}
	}
	if s.h.opts.Authenticate == nil {
		s.close(closeForbidden, "Forbidden")
		return false
	}
	auth, err := s.h.opts.Authenticate(headers, s.remote)
	if err != nil {
		// A Parse error (an invalid session) says why; a refused key does
		// not (transport's unauthorized is no Parse error, as in REST).
		reason := "Forbidden"
		if pe, ok := schema.AsError(err); ok {
			reason += ": " + pe.Message
		}
		if len(reason) > 120 { // a close reason holds 123 bytes
			reason = reason[:120]
		}
		s.close(closeForbidden, reason)
		return false
	}
	s.mu.Lock()
	s.auth, s.acked = auth, true
	s.mu.Unlock()
	s.write(wsMessage{Type: "connection_ack"})
	return true
}

// subscribePayload is a subscribe message's payload.
type subscribePayload struct {
	Query         string         `json:"query"`
	Variables     map[string]any `json:"variables"`
	OperationName string         `json:"operationName"`
}

func (s *socket) subscribe(msg wsMessage) bool {
	s.mu.Lock()
	acked, auth, dup, n := s.acked, s.auth, false, len(s.ops)
	if msg.ID != "" {
		_, dup = s.ops[msg.ID]
	}
	s.mu.Unlock()
	if !acked {
		s.close(closeUnauthorized, "Unauthorized")
		return false
	}
	if dup {
		s.close(closeDuplicateID, "Subscriber for "+truncate(msg.ID, 90)+" already exists")
		return false
	}
	var p subscribePayload
	dec := json.NewDecoder(bytes.NewReader(msg.Payload))
	dec.UseNumber()
	if msg.ID == "" || dec.Decode(&p) != nil || p.Query == "" {
		s.close(closeBadMessage, "Invalid message received")
		return false
	}
	vars, _ := plainNumbers(p.Variables).(map[string]any)
	m, op, errs := s.operation(p, auth)
	switch {
	case errs != nil:
		s.writeErrors(msg.ID, errs)
	case op.Operation != ast.Subscription:
		// A query or mutation over the socket: one result, then complete.
		resp, _ := s.h.execute(context.Background(), auth, remoteIP(s.remote), p.Query, p.OperationName, vars, false)
		s.write(wsMessage{ID: msg.ID, Type: "next", Payload: encoded(resp)})
		s.write(wsMessage{ID: msg.ID, Type: "complete"})
	case n >= MaxSocketOperations:
		s.writeErrors(msg.ID, requestError(schema.CodeOperationForbidden,
			fmt.Sprintf("This socket runs %d subscriptions, the most allowed.", MaxSocketOperations)).Errors)
	default:
		coerced, verr := validator.VariableValues(m.schema, op, vars)
		if verr != nil {
			s.writeErrors(msg.ID, fromGQLErrors(gqlerror.List{asGQLError(verr)}, schema.CodeInvalidQuery))
		} else if err := s.listen(msg.ID, m, op, plainLists(coerced).(map[string]any), auth); err != nil {
			s.writeErrors(msg.ID, s.errorsOf(err))
		}
	}
	return true
}

// operation parses and checks a subscribe's document as an HTTP request's
// would be (validation, operation name, limits, introspection).
func (s *socket) operation(p subscribePayload, auth service.Auth) (*model, *ast.OperationDefinition, []gqlError) {
	m, err := s.h.model()
	if err != nil {
		s.h.log.Error("graphql: schema generation failed", "err", err)
		return nil, nil, requestError(schema.CodeInternalServerError, "Internal server error.").Errors
	}
	doc, errs, _ := m.document(p.Query, s.h.opts.MaxFields)
	if len(errs) > 0 {
		return nil, nil, fromGQLErrors(errs, schema.CodeInvalidQuery)
	}
	op := doc.Operations.ForName(p.OperationName)
	if op == nil {
		return nil, nil, requestError(schema.CodeInvalidQuery, "Unknown operation named \""+p.OperationName+"\", or several operations and no name.").Errors
	}
	if err := s.h.checkLimits(op, p.Variables); err != nil {
		return nil, nil, requestError(schema.CodeInvalidQuery, err.Error()).Errors
	}
	if !auth.Master && !s.h.opts.PublicIntrospection && introspects(op.SelectionSet, map[string]bool{}) {
		return nil, nil, requestError(schema.CodeOperationForbidden, "Introspection is not allowed: it needs the master key (or graphQLPublicIntrospection).").Errors
	}
	return m, op, nil
}

// listen starts a subscription operation under id. It is registered
// before the feed knows it, so that no event can find it missing.
func (s *socket) listen(id string, m *model, op *ast.OperationDefinition, vars map[string]any, auth service.Auth) error {
	sub, where, err := s.h.newSubscription(m, op, vars, auth)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.ops[id] = sub
	s.mu.Unlock()
	ip := ""
	if a, ok := s.remote.(*net.TCPAddr); ok {
		ip = a.IP.String()
	}
	cancel, err := s.h.listen(sub, where, auth, ip,
		func(ev Event) bool { return s.enqueue(queued{id: id, sub: sub, ev: ev}) },
		func(err error) { s.enqueue(queued{id: id, sub: sub, failed: err}) })
	s.mu.Lock()
	active := s.ops[id] == sub
	if err != nil && active {
		delete(s.ops, id)
	}
	if err == nil && active {
		sub.cancel = cancel
	}
	s.mu.Unlock()
	if err == nil && !active {
		cancel() // ended (its session failed) before it was registered
	}
	return err
}

// errorsOf turns an error into the payload of an error message, as a
// resolver's error would be (Parse code, no internals).
func (s *socket) errorsOf(err error) []gqlError {
	e := &executor{h: s.h}
	e.fail(nil, nil, err)
	e.errors[0].Path = nil
	return e.errors
}

// enqueue queues without waiting (the feed's dispatchers call it); a full
// queue closes the socket.
func (s *socket) enqueue(q queued) bool {
	if s.conn.Offer(q) {
		return true
	}
	select {
	case <-s.conn.Done():
		return false
	default:
	}
	s.h.log.Info("graphql: socket too slow; closing", "remote", s.remote.String())
	go s.close(websocket.CloseTryAgainLater, "client too slow: send queue full")
	return false
}

// write queues a protocol message, waiting for room (the reader calls it).
func (s *socket) write(m wsMessage) {
	b, err := json.Marshal(m)
	if err != nil {
		return
	}
	s.conn.Send(queued{msg: b})
}

func (s *socket) writeErrors(id string, errs []gqlError) {
	b, err := json.Marshal(errs)
	if err != nil {
		b = []byte(`[{"message":"Internal server error.","extensions":{"code":1}}]`)
	}
	s.write(wsMessage{ID: id, Type: "error", Payload: b})
}

func encoded(r response) json.RawMessage {
	b, err := r.encode()
	if err != nil {
		return json.RawMessage(`{"errors":[{"message":"Internal server error.","extensions":{"code":1}}]}`)
	}
	return b
}

// writeQueued writes one queued item, rendered.
func (s *socket) writeQueued(ws *websocket.Conn, q queued, _ <-chan queued) (stop bool, err error) {
	msg := s.render(q)
	if msg == nil {
		return false, nil
	}
	ws.SetWriteDeadline(time.Now().Add(socketWriteTimeout))
	return false, ws.WriteMessage(websocket.TextMessage, msg)
}

// render turns a queued item into the bytes to write, nil for nothing: an
// event runs the subscription's selection (for the socket's caller), a
// failure ends the subscription with an error message.
func (s *socket) render(q queued) (out []byte) {
	if q.msg != nil {
		return q.msg
	}
	s.mu.Lock()
	active, auth := s.ops[q.id] == q.sub, s.auth
	if active && q.failed != nil {
		delete(s.ops, q.id)
	}
	cancel := q.sub.cancel
	s.mu.Unlock()
	if !active {
		return nil // completed meanwhile
	}
	if q.failed == nil && auth.SessionToken != "" && !auth.Master {
		// The selection reads as the session is now (its roles may have
		// changed since connection_init); a session gone ends it.
		fresh, err := s.h.svc.Authenticate(auth)
		if err != nil {
			s.mu.Lock()
			if s.ops[q.id] == q.sub {
				delete(s.ops, q.id)
			}
			s.mu.Unlock()
			q.failed = err
		}
		auth = fresh
	}
	if q.failed != nil {
		if cancel != nil {
			cancel()
		}
		b, _ := json.Marshal(s.errorsOf(q.failed))
		out, _ = json.Marshal(wsMessage{ID: q.id, Type: "error", Payload: b})
		return out
	}
	defer func() {
		if r := recover(); r != nil {
			s.h.log.Error("graphql: subscription result panicked", "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			out, _ = json.Marshal(wsMessage{ID: q.id, Type: "next", Payload: encoded(requestError(schema.CodeInternalServerError, "Internal server error."))})
		}
	}()
	out, _ = json.Marshal(wsMessage{ID: q.id, Type: "next", Payload: encoded(s.h.result(q.sub, auth, q.ev))})
	return out
}

// close ends the socket once: a close frame, then the connection.
func (s *socket) close(code int, reason string) { s.conn.Close(code, reason) }

// stopAll cancels every subscription of a closed socket.
func (s *socket) stopAll() {
	s.mu.Lock()
	ops := s.ops
	s.ops = map[string]*subscription{}
	s.mu.Unlock()
	for _, sub := range ops {
		if sub.cancel != nil {
			sub.cancel()
		}
	}
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// remoteIP is the address rate limits count a socket's operations by, as
// they count an HTTP request's.
func remoteIP(a net.Addr) string {
	if t, ok := a.(*net.TCPAddr); ok {
		return t.IP.String()
	}
	return a.String()
}
