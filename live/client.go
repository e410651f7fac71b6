package live

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fasthttp/websocket"

	"github.com/quarrydata/quarry/live/match"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
	"github.com/quarrydata/quarry/wsconn"
)

// client is one WebSocket connection. Its reader goroutine handles the
// client's messages; its writer goroutine drains the bounded send queue
// and pings. Dispatchers only ever enqueue, never write, so a slow client
// delays nobody: past its queue's capacity its messages are dropped, and
// after SlowClientMaxDrops drops in a row or SlowClientMaxLag it is
// disconnected with status 1013 (the SDKs reconnect and re-subscribe).
type client struct {
	srv    *Server
	conn   *wsconn.Conn[[]byte]
	remote string
	ip     netip.Addr
	frames []byte // the writer's: a burst of queued messages, framed for one write

	closeAfter atomic.Pointer[closeFrame] // set by closeAfterFlush
	tooSlow    atomic.Bool                // being disconnected for it
	dropped    atomic.Int64               // messages dropped since the queue last emptied
	dropSince  atomic.Int64               // unix nanos of the first of them

	// Set by connect, read by dispatchers.
	mu             sync.Mutex
	connected      bool
	id             string
	installationID string
	sessionToken   string
	master         bool
	prefix         []byte // `"clientId":"…"[,"installationId":"…"]`
	subs           map[string]*subscription
}

// subscription is one (client, requestId) pair.
type subscription struct {
	client    *client
	requestID string // as a JSON number
	query     *match.Query
	group     *match.Group[*subscription]
	keys      []string
	watch     []string
	// fields are the top-level fields the where and watch read; an object
	// hiding one of them from the subscriber is not shown to it.
	fields  []string
	token   string // the subscription's session token, else the connect's
	master  bool   // the connect presented the master key
	prefix  []byte // the client's part of every message
	revoked atomic.Bool
	// local, when set, receives the events instead of a client (an
	// in-process front end's subscription, SubscribeLocal).
	local LocalSink
	// join is a live-join subscription's state (join.go); such a
	// subscription is filed in Server.joins, not Server.index.
	join *joinState
	// user is the subscriber's user id ("" for the master key or no
	// session); heldForUser says the subscription counts against the
	// user's quota.
	user        string
	heldForUser bool
}

// file puts sub in the index that serves it.
func (s *Server) file(sub *subscription) *protoError {
	if len(sub.query.Joins()) > 0 {
		return s.addJoin(sub)
	}
	sub.group = s.index.Add(sub.query, sub)
	return nil
}

// unfile takes sub out of the index that serves it.
func (s *Server) unfile(sub *subscription) {
	if sub.join != nil {
		s.removeJoin(sub)
		return
	}
	s.index.Remove(sub.group, sub)
}

func (s *Server) serve(conn *websocket.Conn, remote string, ip netip.Addr) {
	c := &client{srv: s, remote: remote, ip: ip, subs: map[string]*subscription{}}
	c.conn = wsconn.New(conn, wsconn.Config[[]byte]{
		ReadLimit:    MaxFrameBytes,
		MessageLimit: MaxMessageBytes,
		Oversize: func() {
			c.sendError(&protoError{code: CodeBadMessage, msg: fmt.Sprintf("Message is larger than %d bytes", MaxMessageBytes)})
		},
		ReadLimitHit: func() {
			s.log.Info("livequery: message over the frame limit; closing", "remote", remote, "limit", MaxFrameBytes)
		},
		PingInterval: s.opts.WebsocketTimeout,
		WriteTimeout: WriteTimeout,
		NoPongCode:   CloseNoPong,
		NoPong:       func() { s.log.Info("livequery: no pong; closing", "remote", remote, "clientId", c.clientID()) },
		Queue:        s.opts.SendQueue,
		Handle:       func(data []byte) bool { c.handle(data); return true },
		Write:        c.write,
		// A bug while handling one client's message closes that client,
		// never the server.
		Panicked: func(v any, stack []byte) {
			s.stats.panics.Add(1)
			s.log.Error("livequery: panic while serving a client; closing it", "remote", remote, "panic", fmt.Sprint(v), "stack", string(stack))
		},
		InternalErrorCode:   websocket.CloseInternalServerErr,
		InternalErrorReason: "internal server error",
	})
	if !s.register(c) {
		c.close(CloseShutdown, "server shutting down")
		return
	}
	s.log.Debug("livequery: connection", "remote", remote)
	c.conn.Run()
	c.dropSubscriptions()
	s.unregister(c)
	s.log.Debug("livequery: disconnected", "remote", remote, "clientId", c.clientID())
}

// write writes one queued message, with those queued behind it framed
// into the same write; a nil message (closeAfterFlush) closes the
// connection once everything before it is written.
func (c *client) write(ws *websocket.Conn, msg []byte, queue <-chan []byte) (stop bool, err error) {
	closing := msg == nil
	if !closing {
		deadline := time.Now().Add(WriteTimeout)
		if len(queue) == 0 {
			ws.SetWriteDeadline(deadline)
			err = ws.WriteMessage(websocket.TextMessage, msg)
		} else {
			c.frames, closing = gatherBurst(c.frames[:0], msg, queue)
			err = writeBurst(ws.NetConn(), c.frames, deadline)
			if cap(c.frames) > 4*maxBurstBytes {
				c.frames = nil // one huge message must not pin its buffer
			}
		}
		if err != nil {
			return true, err
		}
	}
	if closing {
		f := c.closeAfter.Load()
		c.close(f.code, f.reason)
		return true, nil
	}
	if len(queue) == 0 {
		c.dropped.Store(0)
	}
	return false, nil
}

// close ends the connection once: a close frame with code and reason,
// then the socket.
func (c *client) close(code int, reason string) { c.conn.Close(code, reason) }

// send queues a message without waiting (see the type's comment for the
// slow-client policy). It reports whether the message was queued.
func (c *client) send(msg []byte) bool {
	if c.conn.Offer(msg) {
		return true
	}
	select {
	case <-c.conn.Done():
		return false
	default:
	}
	c.srv.stats.dropped.Add(1)
	now := time.Now().UnixNano()
	n := c.dropped.Add(1)
	if n == 1 {
		c.dropSince.Store(now)
	}
	if (n >= SlowClientMaxDrops || time.Duration(now-c.dropSince.Load()) >= SlowClientMaxLag) && c.tooSlow.CompareAndSwap(false, true) {
		c.srv.stats.slowClosed.Add(1)
		// Off the sender's goroutine: clientID takes the client's lock,
		// which the live-join goroutine (a sender) must never wait for.
		go func() {
			c.srv.log.Info("livequery: client too slow; closing", "remote", c.remote, "clientId", c.clientID(), "dropped", n)
			c.close(CloseSlowClient, "client too slow: send queue full")
		}()
	}
	return false
}

func (c *client) sendError(e *protoError) { c.send(errorMessage(e)) }

func (c *client) clientID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.id
}

func (c *client) sendJSON(v map[string]any) {
	b, err := json.Marshal(v)
	if err == nil {
		c.send(b)
	}
}

// reply builds a connected/subscribed/unsubscribed message.
func (c *client) reply(op, requestID string) map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := map[string]any{"op": op, "clientId": c.id}
	if c.installationID != "" {
		m["installationId"] = c.installationID
	}
	if requestID != "" {
		m["requestId"] = json.Number(requestID)
	}
	return m
}

func (c *client) handle(data []byte) {
	req, perr := parseRequest(data)
	if perr != nil {
		c.srv.log.Debug("livequery: bad message", "remote", c.remote, "err", perr.msg)
		c.sendError(perr)
		return
	}
	switch req.op {
	case "connect":
		c.connect(req)
	case "subscribe", "update":
		c.subscribe(req)
	case "unsubscribe":
		c.unsubscribe(req)
	}
}

func (c *client) connect(req *request) {
	s := c.srv
	if s.opts.AppID != "" && req.applicationID != s.opts.AppID {
		// Another app's client can never be served here: say so and
		// close, rather than accept a connection nothing will reach.
		s.log.Info("livequery: connect with a wrong application id; closing", "remote", c.remote)
		msg, _ := json.Marshal(map[string]any{"op": "error", "code": CodeKeyNotValid, "reconnect": false, "requestId": nil,
			"error": "applicationId is not this server's application id"})
		c.send(msg)
		c.closeAfterFlush(websocket.ClosePolicyViolation, "wrong application id")
		return
	}
	master := s.isMaster(req.keys, c.ip)
	if req.keys["masterKey"] != "" && !master {
		s.log.Info("livequery: master key ignored", "remote", c.remote, "reason", "wrong key or address not in masterKeyIps")
	}
	if !s.keysAllowed(req.keys) && !master {
		c.sendError(&protoError{code: CodeKeyNotValid, msg: "Key in request is not valid"})
		return
	}
	if t := s.opts.Triggers; t != nil {
		st := s.Stats()
		err := t.BeforeConnect(&ConnectRequest{SessionToken: req.sessionToken, InstallationID: req.installationID, IP: c.ip.String(),
			Master: master, Clients: st.Clients, Subscriptions: st.Subscriptions})
		if err != nil {
			c.sendError(triggerError(err, ""))
			return
		}
	}
	// A second connect on one socket starts over.
	c.dropSubscriptions()
	id := newClientID()
	prefix, _ := json.Marshal(id)
	prefix = append([]byte(`"clientId":`), prefix...)
	if req.installationID != "" {
		iid, _ := json.Marshal(req.installationID)
		prefix = append(append(prefix, `,"installationId":`...), iid...)
	}
	c.mu.Lock()
	c.connected, c.id, c.installationID = true, id, req.installationID
	c.sessionToken, c.master, c.prefix = req.sessionToken, master, prefix
	c.mu.Unlock()
	s.log.Debug("livequery: connected", "remote", c.remote, "clientId", id)
	c.sendJSON(c.reply("connected", ""))
}

func newClientID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // RFC 4122 variant
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

var errNotConnected = &protoError{code: CodeNotConnected, msg: "Can not find this client, make sure you connect to server before subscribing"}

func (c *client) subscribe(req *request) {
	s := c.srv
	c.mu.Lock()
	connected, master, connToken, prefix := c.connected, c.master, c.sessionToken, c.prefix
	c.mu.Unlock()
	if !connected {
		c.sendError(errNotConnected)
		return
	}
	// update replaces the subscription; so does a subscribe that reuses
	// a requestId (Parse Server would leak the old one).
	c.removeSubscription(req.requestID.String())
	token := req.sessionToken
	if token == "" {
		token = connToken
	}
	sub, perr := s.prepare(subscribeParams{class: req.className, where: req.where, keys: req.fields, watch: req.watch,
		token: token, master: master, ip: c.ip.String()})
	if perr != nil {
		perr.requestID = req.requestID
		c.sendError(perr)
		return
	}
	sub.client, sub.requestID, sub.prefix = c, req.requestID.String(), prefix
	c.mu.Lock()
	if !c.connected {
		c.mu.Unlock()
		return
	}
	if len(c.subs) >= s.opts.MaxSubscriptionsPerClient {
		c.mu.Unlock()
		c.sendError(&protoError{code: CodeSubscriptionQuota, requestID: req.requestID,
			msg: fmt.Sprintf("Subscription quota exceeded: this connection holds %d subscriptions, the most allowed (maxSubscriptionsPerClient)", s.opts.MaxSubscriptionsPerClient)})
		return
	}
	if perr := s.hold(sub); perr != nil {
		c.mu.Unlock()
		perr.requestID = req.requestID
		c.sendError(perr)
		return
	}
	if perr := s.file(sub); perr != nil {
		s.release(sub)
		c.mu.Unlock()
		perr.requestID = req.requestID
		c.sendError(perr)
		return
	}
	c.subs[sub.requestID] = sub
	c.mu.Unlock()
	c.sendJSON(c.reply("subscribed", sub.requestID))
}

// subscribeParams are what a subscription asks for, from a LiveQuery
// client or an in-process front end.
type subscribeParams struct {
	class       string
	where       map[string]any
	keys, watch []string
	token       string // the session token ("" for none)
	master      bool
	ip          string
}

// prepare checks and compiles a subscription: the class is enabled, the
// session resolves, beforeSubscribe agrees, and the query reads no field
// hidden from the caller. The subscription it returns is not yet indexed.
func (s *Server) prepare(p subscribeParams) (*subscription, *protoError) {
	fail := func(code int, format string, args ...any) (*subscription, *protoError) {
		return nil, &protoError{code: code, msg: fmt.Sprintf(format, args...)}
	}
	class := p.class
	if !schema.ValidClassName(class) {
		e := schema.ClassNameError(class)
		return fail(e.Code, "%s", e.Message)
	}
	if !s.classAllowed(class) {
		return fail(CodeClassDisabled, "Class %s is not enabled for LiveQuery (liveQuery.classNames)", class)
	}
	var ident Identity
	if p.token != "" && !p.master {
		var err error
		ident, err = s.sessions.get(context.Background(), p.token)
		if err != nil {
			code, msg := schema.CodeInvalidSessionToken, "Invalid session token"
			var pe *schema.Error
			if !errors.As(err, &pe) || pe.Code != schema.CodeInvalidSessionToken {
				s.log.Error("livequery: session lookup failed", "err", err)
				code, msg = schema.CodeConnectionFailed, "Could not check the session token"
			}
			return fail(code, "%s", msg)
		}
	}
	w, keys := p.where, p.keys
	if t := s.opts.Triggers; t != nil {
		sr := &SubscribeRequest{Class: class, Where: w, Keys: keys, SessionToken: p.token, Master: p.master, IP: p.ip}
		if err := t.BeforeSubscribe(sr); err != nil {
			return nil, triggerError(err, "")
		}
		w, keys = sr.Where, sr.Keys
	}
	if class == "_Session" && !p.master {
		// A session subscription only ever sees the caller's own sessions.
		if ident.UserID == "" {
			return fail(schema.CodeInvalidSessionToken, "Invalid session token")
		}
		own := make(map[string]any, len(w)+1)
		for k, v := range w {
			own[k] = v
		}
		own["user"] = schema.Pointer("_User", ident.UserID)
		w = own
	}
	q, err := match.Compile(class, w, match.Options{
		FieldType:     func(f string) (schema.Type, bool) { return s.opts.Authority.FieldType(class, f) },
		Now:           s.opts.Now,
		NearSphereMax: s.opts.NearSphereMax,
	})
	if err != nil {
		var pe *schema.Error
		if errors.As(err, &pe) {
			return fail(pe.Code, "%s", pe.Message)
		}
		return fail(schema.CodeInvalidQuery, "invalid query")
	}
	sub := &subscription{query: q, keys: keys, watch: p.watch, token: p.token, master: p.master}
	if !p.master {
		sub.user = ident.UserID
	}
	sub.fields = rootFields(q.Fields(), p.watch)
	if !p.master {
		// As a find would, refuse a query on fields the caller may not see.
		op := service.ReadFind
		if q.IsGet() {
			op = service.ReadGet
		}
		if rf, err := s.opts.Authority.ReadFilter(ident, class, op, nil); err == nil && rf.Hidden != nil {
			if f, bad := intersects(rf.Hidden(nil), sub.fields); bad {
				return fail(schema.CodeOperationForbidden, "This user is not allowed to query %s on class %s", f, class)
			}
		}
	}
	return sub, nil
}

// hold counts sub against the app's quota (MaxSubscriptions) and its
// user's (MaxSubscriptionsPerUser); release gives both back.
func (s *Server) hold(sub *subscription) *protoError {
	if s.subscriptions.Add(1) > int64(s.opts.MaxSubscriptions) {
		s.subscriptions.Add(-1)
		return &protoError{code: CodeSubscriptionQuota,
			msg: fmt.Sprintf("Subscription quota exceeded: the app's LiveQuery server holds %d subscriptions, the most allowed (maxSubscriptions)", s.opts.MaxSubscriptions)}
	}
	if sub.user == "" || s.opts.MaxSubscriptionsPerUser <= 0 {
		return nil
	}
	s.userMu.Lock()
	defer s.userMu.Unlock()
	if s.userSubs[sub.user] >= s.opts.MaxSubscriptionsPerUser {
		s.subscriptions.Add(-1)
		return &protoError{code: CodeSubscriptionQuota,
			msg: fmt.Sprintf("Subscription quota exceeded: this user holds %d subscriptions, the most allowed (maxSubscriptionsPerUser)", s.opts.MaxSubscriptionsPerUser)}
	}
	s.userSubs[sub.user]++
	sub.heldForUser = true
	return nil
}

func (s *Server) release(sub *subscription) {
	s.subscriptions.Add(-1)
	if !sub.heldForUser {
		return
	}
	s.userMu.Lock()
	defer s.userMu.Unlock()
	if s.userSubs[sub.user]--; s.userSubs[sub.user] <= 0 {
		delete(s.userSubs, sub.user)
	}
}

func (c *client) unsubscribe(req *request) {
	c.mu.Lock()
	connected := c.connected
	c.mu.Unlock()
	if !connected {
		c.sendError(errNotConnected)
		return
	}
	if !c.removeSubscription(req.requestID.String()) {
		c.sendError(&protoError{code: CodeNotConnected,
			msg: fmt.Sprintf("Can not find subscription with requestId %s, make sure you subscribe first", req.requestID)})
		return
	}
	c.sendJSON(c.reply("unsubscribed", req.requestID.String()))
}

func (c *client) removeSubscription(requestID string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	sub := c.subs[requestID]
	if sub == nil {
		return false
	}
	delete(c.subs, requestID)
	c.srv.unfile(sub)
	c.srv.release(sub)
	return true
}

// dropSubscriptions removes every subscription of the client (on
// disconnect, and on a second connect).
func (c *client) dropSubscriptions() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, sub := range c.subs {
		c.srv.unfile(sub)
		delete(c.subs, id)
		c.srv.release(sub)
	}
}

func rootFields(lists ...[]string) []string {
	seen := map[string]bool{}
	var out []string
	for _, l := range lists {
		for _, f := range l {
			root := f
			for i := 0; i < len(f); i++ {
				if f[i] == '.' {
					root = f[:i]
					break
				}
			}
			if !seen[root] {
				seen[root] = true
				out = append(out, root)
			}
		}
	}
	return out
}

func intersects(hidden, fields []string) (string, bool) {
	for _, h := range hidden {
		for _, f := range fields {
			if h == f {
				return f, true
			}
		}
	}
	return "", false
}
