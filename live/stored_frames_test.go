package live_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"testing"
	"time"

	"github.com/fasthttp/websocket"

	"github.com/quarrydata/quarry/server/servertest"
)

// rawClient reads LiveQuery frames as bytes, to see how an event's object
// was made, not only what it says.
type rawClient struct {
	t    *testing.T
	conn *websocket.Conn
}

func dialRaw(t *testing.T, url string, connect map[string]any) *rawClient {
	t.Helper()
	conn, _, err := websocket.DefaultDialer.Dial(url, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	c := &rawClient{t, conn}
	msg := map[string]any{"op": "connect", "applicationId": servertest.AppID}
	for k, v := range connect {
		msg[k] = v
	}
	c.send(msg)
	c.expect("connected")
	return c
}

func (c *rawClient) send(v any) {
	c.t.Helper()
	if err := c.conn.WriteJSON(v); err != nil {
		c.t.Fatal(err)
	}
}

// expect reads the next frame, checks its op, and returns it decoded and
// as sent.
func (c *rawClient) expect(op string) (map[string]any, []byte) {
	c.t.Helper()
	c.conn.SetReadDeadline(time.Now().Add(waitFor))
	_, data, err := c.conn.ReadMessage()
	if err != nil {
		c.t.Fatalf("waiting for %s: %v", op, err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil || m["op"] != op {
		c.t.Fatalf("got %s, want op %q", data, op)
	}
	return m, data
}

func (c *rawClient) subscribe(requestID int, class string, keys []any) {
	c.t.Helper()
	query := map[string]any{"className": class, "where": map[string]any{}}
	if keys != nil {
		query["keys"] = keys
	}
	c.send(map[string]any{"op": "subscribe", "requestId": requestID, "query": query})
	c.expect("subscribed")
}

// TestEventFramesFromStoredBytes: an event whose subscriber sees the whole
// object sends the writer's stored bytes (className and __type in front,
// where an encoding of the map would sort ACL first); every such object
// says exactly what a GET says of that version, after each update too;
// a subscription with keys still gets its projection, and objects whose
// published form differs from the stored one (a Relation field to show,
// internal keys to strip) are encoded as before.
func TestEventFramesFromStoredBytes(t *testing.T) {
	s := startLive(t, "Note", "_User")
	c := dialRaw(t, wsURL(s), nil)
	c.subscribe(1, "Note", nil)
	c.subscribe(2, "Note", []any{"text"})
	read := map[string]any{"*": map[string]any{"read": true, "write": true}}
	id := call(t, s, "POST", "/classes/Note", map[string]any{"text": "a", "n": 1, "ACL": read}, servertest.App())["objectId"].(string)
	// published is what a GET says of the object now, as LiveQuery shows it.
	published := func() map[string]any {
		o := call(t, s, "GET", "/classes/Note/"+id, nil, servertest.Master())
		o["className"], o["__type"] = "Note", "Object"
		return o
	}
	const spliced = `{"__type":"Object","className":"Note","ACL"`
	var previous map[string]any
	steps := []struct {
		name    string
		op      string
		write   func()
		stored  bool // the whole object comes from the stored bytes
		wantKey string
	}{
		{"create", "create", func() {}, true, "text"},
		{"update", "update", func() { call(t, s, "PUT", "/classes/Note/"+id, map[string]any{"text": "b"}, servertest.App()) }, true, "text"},
		{"update again", "update", func() { call(t, s, "PUT", "/classes/Note/"+id, map[string]any{"text": "c", "n": 2}, servertest.App()) }, true, "n"},
		{"a Relation field to show", "update", func() {
			call(t, s, "PUT", "/classes/Note/"+id, map[string]any{"tags": map[string]any{"__op": "AddRelation", "objects": []any{ptr("Note", id)}}}, servertest.App())
		}, false, "tags"},
	}
	for _, st := range steps {
		st.write()
		want := published()
		for _, req := range []float64{1, 2} {
			m, data := c.expect(st.op)
			obj, _ := m["object"].(map[string]any)
			if m["requestId"] != req {
				t.Fatalf("%s: event for %v, want %v: %s", st.name, m["requestId"], req, data)
			}
			if req == 2 {
				if got := fmt.Sprint(sortStrings(keys(obj))); got != "[ACL __type className createdAt objectId text updatedAt]" {
					t.Errorf("%s: the keys projection sent %s", st.name, got)
				}
				continue
			}
			if !reflect.DeepEqual(obj, want) {
				t.Errorf("%s: event object %v, want what GET says: %v", st.name, obj, want)
			}
			wantOriginal := previous
			if st.wantKey == "tags" {
				// Shown under the schema of the moment, which has tags now.
				wantOriginal = maps.Clone(previous)
				wantOriginal["tags"] = want["tags"]
			}
			if st.op == "update" && !reflect.DeepEqual(m["original"], wantOriginal) {
				t.Errorf("%s: original %v, want the version before: %v", st.name, m["original"], wantOriginal)
			}
			if _, ok := obj[st.wantKey]; !ok {
				t.Errorf("%s: the object lacks %s: %v", st.name, st.wantKey, obj)
			}
			if got := bytes.Contains(data, []byte(`"object":`+spliced)); got != st.stored {
				t.Errorf("%s: object from the stored bytes %v, want %v: %s", st.name, got, st.stored, data)
			}
			if got := bytes.Contains(data, []byte(`"original":`+spliced)); st.op == "update" && got != st.stored {
				t.Errorf("%s: original from the stored bytes %v, want %v: %s", st.name, got, st.stored, data)
			}
		}
		previous = want
	}

	// The class has a Relation field now: a delete is encoded from the map.
	call(t, s, "DELETE", "/classes/Note/"+id, nil, servertest.App())
	for range 2 {
		if m, data := c.expect("delete"); m["requestId"] == float64(1) && !reflect.DeepEqual(m["object"], previous) {
			t.Errorf("delete: object %v, want the last version %v (%s)", m["object"], previous, data)
		}
	}

	// A user's stored object holds its password hash: never sent.
	master := dialRaw(t, wsURL(s), map[string]any{"masterKey": servertest.MasterKey})
	master.subscribe(1, "_User", nil)
	signUp(t, s, "ann")
	m, data := master.expect("create")
	if obj, _ := m["object"].(map[string]any); obj["username"] != "ann" || bytes.Contains(data, []byte("_hashed_password")) || bytes.Contains(data, []byte("pw-ann")) {
		t.Errorf("a user's create event: %s", data)
	}
}

func keys(o map[string]any) []string {
	var ks []string
	for k := range o {
		ks = append(ks, k)
	}
	return ks
}
