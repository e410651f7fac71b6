package graphql_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fasthttp/websocket"
	"github.com/tidwall/gjson"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server/servertest"
)

// startLive runs a server with GraphQL and LiveQuery on for classes.
func startLive(t testing.TB, classes ...string) *servertest.Server {
	return start(t, func(o *config.Options) { o.LiveQuery.ClassNames = classes })
}

// gqlSocket is a graphql-transport-ws client over a real WebSocket.
type gqlSocket struct {
	t    testing.TB
	conn *websocket.Conn
}

// dial opens a socket on the server's GraphQL path offering protocols.
func dial(t testing.TB, srv *servertest.Server, protocols ...string) *gqlSocket {
	t.Helper()
	root := strings.TrimSuffix(srv.URL, srv.Opts.MountPath)
	d := websocket.Dialer{Subprotocols: protocols, HandshakeTimeout: 10 * time.Second}
	conn, resp, err := d.Dial("ws"+strings.TrimPrefix(root, "http")+"/graphql", nil)
	if err != nil {
		t.Fatalf("dial: %v (%v)", err, resp)
	}
	t.Cleanup(func() { conn.Close() })
	return &gqlSocket{t, conn}
}

// connect opens a socket and initialises it with headers.
func connect(t testing.TB, srv *servertest.Server, headers map[string]string) *gqlSocket {
	t.Helper()
	s := dial(t, srv, "graphql-transport-ws")
	s.send(map[string]any{"type": "connection_init", "payload": map[string]any{"headers": headers}})
	if m := s.next(); m.Get("type").String() != "connection_ack" {
		t.Fatalf("connection_init answered %s", m.Raw)
	}
	return s
}

func (s *gqlSocket) send(v any) {
	s.t.Helper()
	if err := s.conn.WriteJSON(v); err != nil {
		s.t.Fatal(err)
	}
}

func (s *gqlSocket) subscribe(id, query string, vars map[string]any) {
	s.t.Helper()
	s.send(map[string]any{"id": id, "type": "subscribe", "payload": map[string]any{"query": query, "variables": vars}})
}

// next reads one message; the deadline only keeps a broken server from
// hanging the test, it asserts nothing about speed.
func (s *gqlSocket) next() gjson.Result {
	s.t.Helper()
	s.conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	_, b, err := s.conn.ReadMessage()
	if err != nil {
		s.t.Fatalf("read: %v", err)
	}
	return gjson.ParseBytes(b)
}

// closed reads until the server closes the socket and returns the code.
func (s *gqlSocket) closed() (int, string) {
	s.t.Helper()
	s.conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	for {
		_, b, err := s.conn.ReadMessage()
		var ce *websocket.CloseError
		if errors.As(err, &ce) {
			return ce.Code, ce.Text
		}
		if err != nil {
			s.t.Fatalf("read: %v", err)
		}
		s.t.Logf("before the close: %s", b)
	}
}

// TestSubscriptionEvents: each generated field receives its own LiveQuery
// event for objects its where matches, with pointers followed, and the
// socket keeps the subscriptions apart by id.
func TestSubscriptionEvents(t *testing.T) {
	srv := startLive(t, "Score")
	m := servertest.Master()
	srv.Do(t, "POST", "/schemas/Score", map[string]any{"className": "Score", "fields": map[string]any{
		"points": map[string]any{"type": "Number"}, "player": map[string]any{"type": "Pointer", "targetClass": "_User"}}}, m)
	user := srv.Do(t, "POST", "/users", map[string]any{"username": "ann", "password": "pw"}, servertest.App()).Map()
	s := connect(t, srv, map[string]string{"X-Parse-Application-Id": servertest.AppID, "X-Parse-Session-Token": user["sessionToken"].(string)})
	where := map[string]any{"where": map[string]any{"points": map[string]any{"greaterThan": 10}}}
	for _, ev := range []string{"Created", "Updated", "Entered", "Left", "Deleted"} {
		s.subscribe(ev, `subscription($where: ScoreWhereInput) { score`+ev+`(where: $where) { objectId points player { username } } }`, where)
	}
	// Subscriptions start in order: a query over the same socket answered
	// after them proves they are all listening.
	s.subscribe("ready", `{ health }`, nil)
	if m := s.next(); m.Get("id").String() != "ready" || m.Get("payload.data.health").Raw != "true" {
		t.Fatalf("query over the socket: %s", m.Raw)
	}
	if m := s.next(); m.Get("id").String() != "ready" || m.Get("type").String() != "complete" {
		t.Fatalf("want complete, got %s", m.Raw)
	}
	pointer := map[string]any{"__type": "Pointer", "className": "_User", "objectId": user["objectId"]}
	low := srv.Do(t, "POST", "/classes/Score", map[string]any{"points": 5, "player": pointer}, m).Map()["objectId"].(string)
	high := srv.Do(t, "POST", "/classes/Score", map[string]any{"points": 20, "player": pointer}, m).Map()["objectId"].(string)
	steps := []struct {
		name         string
		method, path string
		body         any
		id           string // the subscription that must hear of it
		object       string
		points       string
	}{
		{"a create matching the where", "", "", nil, "Created", high, "20"},
		{"an update inside", "PUT", "/classes/Score/" + high, map[string]any{"points": 30}, "Updated", high, "30"},
		{"an update that enters", "PUT", "/classes/Score/" + low, map[string]any{"points": 15}, "Entered", low, "15"},
		{"an update that leaves", "PUT", "/classes/Score/" + low, map[string]any{"points": 1}, "Left", low, "1"},
		{"a delete", "DELETE", "/classes/Score/" + high, nil, "Deleted", high, "30"},
	}
	for _, st := range steps {
		if st.method != "" {
			srv.Do(t, st.method, st.path, st.body, m)
		}
		msg := s.next()
		if msg.Get("type").String() != "next" || msg.Get("id").String() != st.id {
			t.Fatalf("%s: got %s, want a next for %s", st.name, msg.Raw, st.id)
		}
		data := msg.Get("payload.data.score" + st.id)
		if data.Get("objectId").String() != st.object || data.Get("points").Raw != st.points || data.Get("player.username").String() != "ann" {
			t.Errorf("%s: %s", st.name, msg.Raw)
		}
	}
	// complete stops one subscription: a later create reaches nobody, which
	// the same object's next event (kept in order after it) shows.
	s.send(map[string]any{"id": "Created", "type": "complete"})
	s.subscribe("sentinel", `{ health }`, nil)
	s.next()
	s.next()
	late := srv.Do(t, "POST", "/classes/Score", map[string]any{"points": 50}, m).Map()["objectId"].(string)
	srv.Do(t, "PUT", "/classes/Score/"+late, map[string]any{"points": 60}, m)
	if msg := s.next(); msg.Get("id").String() != "Updated" {
		t.Errorf("after complete: %s", msg.Raw)
	}
}

// TestSubscriptionACL: a subscriber receives no event about an object it
// may not read, as with LiveQuery; the master key receives every event.
// The proof of absence is a later event of the same object (LiveQuery
// keeps one object's events in order): the note turned public enters.
func TestSubscriptionACL(t *testing.T) {
	srv := startLive(t, "Note")
	app, m := servertest.App(), servertest.Master()
	ann := srv.Do(t, "POST", "/users", map[string]any{"username": "ann", "password": "pw"}, app).Map()
	bob := srv.Do(t, "POST", "/users", map[string]any{"username": "bob", "password": "pw"}, app).Map()
	srv.Do(t, "POST", "/schemas/Note", map[string]any{"className": "Note", "fields": map[string]any{"text": map[string]any{"type": "String"}}}, m)
	sockets := map[string]*gqlSocket{
		"bob":    connect(t, srv, with(app, "X-Parse-Session-Token", bob["sessionToken"].(string))),
		"master": connect(t, srv, m),
	}
	for _, s := range sockets {
		s.subscribe("created", `subscription { noteCreated { text } }`, nil)
		s.subscribe("entered", `subscription { noteEntered { text } }`, nil)
		s.subscribe("updated", `subscription { noteUpdated { text } }`, nil)
		s.subscribe("ready", `{ health }`, nil)
		s.next()
		s.next()
	}
	annOnly := map[string]any{ann["objectId"].(string): map[string]any{"read": true, "write": true}}
	id := srv.Do(t, "POST", "/classes/Note", map[string]any{"text": "private", "ACL": annOnly}, m).Map()["objectId"].(string)
	srv.Do(t, "PUT", "/classes/Note/"+id, map[string]any{"text": "public", "ACL": map[string]any{"*": map[string]any{"read": true}}}, m)
	want := map[string][]string{"bob": {"entered:public"}, "master": {"created:private", "updated:public"}}
	for who, events := range want {
		for _, ev := range events {
			msg := sockets[who].next()
			id := msg.Get("id").String()
			if got := id + ":" + msg.Get("payload.data.note"+strings.ToUpper(id[:1])+id[1:]+".text").String(); got != ev {
				t.Errorf("%s received %s, want %s", who, got, ev)
			}
		}
	}
}

// TestSocketProtocol: graphql-transport-ws's rules, each broken once.
func TestSocketProtocol(t *testing.T) {
	srv := startLive(t, "Thing")
	srv.Do(t, "POST", "/schemas/Thing", map[string]any{"className": "Thing", "fields": map[string]any{"n": map[string]any{"type": "Number"}}}, servertest.Master())
	app := map[string]any{"headers": servertest.App()}
	cases := []struct {
		name     string
		messages []any
		code     int
		reason   string
	}{
		{"subscribe before connection_init", []any{map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{"query": "{ health }"}}}, 4401, "Unauthorized"},
		{"two connection_inits", []any{map[string]any{"type": "connection_init", "payload": app}, map[string]any{"type": "connection_init"}}, 4429, "Too many initialisation requests"},
		{"not JSON", []any{"nonsense"}, 4400, "Invalid message received"},
		{"an unknown type", []any{map[string]any{"type": "start"}}, 4400, "Invalid message received"},
		{"a wrong application id", []any{map[string]any{"type": "connection_init", "payload": map[string]any{"X-Parse-Application-Id": "other"}}}, 4403, "Forbidden"},
		{"an invalid session token", []any{map[string]any{"type": "connection_init", "payload": map[string]any{"headers": map[string]any{
			"X-Parse-Application-Id": servertest.AppID, "X-Parse-Session-Token": "r:nope"}}}}, 4403, "Forbidden: Invalid session token"},
		{"a reused id", []any{map[string]any{"type": "connection_init", "payload": app},
			map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{"query": "subscription { thingCreated { n } }"}},
			map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{"query": "subscription { thingCreated { n } }"}}}, 4409, "Subscriber for 1 already exists"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := dial(t, srv, "graphql-transport-ws")
			for _, msg := range c.messages {
				if text, ok := msg.(string); ok {
					s.conn.WriteMessage(websocket.TextMessage, []byte(text))
					continue
				}
				s.send(msg)
			}
			if code, reason := s.closed(); code != c.code || reason != c.reason {
				t.Errorf("closed with %d %q, want %d %q", code, reason, c.code, c.reason)
			}
		})
	}
	t.Run("another subprotocol", func(t *testing.T) {
		if code, _ := dial(t, srv, "graphql-ws").closed(); code != 4406 {
			t.Errorf("closed with %d, want 4406", code)
		}
	})
	t.Run("ping, errors, and a class LiveQuery does not publish", func(t *testing.T) {
		s := connect(t, srv, servertest.App())
		s.send(map[string]any{"type": "ping"})
		if m := s.next(); m.Get("type").String() != "pong" {
			t.Errorf("ping answered %s", m.Raw)
		}
		s.subscribe("bad", `subscription { thingCreated { nope } }`, nil)
		if m := s.next(); m.Get("type").String() != "error" || m.Get("id").String() != "bad" || m.Get("payload.0.extensions.code").Int() != 102 {
			t.Errorf("invalid subscription answered %s", m.Raw)
		}
		s.subscribe("user", `subscription { userCreated { username } }`, nil)
		if m := s.next(); m.Get("type").String() != "error" || !strings.Contains(m.Get("payload.0.message").String(), "userCreated") {
			t.Errorf("a class without LiveQuery answered %s", m.Raw)
		}
	})
	t.Run("over HTTP, a subscription is refused", func(t *testing.T) {
		r := post(t, srv, servertest.App(), `subscription { thingCreated { n } }`, nil)
		if r.status != http.StatusOK || r.get("errors.0.extensions.code").Int() != 102 {
			t.Errorf("%d %s", r.status, r.body)
		}
	})
}

// TestSubscriptionSessionRevoked: once its session is logged out, a
// subscription ends with an error carrying 209, as LiveQuery's does.
func TestSubscriptionSessionRevoked(t *testing.T) {
	srv := startLive(t, "Ping")
	app := servertest.App()
	srv.Do(t, "POST", "/schemas/Ping", map[string]any{"className": "Ping", "fields": map[string]any{"n": map[string]any{"type": "Number"}}}, servertest.Master())
	user := srv.Do(t, "POST", "/users", map[string]any{"username": "ann", "password": "pw"}, app).Map()
	session := with(app, "X-Parse-Session-Token", user["sessionToken"].(string))
	s := connect(t, srv, session)
	s.subscribe("1", `subscription { pingCreated { n } }`, nil)
	s.subscribe("ready", `{ health }`, nil)
	s.next()
	s.next()
	srv.Do(t, "POST", "/classes/Ping", map[string]any{"n": 1}, app)
	if m := s.next(); m.Get("payload.data.pingCreated.n").Int() != 1 {
		t.Fatalf("before the logout: %s", m.Raw)
	}
	if res := srv.Do(t, "POST", "/logout", nil, session); res.Status != 200 {
		t.Fatalf("logout: %d %s", res.Status, res.Body)
	}
	srv.Do(t, "POST", "/classes/Ping", map[string]any{"n": 2}, app)
	if m := s.next(); m.Get("type").String() != "error" || m.Get("id").String() != "1" || m.Get("payload.0.extensions.code").Int() != 209 {
		t.Errorf("after the logout: %s", m.Raw)
	}
}

// TestSocketsCloseAtShutdown: stopping the server closes its GraphQL
// sockets with 1001 (they are hijacked: HTTP shutdown alone would leave
// them open).
func TestSocketsCloseAtShutdown(t *testing.T) {
	srv := startLive(t, "Thing")
	s := connect(t, srv, servertest.App())
	srv.Restart(t)
	if code, _ := s.closed(); code != websocket.CloseGoingAway {
		t.Errorf("closed with %d, want 1001", code)
	}
}

// TestSubscriptionReadsWithCurrentRoles: an event's selection reads as the
// session is when the event comes, so a role granted after
// connection_init opens what it grants.
func TestSubscriptionReadsWithCurrentRoles(t *testing.T) {
	srv := startLive(t, "Card")
	app, m := servertest.App(), servertest.Master()
	carol := srv.Do(t, "POST", "/users", map[string]any{"username": "carol", "password": "pw"}, app).Map()
	vault := srv.Do(t, "POST", "/classes/Vault", map[string]any{"code": "42", "ACL": map[string]any{"role:Staff": map[string]any{"read": true}}}, m).Map()["objectId"].(string)
	link := map[string]any{"__type": "Pointer", "className": "Vault", "objectId": vault}
	// The class by its schema: an object made now could still be on its
	// way to LiveQuery when the subscription starts.
	srv.Do(t, "POST", "/schemas/Card", map[string]any{"className": "Card", "fields": map[string]any{
		"n": map[string]any{"type": "Number"}, "vault": map[string]any{"type": "Pointer", "targetClass": "Vault"}}}, m)
	s := connect(t, srv, with(app, "X-Parse-Session-Token", carol["sessionToken"].(string)))
	s.subscribe("1", `subscription { cardCreated { n vault { code } } }`, nil)
	s.subscribe("ready", `{ health }`, nil)
	s.next()
	s.next()
	srv.Do(t, "POST", "/classes/Card", map[string]any{"n": 1, "vault": link}, m)
	if got := s.next().Get("payload.data.cardCreated").Raw; got != `{"n":1,"vault":null}` {
		t.Errorf("before the role: %s", got)
	}
	srv.Do(t, "POST", "/roles", map[string]any{"name": "Staff", "ACL": map[string]any{"*": map[string]any{"read": true}},
		"users": relationAdd("_User", carol["objectId"].(string))}, m)
	srv.Do(t, "POST", "/classes/Card", map[string]any{"n": 2, "vault": link}, m)
	if got := s.next().Get("payload.data.cardCreated").Raw; got != `{"n":2,"vault":{"code":"42"}}` {
		t.Errorf("after the role: %s", got)
	}
}
