package live

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fasthttp/websocket"
	"github.com/valyala/fasthttp"

	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
)

// openAuthority lets everyone read everything; tokens are user ids.
type openAuthority struct{}

func (openAuthority) Authenticate(_ context.Context, token string) (Identity, error) {
	if token == "bad" {
		return Identity{}, schema.Errorf(schema.CodeInvalidSessionToken, "Invalid session token")
	}
	return Identity{UserID: token}, nil
}
func (openAuthority) ReadFilter(Identity, string, string, map[string]any) (service.ReadFilter, error) {
	return service.ReadFilter{}, nil
}
func (openAuthority) FieldType(string, string) (schema.Type, bool) { return "", false }

// serveBare runs a Server on its own fasthttp listener.
func serveBare(t testing.TB, opts Options) (*Server, string) {
	t.Helper()
	if opts.Authority == nil {
		opts.Authority = openAuthority{}
	}
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &fasthttp.Server{Handler: s.Handler}
	go hs.Serve(ln)
	t.Cleanup(func() {
		s.Close()
		hs.Shutdown()
	})
	return s, "ws://" + ln.Addr().String() + "/"
}

func rawDial(t testing.TB, url string) *websocket.Conn {
	t.Helper()
	conn, _, err := websocket.DefaultDialer.Dial(url, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func rawRoundTrip(t testing.TB, conn *websocket.Conn, msg, wantOp string) {
	t.Helper()
	if err := conn.WriteMessage(websocket.TextMessage, []byte(msg)); err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, data, err := conn.ReadMessage()
	if err != nil || !strings.Contains(string(data), `"op":"`+wantOp+`"`) {
		t.Fatalf("reply %s, %v; want %s", data, err, wantOp)
	}
}

// A client that stops reading loses messages once its queue is full and
// is then disconnected with 1013; a fast client on the same server gets
// every event meanwhile.
func TestSlowClientIsDroppedThenDisconnected(t *testing.T) {
	s, url := serveBare(t, Options{SendQueue: 256, Dispatchers: 1})
	slow, fast := rawDial(t, url), rawDial(t, url)
	for _, c := range []*websocket.Conn{slow, fast} {
		rawRoundTrip(t, c, `{"op":"connect","applicationId":"x"}`, "connected")
		rawRoundTrip(t, c, `{"op":"subscribe","requestId":1,"query":{"className":"Big","where":{}}}`, "subscribed")
	}
	received := make(chan int)
	var read atomic.Int64 // events the fast client has read
	go func() {
		n := 0
		for {
			fast.SetReadDeadline(time.Now().Add(10 * time.Second))
			if _, _, err := fast.ReadMessage(); err != nil {
				received <- n
				return
			}
			n++
			read.Store(int64(n))
			if n == 1000 {
				received <- n
				return
			}
		}
	}()
	payload := strings.Repeat("x", 64<<10) // fills the slow client's socket buffers quickly
	for i := 0; i < 1000; i++ {
		// The fast client stays within half its queue whatever the
		// machine's load: only the slow one may overflow.
		for deadline := time.Now().Add(10 * time.Second); int64(i)-read.Load() > 128 && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		s.Publish(Change{Class: "Big", Object: schema.Object{"objectId": "o", "className": "Big", "data": payload}})
	}
	if n := <-received; n != 1000 {
		t.Errorf("fast client got %d of 1000 events", n)
	}
	st := s.Stats()
	if st.Dropped == 0 || st.SlowClosed != 1 {
		t.Fatalf("stats %+v: want drops and one slow client closed", st)
	}
	// The slow client finds the events its socket held, then the end: the
	// 1013 close frame when it got through, else the connection's end.
	slow.SetReadDeadline(time.Now().Add(10 * time.Second))
	var err error
	n := 0
	for err == nil {
		_, _, err = slow.ReadMessage()
		n++
	}
	t.Logf("slow client: %d messages, then %v", n-1, err)
	var ce *websocket.CloseError
	if errors.As(err, &ce) && ce.Code != CloseSlowClient && ce.Code != websocket.CloseAbnormalClosure {
		t.Errorf("slow client ended with %v, want close %d", err, CloseSlowClient)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Errorf("slow client still connected after %d messages: %v", n, err)
	}
}

// A client that does not answer pings is disconnected after one interval.
func TestNoPongDisconnects(t *testing.T) {
	_, url := serveBare(t, Options{WebsocketTimeout: 100 * time.Millisecond})
	conn := rawDial(t, url)
	conn.SetPingHandler(func(string) error { return nil }) // never pong
	rawRoundTrip(t, conn, `{"op":"connect","applicationId":"x"}`, "connected")
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	start := time.Now()
	_, _, err := conn.ReadMessage()
	var ce *websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != CloseNoPong {
		t.Fatalf("got %v, want close %d", err, CloseNoPong)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v", d)
	}
	// A client that answers stays: a third ping means the server took the
	// answers to the first two, past the interval that ended the other.
	ok := rawDial(t, url)
	pings := make(chan struct{}, 3)
	ok.SetPingHandler(func(data string) error {
		select {
		case pings <- struct{}{}:
		default:
		}
		return ok.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(time.Second))
	})
	rawRoundTrip(t, ok, `{"op":"connect","applicationId":"x"}`, "connected")
	ended := make(chan error, 1)
	go func() {
		ok.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, _, err := ok.ReadMessage() // reading answers pings
		ended <- err
	}()
	for i := 0; i < 3; i++ {
		select {
		case <-pings:
		case err := <-ended:
			t.Fatalf("answering client ended after %d pings: %v", i, err)
		}
	}
}

func TestSessionCache(t *testing.T) {
	now := time.Unix(1000, 0)
	calls := 0
	auth := countingAuthority{calls: &calls, expires: now.Add(time.Hour)}
	c := newSessions(auth, time.Minute, func() time.Time { return now })
	for i := 0; i < 3; i++ {
		if id, err := c.get(context.Background(), "u1"); err != nil || id.UserID != "u1" {
			t.Fatal(id, err)
		}
	}
	if calls != 1 {
		t.Errorf("%d lookups, want 1 (cached)", calls)
	}
	c.forgetUser("u1")
	c.get(context.Background(), "u1")
	if calls != 2 {
		t.Errorf("%d lookups after forgetUser, want 2", calls)
	}
	now = now.Add(2 * time.Minute) // past cacheTimeout
	c.get(context.Background(), "u1")
	if calls != 3 {
		t.Errorf("%d lookups after the TTL, want 3", calls)
	}
	now = now.Add(2 * time.Hour) // past the session's own expiry, within a fresh TTL
	c.entries["u1"].fetched = now
	if _, err := c.get(context.Background(), "u1"); err != errSessionExpired {
		t.Errorf("expired session: %v", err)
	}
	if _, err := c.get(context.Background(), "bad"); err == nil {
		t.Error("bad token accepted")
	}
	c.get(context.Background(), "bad")
	if calls != 4 {
		t.Errorf("%d lookups, want invalid tokens cached too", calls)
	}
}

type countingAuthority struct {
	openAuthority
	calls   *int
	expires time.Time
}

func (a countingAuthority) Authenticate(ctx context.Context, token string) (Identity, error) {
	*a.calls++
	id, err := a.openAuthority.Authenticate(ctx, token)
	id.Expires = a.expires
	return id, err
}

func TestParseRequest(t *testing.T) {
	r, err := parseRequest([]byte(`{"op":"subscribe","requestId":3,"sessionToken":"t","query":{"className":"A","where":{"x":1},"fields":["a","b"],"watch":["x"]}}`))
	if err != nil || r.className != "A" || r.requestID != "3" || r.sessionToken != "t" || len(r.fields) != 2 || r.watch[0] != "x" {
		t.Fatalf("%+v %v", r, err)
	}
	r, err = parseRequest([]byte(`{"op":"connect","applicationId":"a","installationId":"i","javascriptKey":"j"}`))
	if err != nil || r.installationID != "i" || r.keys["javascriptKey"] != "j" {
		t.Fatalf("%+v %v", r, err)
	}
	for raw, want := range map[string]string{
		`{"op":"connect"}`: "Missing required property: applicationId",
		`{"op":"connect","applicationId":"a","sessionToken":5}`:                                   "Invalid type: number (expected string)",
		`{"op":"subscribe","requestId":1,"query":{"className":"A"}}`:                              "Missing required property: where",
		`{"op":"subscribe","requestId":1,"query":{"className":"A","where":{},"watch":["a","a"]}}`: "Invalid watch: want at least one unique string",
		`{"op":"subscribe","requestId":1,"query":{"className":"A","where":{},"limit":1}}`:         "Additional properties not allowed",
		`{"op":"unsubscribe","requestId":1,"query":{}}`:                                           "Additional properties not allowed",
		`"text"`: "Invalid type: string (expected object)",
	} {
		if _, err := parseRequest([]byte(raw)); err == nil || err.msg != want {
			t.Errorf("%s: %v, want %q", raw, err, want)
		}
	}
}

// FuzzParseRequest: no client message makes the decoder panic, and what
// it accepts is a complete request.
func FuzzParseRequest(f *testing.F) {
	for _, seed := range []string{
		`{"op":"connect","applicationId":"a","sessionToken":"t","installationId":"i"}`,
		`{"op":"subscribe","requestId":1,"query":{"className":"A","where":{"a":{"$in":[1,2]}},"keys":["a"],"watch":["b"]}}`,
		`{"op":"update","requestId":1e300,"query":{"className":"A","where":{},"fields":["x"]}}`,
		`{"op":"unsubscribe","requestId":-0}`,
		`{"op":"subscribe","requestId":1,"query":{"className":"A","where":[]}}`,
		`[]`, `null`, `{"op":null}`, `{`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := parseRequest(data)
		if (r == nil) == (err == nil) {
			t.Fatalf("request %v, error %v", r, err)
		}
		if r == nil {
			if err.code == 0 || err.msg == "" {
				t.Fatalf("error without code or text: %+v", err)
			}
			return
		}
		switch r.op {
		case "connect":
			if r.keys == nil {
				t.Fatal("connect without keys map")
			}
		case "subscribe", "update":
			if r.where == nil {
				t.Fatalf("subscribe without where: %+v", r)
			}
			fallthrough
		case "unsubscribe":
			if r.requestID == "" {
				t.Fatal("no requestId")
			}
		default:
			t.Fatalf("op %q accepted", r.op)
		}
	})
}
