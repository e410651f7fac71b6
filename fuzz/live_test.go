package fuzz

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/fasthttp/websocket"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server/servertest"
)

// sentinelID is the requestId of the unsubscribe sent after the fuzzed
// frames, with a property the protocol does not have: its error reply,
// which names the request whether or not the client is connected, proves
// that every frame before it was handled.
const sentinelID = 987654321

const liveWait = 5 * time.Second

// liveConn is a raw LiveQuery connection and its incoming frames.
type liveConn struct {
	conn   *websocket.Conn
	frames chan []byte // closed when the connection ends
	err    error       // why it ended, set before frames is closed
}

func dialLive(t *testing.T, srv *servertest.Server) *liveConn {
	t.Helper()
	conn, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	c := &liveConn{conn: conn, frames: make(chan []byte, 256)}
	go func() {
		defer close(c.frames)
		for {
			_, data, err := conn.ReadMessage()
			if err != nil {
				c.err = err
				return
			}
			c.frames <- data
		}
	}()
	return c
}

// await reads frames until one satisfies stop (true) or the connection
// ends (false); every frame must be a JSON object with an op, and an
// error frame must carry a numeric code.
func (c *liveConn) await(t *testing.T, what string, stop func(map[string]any) bool) bool {
	t.Helper()
	deadline := time.After(liveWait)
	for {
		select {
		case data, ok := <-c.frames:
			if !ok {
				// The server may end a connection, but with a close frame.
				var ce *websocket.CloseError
				if !errors.As(c.err, &ce) {
					t.Fatalf("%s: the connection ended without a close frame: %v", what, c.err)
				}
				// 1011 is how the server ends a connection after a panic.
				if ce.Code == websocket.CloseInternalServerErr {
					t.Fatalf("%s: closed with %v", what, ce)
				}
				return false
			}
			var m map[string]any
			if err := json.Unmarshal(data, &m); err != nil {
				t.Fatalf("%s: a frame that is not a JSON object: %q", what, data)
			}
			if _, ok := m["op"].(string); !ok {
				t.Fatalf("%s: a frame without op: %s", what, data)
			}
			if _, ok := m["code"].(float64); m["op"] == "error" && !ok {
				t.Fatalf("%s: an error frame without a numeric code: %s", what, data)
			}
			if stop(m) {
				return true
			}
		case <-deadline:
			t.Fatalf("%s: no answer within %v", what, liveWait)
		}
	}
}

// liveFrames are the frames an input stands for: its raw lines, or
// random protocol messages seeded by it.
func liveFrames(mode uint8, input []byte) [][]byte {
	var frames [][]byte
	if mode&1 == 0 {
		frames = bytes.SplitN(input, []byte("\n"), 8)
	} else {
		h := fnv.New64a()
		h.Write(input)
		r := rand.New(rand.NewSource(int64(h.Sum64())))
		for i := 1 + r.Intn(6); i > 0; i-- {
			b, _ := json.Marshal(randomLiveMessage(r))
			frames = append(frames, b)
		}
	}
	if mode&2 != 0 {
		connect := fmt.Sprintf(`{"op":"connect","applicationId":%q}`, servertest.AppID)
		frames = append([][]byte{[]byte(connect)}, frames...)
	}
	return frames
}

// randomJSON is any JSON value, small.
func randomJSON(r *rand.Rand, depth int) any {
	switch r.Intn(8) {
	case 0:
		return nil
	case 1:
		return r.Intn(2) == 0
	case 2:
		return []any{-1.0, 0.0, 1.0, 1.5, 1e300, 2e9}[r.Intn(6)]
	case 3:
		return []string{"", "Fuzz", "connect", "$gt", "x", servertest.AppID, strings.Repeat("a", 300)}[r.Intn(7)]
	case 4, 5:
		if depth < 3 {
			var a []any
			for i := r.Intn(3); i > 0; i-- {
				a = append(a, randomJSON(r, depth+1))
			}
			return a
		}
	}
	if depth >= 3 {
		return "leaf"
	}
	m := map[string]any{}
	for i := r.Intn(3); i > 0; i-- {
		m[[]string{"n", "s", "$gt", "$in", "$or", "__type", "className", "where"}[r.Intn(8)]] = randomJSON(r, depth+1)
	}
	return m
}

// randomLiveMessage is a protocol message with random fields: mostly
// well-formed, now and then with a wrong type or an extra property.
func randomLiveMessage(r *rand.Rand) map[string]any {
	ops := []string{"connect", "subscribe", "update", "unsubscribe", "ping", ""}
	m := map[string]any{"op": ops[r.Intn(len(ops))]}
	wheres := []any{
		map[string]any{}, map[string]any{"n": map[string]any{"$gt": 1.0}}, map[string]any{"s": map[string]any{"$regex": "("}},
		map[string]any{"$or": []any{map[string]any{"n": 1.0}, map[string]any{"s": "x"}}},
		map[string]any{"loc": map[string]any{"$nearSphere": map[string]any{"__type": "GeoPoint", "latitude": 1.0, "longitude": 2.0}}},
	}
	fields := map[string]func() any{
		"applicationId":  func() any { return servertest.AppID },
		"requestId":      func() any { return float64(r.Intn(4)) },
		"sessionToken":   func() any { return "r:nope" },
		"installationId": func() any { return "inst" },
		"masterKey":      func() any { return servertest.MasterKey },
		"query": func() any {
			q := map[string]any{"className": []string{"Fuzz", "Other", "_User"}[r.Intn(3)], "where": wheres[r.Intn(len(wheres))]}
			if r.Intn(3) == 0 {
				q[[]string{"keys", "fields", "watch", "limit"}[r.Intn(4)]] = randomJSON(r, 1)
			}
			return q
		},
	}
	for k, v := range fields {
		if r.Intn(2) == 0 {
			m[k] = v()
		}
		if r.Intn(10) == 0 {
			m[k] = randomJSON(r, 0)
		}
	}
	return m
}

// FuzzLiveFrames sends fuzzed frames on a LiveQuery connection: every
// reply is a well-formed frame, the connection either answers the
// sentinel or closes, and a new client can still connect.
func FuzzLiveFrames(f *testing.F) {
	f.Add(uint8(2), []byte(`{"op":"subscribe","requestId":1,"query":{"className":"Fuzz","where":{"n":{"$gt":1}}}}`))
	f.Add(uint8(0), []byte(`{"op":"connect","applicationId":"wrong"}`))
	f.Add(uint8(2), []byte(`{"op":"subscribe","requestId":1,"query":{"className":"Fuzz","where":{}}}`+"\n"+`{"op":"unsubscribe","requestId":1}`))
	f.Add(uint8(2), []byte(`{"op":"update","requestId":1,"query":{"className":"Fuzz","where":{"s":{"$regex":"["}}}}`))
	f.Add(uint8(0), []byte("not json\n[]\n{}\nnull"))
	f.Add(uint8(3), []byte("seed"))
	f.Add(uint8(1), []byte("other seed"))
	srv := startLive(f)
	f.Fuzz(func(t *testing.T, mode uint8, input []byte) { liveExercise(t, srv, mode, input) })
}

// TestLiveFramesStructured sends random protocol messages, connected or
// not, with and without a write that raises events: the fuzz target's
// checks, as a test.
func TestLiveFramesStructured(t *testing.T) {
	srv := startLive(t)
	for i := 0; i < 200; i++ {
		liveExercise(t, srv, uint8(1|i%8), []byte(fmt.Sprint(i)))
	}
}

func startLive(tb testing.TB) *servertest.Server {
	return servertest.Start(tb, func(o *config.Options) { o.LiveQuery.ClassNames = []string{"Fuzz"} })
}

// liveExercise is one fuzz execution: the input's frames on a new
// connection, the sentinel, then a fresh connect.
func liveExercise(t *testing.T, srv *servertest.Server, mode uint8, input []byte) {
	c := dialLive(t, srv)
	defer c.conn.Close()
	frames := liveFrames(mode, input)
	sentinel := fmt.Sprintf(`{"op":"unsubscribe","requestId":%d,"sentinel":true}`, sentinelID)
	for _, fr := range append(frames, []byte(sentinel)) {
		if c.conn.WriteMessage(websocket.TextMessage, fr) != nil {
			break // closed by the server: await sees the end
		}
	}
	if mode&4 != 0 {
		res := srv.Do(t, "POST", "/classes/Fuzz", map[string]any{"n": 2, "s": "x"}, servertest.Master())
		checkReply(t, "create", res.Status, res.Body)
	}
	c.await(t, fmt.Sprintf("frames %q", frames), func(m map[string]any) bool {
		return m["op"] == "error" && m["requestId"] == float64(sentinelID)
	})
	fresh := dialLive(t, srv)
	defer fresh.conn.Close()
	connect := fmt.Sprintf(`{"op":"connect","applicationId":%q}`, servertest.AppID)
	if err := fresh.conn.WriteMessage(websocket.TextMessage, []byte(connect)); err != nil {
		t.Fatalf("after %q: write a connect: %v", frames, err)
	}
	if !fresh.await(t, "a fresh connect", func(m map[string]any) bool { return m["op"] == "connected" }) {
		t.Fatalf("after %q: a fresh connect was closed", frames)
	}
}
