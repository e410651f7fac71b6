package live_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/fasthttp/websocket"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server/servertest"
)

// startLive runs a server with LiveQuery on for classes.
func startLive(t testing.TB, classes ...string) *servertest.Server {
	t.Helper()
	return servertest.Start(t, func(o *config.Options) { o.LiveQuery.ClassNames = classes })
}

// call runs a REST request and fails unless it succeeds.
func call(t testing.TB, s *servertest.Server, method, path string, body any, headers map[string]string) map[string]any {
	t.Helper()
	r := s.Do(t, method, path, body, headers)
	if r.Status >= 300 {
		t.Fatalf("%s %s: HTTP %d %s", method, path, r.Status, r.Body)
	}
	return r.Map()
}

func asUser(token string) map[string]string {
	h := servertest.App()
	h["X-Parse-Session-Token"] = token
	return h
}

// signUp creates a user and returns its id and session token.
func signUp(t *testing.T, s *servertest.Server, name string) (string, string) {
	t.Helper()
	u := call(t, s, "POST", "/users", map[string]any{"username": name, "password": "pw-" + name, "email": name + "@example.com"}, servertest.App())
	return u["objectId"].(string), u["sessionToken"].(string)
}

func ptr(class, id string) map[string]any {
	return map[string]any{"__type": "Pointer", "className": class, "objectId": id}
}

var uuidV4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestEventsFollowTheQuery(t *testing.T) {
	s := startLive(t, "Message")
	c := dial(t, wsURL(s))
	connected := c.connect(map[string]any{"installationId": "inst-1"})
	if !uuidV4.MatchString(fmt.Sprint(connected["clientId"])) || connected["installationId"] != "inst-1" {
		t.Fatalf("connected = %v", connected)
	}
	c.subscribe(1, "Message", map[string]any{"room": "a"}, nil)

	// Writes outside the query send nothing; a create inside it sends create.
	call(t, s, "POST", "/classes/Message", map[string]any{"room": "b", "text": "elsewhere"}, servertest.App())
	m := call(t, s, "POST", "/classes/Message", map[string]any{"room": "a", "text": "hi"}, servertest.App())
	id := m["objectId"].(string)
	ev := c.expect("create")
	obj := ev["object"].(map[string]any)
	if ev["requestId"] != float64(1) || ev["clientId"] != connected["clientId"] || ev["installationId"] != "inst-1" ||
		ev["original"] != nil || obj["className"] != "Message" || obj["objectId"] != id || obj["text"] != "hi" || obj["createdAt"] == nil {
		t.Fatalf("create event %v", ev)
	}

	call(t, s, "PUT", "/classes/Message/"+id, map[string]any{"text": "hi!"}, servertest.App())
	obj, orig := c.event("update", 1)
	if obj["text"] != "hi!" || orig["text"] != "hi" {
		t.Fatalf("update object %v original %v", obj, orig)
	}
	call(t, s, "PUT", "/classes/Message/"+id, map[string]any{"room": "b"}, servertest.App())
	obj, orig = c.event("leave", 1)
	if obj["room"] != "b" || orig["room"] != "a" {
		t.Fatalf("leave object %v original %v", obj, orig)
	}
	call(t, s, "PUT", "/classes/Message/"+id, map[string]any{"text": "still b"}, servertest.App())
	call(t, s, "PUT", "/classes/Message/"+id, map[string]any{"room": "a"}, servertest.App())
	obj, orig = c.event("enter", 1)
	if obj["room"] != "a" || orig["room"] != "b" || orig["text"] != "still b" {
		t.Fatalf("enter object %v original %v", obj, orig)
	}
	call(t, s, "DELETE", "/classes/Message/"+id, nil, servertest.App())
	obj, orig = c.event("delete", 1)
	if obj["objectId"] != id || orig != nil {
		t.Fatalf("delete object %v original %v", obj, orig)
	}

	c.send(map[string]any{"op": "unsubscribe", "requestId": 1})
	if u := c.expect("unsubscribed"); u["requestId"] != float64(1) {
		t.Fatalf("unsubscribed %v", u)
	}
	// The dropped subscription hears nothing more: a second one hears the
	// same object enter next, and that is the first message.
	c.subscribe(2, "Message", map[string]any{"mark": "end"}, nil)
	after := call(t, s, "POST", "/classes/Message", map[string]any{"room": "a"}, servertest.App())
	call(t, s, "PUT", "/classes/Message/"+after["objectId"].(string), map[string]any{"mark": "end"}, servertest.App())
	c.expectEvents("enter 2")
}

func TestUpdateReplacesTheQuery(t *testing.T) {
	s := startLive(t, "Message")
	c := dial(t, wsURL(s)+"/any/path/at/all")
	c.connect(nil)
	c.subscribe(7, "Message", map[string]any{"room": "a"}, nil)
	c.send(map[string]any{"op": "update", "requestId": 7, "query": map[string]any{"className": "Message", "where": map[string]any{"room": "b"}}})
	c.expect("subscribed")
	// The old query hears nothing: an object created in room a is first
	// heard of when it moves to room b.
	m := call(t, s, "POST", "/classes/Message", map[string]any{"room": "a"}, servertest.App())
	call(t, s, "PUT", "/classes/Message/"+m["objectId"].(string), map[string]any{"room": "b"}, servertest.App())
	if obj, orig := c.event("enter", 7); obj["room"] != "b" || orig["room"] != "a" {
		t.Fatalf("enter for %v from %v", obj, orig)
	}
	call(t, s, "POST", "/classes/Message", map[string]any{"room": "b"}, servertest.App())
	if obj, _ := c.event("create", 7); obj["room"] != "b" {
		t.Fatalf("create for %v", obj)
	}
}

func TestSharedQueriesAndManyClients(t *testing.T) {
	s := startLive(t, "Message")
	var clients []*wsClient
	for i := 0; i < 5; i++ {
		c := dial(t, wsURL(s))
		c.connect(nil)
		c.subscribe(1, "Message", map[string]any{"room": "a"}, nil)
		c.subscribe(2, "Message", map[string]any{"n": map[string]any{"$gte": float64(i)}}, nil)
		c.subscribe(3, "Message", map[string]any{"mark": "end"}, nil) // the sentinel
		clients = append(clients, c)
	}
	m := call(t, s, "POST", "/classes/Message", map[string]any{"room": "a", "n": 2}, servertest.App())
	// The sentinel write's events follow the create's, so a create sent
	// twice or to a query the object misses would take their place.
	call(t, s, "PUT", "/classes/Message/"+m["objectId"].(string), map[string]any{"mark": "end"}, servertest.App())
	for i, c := range clients {
		want := []string{"create 1", "update 1", "enter 3"}
		if i <= 2 {
			want = append(want, "create 2", "update 2")
		}
		c.expectEvents(want...)
	}
	stats := s.Live.Stats()
	if stats.Subscriptions != 15 || stats.Queries != 7 || stats.Clients != 5 {
		t.Errorf("stats %+v", stats)
	}
}

func TestKeysAndWatch(t *testing.T) {
	s := startLive(t, "Score")
	c := dial(t, wsURL(s))
	c.connect(nil)
	c.subscribe(1, "Score", map[string]any{}, map[string]any{"keys": []any{"score"}})
	c.subscribe(2, "Score", map[string]any{}, map[string]any{"fields": []any{"name"}}) // the older name of keys
	c.subscribe(3, "Score", map[string]any{"score": map[string]any{"$lt": 100}}, map[string]any{"watch": []any{"score"}})
	m := call(t, s, "POST", "/classes/Score", map[string]any{"score": 1, "name": "ann", "extra": true}, servertest.App())
	id := m["objectId"].(string)
	seen := map[float64]map[string]any{}
	for i := 0; i < 3; i++ {
		ev := c.expect("create")
		seen[ev["requestId"].(float64)] = ev["object"].(map[string]any)
	}
	keysOf := func(o map[string]any) string {
		var ks []string
		for k := range o {
			ks = append(ks, k)
		}
		return fmt.Sprint(sortStrings(ks))
	}
	if got := keysOf(seen[1]); got != "[__type className createdAt objectId score updatedAt]" {
		t.Errorf("keys projection: %s", got)
	}
	if got := keysOf(seen[2]); got != "[__type className createdAt name objectId updatedAt]" {
		t.Errorf("fields projection: %s", got)
	}
	if _, ok := seen[3]["extra"]; !ok {
		t.Errorf("watch without keys trimmed the object: %v", seen[3])
	}
	// A change of an unwatched field: events for 1 and 2, none for 3.
	call(t, s, "PUT", "/classes/Score/"+id, map[string]any{"name": "bea"}, servertest.App())
	c.expectEvents("update 1", "update 2")
	// A watched field: all three. This write is the sentinel of the one
	// before: an update of 3 for the name would be among these, with score 1.
	call(t, s, "PUT", "/classes/Score/"+id, map[string]any{"score": 2}, servertest.App())
	for _, ev := range c.expectEvents("update 1", "update 2", "update 3") {
		if obj := ev["object"].(map[string]any); ev["requestId"] == float64(3) && obj["score"] != float64(2) {
			t.Errorf("watch of score sent %v", ev)
		}
	}
	// Leaving is always sent.
	call(t, s, "PUT", "/classes/Score/"+id, map[string]any{"score": 200}, servertest.App())
	ops := map[string]int{}
	for i := 0; i < 3; i++ {
		ops[fmt.Sprint(c.next()["op"])]++
	}
	if ops["update"] != 2 || ops["leave"] != 1 {
		t.Errorf("ops %v", ops)
	}
}

func sortStrings(s []string) []string {
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s
}

func TestBadInputKeepsTheConnection(t *testing.T) {
	s := startLive(t, "Message")
	c := dial(t, wsURL(s))
	usable := func(requestID int) {
		t.Helper()
		c.subscribe(requestID, "Message", map[string]any{}, nil)
	}
	// Before connect.
	c.send(map[string]any{"op": "subscribe", "requestId": 1, "query": map[string]any{"className": "Message", "where": map[string]any{}}})
	if e := c.expectError(2, "connect"); e["reconnect"] != true || e["requestId"] != nil {
		t.Errorf("subscribe before connect: %v", e)
	}
	c.sendRaw(`{"op":"unsubscribe","requestId":1}`)
	c.expectError(2, "connect")
	c.sendRaw(`{not json`)
	c.expectError(1, "Invalid JSON")
	c.connect(nil)

	for _, bad := range []struct {
		raw       string
		code      int
		contains  string
		requestID any
	}{
		{`{not json`, 1, "Invalid JSON at byte 2", nil},
		{`[1, 2]`, 1, "Invalid type: array (expected object)", nil},
		{`{"requestId": 1}`, 1, "Missing required property: op", nil},
		{`{"op": "fly"}`, 3, "unknown operation", nil},
		{`{"op": "subscribe", "query": {"className": "Message", "where": {}}}`, 1, "Missing required property: requestId", nil},
		{`{"op": "subscribe", "requestId": "1", "query": {"className": "Message", "where": {}}}`, 1, "Invalid type: string (expected number)", nil},
		// Unlike Parse Server, an error about one subscription names it, so
		// the SDK fails that subscription instead of reconnecting in a loop.
		{`{"op": "subscribe", "requestId": 1, "query": {"className": "Message", "where": {}}, "bogus": 1}`, 1, "Additional properties not allowed", float64(1)},
		{`{"op": "subscribe", "requestId": 1, "query": {"className": "Message", "where": {}, "keys": []}}`, 1, "Invalid keys", float64(1)},
		{`{"op": "subscribe", "requestId": 1, "query": {"className": "Nope", "where": {}}}`, 119, "not enabled for LiveQuery", float64(1)},
		{`{"op": "subscribe", "requestId": 1, "query": {"className": "1bad", "where": {}}}`, 103, "", float64(1)},
		{`{"op": "subscribe", "requestId": 1, "query": {"className": "Message", "where": {"a": {"$foo": 1}}}}`, 107, "$foo", float64(1)},
		{`{"op": "subscribe", "requestId": 1, "query": {"className": "Message", "where": {"$or": [{"p": {"$inQuery": {"className": "Post", "where": {}}}}, {"a": 1}]}}}`, 102, "$inQuery is not supported", float64(1)},
		{`{"op": "subscribe", "requestId": 1, "query": {"className": "Message", "where": {"$or": [{"$relatedTo": {"object": {"__type": "Pointer", "className": "Post", "objectId": "x"}, "key": "k"}}, {"a": 1}]}}}`, 102, "$relatedTo", float64(1)},
		{`{"op": "unsubscribe", "requestId": 99}`, 2, "requestId 99", nil},
		{`{"op": "subscribe", "requestId": 1, "sessionToken": "r:nope", "query": {"className": "Message", "where": {}}}`, 209, "Invalid session token", float64(1)},
	} {
		c.sendRaw(bad.raw)
		e := c.expectError(bad.code, bad.contains)
		if e["requestId"] != bad.requestID {
			t.Errorf("%s: requestId %v, want %v", bad.raw, e["requestId"], bad.requestID)
		}
		if reconnect := bad.code <= 4 && bad.requestID == nil; e["reconnect"] != reconnect {
			t.Errorf("%s: reconnect %v, want %v", bad.raw, e["reconnect"], reconnect)
		}
	}
	usable(1)

	// A message over MaxMessageBytes is dropped with an error; the
	// connection goes on.
	big := `{"op":"subscribe","requestId":2,"query":{"className":"Message","where":{"s":"` + strings.Repeat("x", 1<<20) + `"}}}`
	c.sendRaw(big)
	c.expectError(1, "larger than")
	usable(3)
	call(t, s, "POST", "/classes/Message", map[string]any{"x": 1}, servertest.App())
	c.expect("create")
	c.expect("create")

	// A frame over MaxFrameBytes ends the connection with 1009.
	c.sendRaw(strings.Repeat(" ", 16<<20+1))
	err := c.closed()
	var ce *websocket.CloseError
	if !asCloseError(err, &ce) || ce.Code != websocket.CloseMessageTooBig {
		t.Errorf("oversized frame: %v, want close 1009", err)
	}
}

func asCloseError(err error, ce **websocket.CloseError) bool {
	e, ok := err.(*websocket.CloseError)
	if ok {
		*ce = e
	}
	return ok
}

func TestKeyPairs(t *testing.T) {
	s := servertest.Start(t, func(o *config.Options) {
		o.LiveQuery.ClassNames = []string{"Message"}
		o.LiveQueryServer.KeyPairs.JavaScriptKey = "js-key"
	})
	c := dial(t, wsURL(s))
	c.send(map[string]any{"op": "connect", "applicationId": servertest.AppID, "javascriptKey": "wrong"})
	if e := c.expectError(4, "Key in request is not valid"); e["reconnect"] != true {
		t.Errorf("error %v", e)
	}
	c.send(map[string]any{"op": "subscribe", "requestId": 1, "query": map[string]any{"className": "Message", "where": map[string]any{}}})
	c.expectError(2, "connect")
	c.connect(map[string]any{"javascriptKey": "js-key"})
	c.subscribe(1, "Message", map[string]any{}, nil)
	// The master key works too (it is the server's master key).
	m := dial(t, wsURL(s))
	m.connect(map[string]any{"masterKey": servertest.MasterKey})
}

func TestServerClosesClientsOnShutdown(t *testing.T) {
	s := startLive(t, "Message")
	c := dial(t, wsURL(s))
	c.connect(nil)
	go s.Live.Close()
	err := c.closed()
	var ce *websocket.CloseError
	if !asCloseError(err, &ce) || ce.Code != websocket.CloseGoingAway {
		t.Errorf("close: %v", err)
	}
}

// Operators REST supports work in subscriptions: one object is created and
// exactly the subscriptions whose where it satisfies receive it.
func TestOperatorsMatchAsInREST(t *testing.T) {
	s := startLive(t, "Thing")
	owner, _ := signUp(t, s, "owner")
	c := dial(t, wsURL(s))
	c.connect(map[string]any{"masterKey": servertest.MasterKey})
	geo := func(lat, lng float64) map[string]any {
		return map[string]any{"__type": "GeoPoint", "latitude": lat, "longitude": lng}
	}
	cases := []struct {
		where map[string]any
		match bool
	}{
		{map[string]any{"name": "widget"}, true},
		{map[string]any{"name": "gadget"}, false},
		{map[string]any{"n": map[string]any{"$gt": 5, "$lte": 7}}, true},
		{map[string]any{"n": map[string]any{"$in": []any{1, 2}}}, false},
		{map[string]any{"n": map[string]any{"$nin": []any{1, 2}}}, true},
		{map[string]any{"tags": "red"}, true},
		{map[string]any{"tags": map[string]any{"$all": []any{"red", "blue"}}}, true},
		{map[string]any{"tags": map[string]any{"$all": []any{"red", "green"}}}, false},
		{map[string]any{"tags": map[string]any{"$containedBy": []any{"red", "blue", "x"}}}, true},
		{map[string]any{"name": map[string]any{"$regex": "^WID", "$options": "i"}}, true},
		{map[string]any{"name": map[string]any{"$regex": "^WID"}}, false},
		{map[string]any{"missing": map[string]any{"$exists": false}}, true},
		{map[string]any{"name": map[string]any{"$exists": false}}, false},
		{map[string]any{"info.size": "L"}, true},
		{map[string]any{"owner": ptr("_User", owner)}, true},
		{map[string]any{"owner": ptr("_User", "someoneElse")}, false},
		{map[string]any{"$or": []any{map[string]any{"name": "x"}, map[string]any{"n": 6}}}, true},
		{map[string]any{"$nor": []any{map[string]any{"name": "widget"}}}, false},
		{map[string]any{"loc": map[string]any{"$nearSphere": geo(40, -74), "$maxDistanceInKilometers": 50}}, true},
		{map[string]any{"loc": map[string]any{"$nearSphere": geo(48.85, 2.35), "$maxDistanceInKilometers": 50}}, false},
		{map[string]any{"loc": map[string]any{"$nearSphere": geo(40.5, -74)}}, true}, // 100-mile default limit
		{map[string]any{"loc": map[string]any{"$within": map[string]any{"$box": []any{geo(39, -75), geo(41, -73)}}}}, true},
		{map[string]any{"loc": map[string]any{"$geoWithin": map[string]any{"$polygon": []any{geo(39, -75), geo(41, -75), geo(41, -73)}}}}, true},
		{map[string]any{"createdAt": map[string]any{"$gt": map[string]any{"__type": "Date", "iso": "2000-01-01T00:00:00.000Z"}}}, true},
		{map[string]any{"when": map[string]any{"$lt": map[string]any{"__type": "Date", "iso": "2000-01-01T00:00:00.000Z"}}}, false},
		{map[string]any{"name": map[string]any{"$eq": "widget"}, "n": map[string]any{"$ne": 6}}, false},
	}
	for i, tc := range cases {
		c.subscribe(i+1, "Thing", tc.where, nil)
	}
	sentinel := len(cases) + 1
	c.subscribe(sentinel, "Thing", map[string]any{"mark": "end"}, nil)
	thing := call(t, s, "POST", "/classes/Thing", map[string]any{
		"name": "widget", "n": 6, "tags": []any{"red", "blue"}, "info": map[string]any{"size": "L"},
		"owner": ptr("_User", owner), "loc": geo(40.2, -74.1),
		"when": map[string]any{"__type": "Date", "iso": "2020-05-05T00:00:00.000Z"},
	}, servertest.App())
	// The sentinel write's events come after every event of the create:
	// a create for a subscription the object misses would take a place.
	call(t, s, "PUT", "/classes/Thing/"+thing["objectId"].(string), map[string]any{"mark": "end"}, servertest.App())
	var want []string
	for i, tc := range cases {
		if tc.match {
			want = append(want, fmt.Sprintf("create %d", i+1), fmt.Sprintf("update %d", i+1))
		}
	}
	c.expectEvents(append(want, fmt.Sprintf("enter %d", sentinel))...)
}
