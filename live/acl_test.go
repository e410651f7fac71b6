package live_test

import (
	"encoding/json"
	"net/url"
	"testing"
	"time"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server/servertest"
	"github.com/quarrydata/quarry/service"
)

// These tests prove that a client heard nothing with a sentinel, never by
// waiting: see expectEvents.

// clients of one test: anonymous, alice and bob (by session token) and
// master, all subscribed to where with requestId 1.
type audience struct {
	anon, alice, bob, master *wsClient
}

func listen(t *testing.T, s *servertest.Server, class string, where map[string]any, aliceToken, bobToken string) audience {
	a := audience{anon: dial(t, wsURL(s)), alice: dial(t, wsURL(s)), bob: dial(t, wsURL(s)), master: dial(t, wsURL(s))}
	a.anon.connect(nil)
	a.alice.connect(map[string]any{"sessionToken": aliceToken}) // connect-level token
	a.bob.connect(nil)
	a.master.connect(map[string]any{"masterKey": servertest.MasterKey})
	a.anon.subscribe(1, class, where, nil)
	a.alice.subscribe(1, class, where, nil)
	a.bob.subscribe(1, class, where, map[string]any{"sessionToken": bobToken}) // subscription-level token
	a.master.subscribe(1, class, where, nil)
	return a
}

// publicRead is the body of an update making an object readable by all.
func publicRead() map[string]any {
	return map[string]any{"ACL": map[string]any{"*": map[string]any{"read": true}}}
}

// sessionID is the objectId of userID's (only) session.
func sessionID(t *testing.T, s *servertest.Server, userID string) string {
	t.Helper()
	where, _ := json.Marshal(map[string]any{"user": ptr("_User", userID)})
	sessions := call(t, s, "GET", "/sessions?where="+url.QueryEscape(string(where)), nil, servertest.Master())["results"].([]any)
	if len(sessions) != 1 {
		t.Fatalf("user %s has %d sessions", userID, len(sessions))
	}
	return sessions[0].(map[string]any)["objectId"].(string)
}

// isoDate is a Date value d from now.
func isoDate(d time.Duration) map[string]any {
	return map[string]any{"__type": "Date", "iso": time.Now().Add(d).UTC().Format("2006-01-02T15:04:05.000Z")}
}

func TestACLAndRolesPerClient(t *testing.T) {
	s := startLive(t, "Doc")
	aliceID, aliceToken := signUp(t, s, "alice")
	bobID, bobToken := signUp(t, s, "bob")
	role := call(t, s, "POST", "/roles", map[string]any{"name": "Mods", "ACL": map[string]any{"*": map[string]any{"read": true}}}, servertest.Master())
	a := listen(t, s, "Doc", map[string]any{}, aliceToken, bobToken)

	// Public: everyone.
	call(t, s, "POST", "/classes/Doc", map[string]any{"n": 1}, servertest.App())
	for _, c := range []*wsClient{a.anon, a.alice, a.bob, a.master} {
		c.event("create", 1)
	}
	// Alice only. Alice shares it with bob: bob sees it enter (his first
	// event for it, so he heard nothing before); then she takes it back
	// from herself and sees it leave; made public, it enters for anon.
	doc := call(t, s, "POST", "/classes/Doc", map[string]any{"n": 2, "ACL": map[string]any{aliceID: map[string]any{"read": true, "write": true}}}, servertest.App())
	docPath := "/classes/Doc/" + doc["objectId"].(string)
	a.alice.event("create", 1)
	a.master.event("create", 1)
	call(t, s, "PUT", docPath, map[string]any{"ACL": map[string]any{
		aliceID: map[string]any{"read": true, "write": true}, bobID: map[string]any{"read": true}}}, asUser(aliceToken))
	a.alice.event("update", 1)
	a.bob.event("enter", 1)
	a.master.event("update", 1)
	call(t, s, "PUT", docPath, map[string]any{"ACL": map[string]any{
		aliceID: map[string]any{"write": true}, bobID: map[string]any{"read": true}}}, asUser(aliceToken))
	a.alice.event("leave", 1)
	a.bob.event("update", 1)
	a.master.event("update", 1)
	call(t, s, "PUT", docPath, publicRead(), servertest.Master())
	a.anon.event("enter", 1)
	a.alice.event("enter", 1)
	a.bob.event("update", 1)
	a.master.event("update", 1)

	// A role's objects: nobody but the master, until bob joins the role;
	// then bob receives without reconnecting (an update of the first is
	// his first event for it), and alice and anon still nothing (their
	// first events are enters when the objects are made public).
	roleACL := map[string]any{"ACL": map[string]any{"role:Mods": map[string]any{"read": true}}}
	r3 := call(t, s, "POST", "/classes/Doc", map[string]any{"n": 3, "ACL": roleACL["ACL"]}, servertest.App())
	a.master.event("create", 1)
	call(t, s, "PUT", "/roles/"+role["objectId"].(string), map[string]any{"users": map[string]any{"__op": "AddRelation", "objects": []any{ptr("_User", bobID)}}}, servertest.Master())
	call(t, s, "PUT", "/classes/Doc/"+r3["objectId"].(string), map[string]any{"n": 30}, servertest.Master())
	a.master.event("update", 1)
	if obj, _ := a.bob.event("update", 1); obj["n"] != float64(30) {
		t.Errorf("bob got %v", obj)
	}
	r4 := call(t, s, "POST", "/classes/Doc", map[string]any{"n": 4, "ACL": roleACL["ACL"]}, servertest.App())
	a.master.event("create", 1)
	if obj, _ := a.bob.event("create", 1); obj["n"] != float64(4) {
		t.Errorf("bob got %v", obj)
	}
	for _, r := range []map[string]any{r3, r4} {
		call(t, s, "PUT", "/classes/Doc/"+r["objectId"].(string), publicRead(), servertest.Master())
	}
	a.alice.expectEvents("enter 1", "enter 1")
	a.anon.expectEvents("enter 1", "enter 1")
	a.bob.expectEvents("update 1", "update 1")
	a.master.expectEvents("update 1", "update 1")
}

// Logging out ends alice's events: she is told once (209), then receives
// nothing, public objects included. Her sentinel is a subscription of a
// new session on the same connection.
func TestLogoutStopsEvents(t *testing.T) {
	s := startLive(t, "Doc")
	_, aliceToken := signUp(t, s, "alice")
	_, bobToken := signUp(t, s, "bob")
	a := listen(t, s, "Doc", map[string]any{}, aliceToken, bobToken)
	call(t, s, "POST", "/logout", map[string]any{}, asUser(aliceToken))
	call(t, s, "POST", "/classes/Doc", map[string]any{"n": 5}, servertest.App())
	if e := a.alice.expectError(209, ""); e["requestId"] != float64(1) || e["reconnect"] != false {
		t.Errorf("revoked: %v", e)
	}
	login := call(t, s, "POST", "/login", map[string]any{"username": "alice", "password": "pw-alice"}, servertest.App())
	a.alice.subscribe(2, "Doc", map[string]any{}, map[string]any{"sessionToken": login["sessionToken"]})
	n6 := call(t, s, "POST", "/classes/Doc", map[string]any{"n": 6}, servertest.App())
	call(t, s, "PUT", "/classes/Doc/"+n6["objectId"].(string), map[string]any{"n": 60}, servertest.App())
	a.alice.event("create", 2)
	a.alice.event("update", 2)
	for _, c := range []*wsClient{a.anon, a.bob, a.master} {
		c.expectEvents("create 1", "create 1", "update 1")
	}
}

func TestExpiredSessionStopsReceiving(t *testing.T) {
	s := startLive(t, "Doc")
	aliceID, aliceToken := signUp(t, s, "alice")
	c := dial(t, wsURL(s))
	c.connect(map[string]any{"sessionToken": aliceToken})
	c.subscribe(1, "Doc", map[string]any{}, nil)
	call(t, s, "POST", "/classes/Doc", map[string]any{"n": 1}, servertest.App())
	c.event("create", 1)
	// Expire the session (as time passing would).
	call(t, s, "PUT", "/sessions/"+sessionID(t, s, aliceID), map[string]any{"expiresAt": isoDate(-time.Minute)}, servertest.Master())
	doc := call(t, s, "POST", "/classes/Doc", map[string]any{"n": 2}, servertest.App())
	c.expectError(209, "expired")
	// Sentinel: a new session's subscription on the same connection hears
	// the object's next change first.
	login := call(t, s, "POST", "/login", map[string]any{"username": "alice", "password": "pw-alice"}, servertest.App())
	c.subscribe(2, "Doc", map[string]any{}, map[string]any{"sessionToken": login["sessionToken"]})
	call(t, s, "PUT", "/classes/Doc/"+doc["objectId"].(string), map[string]any{"n": 20}, servertest.App())
	c.event("update", 2)
}

func TestCLPAndProtectedFields(t *testing.T) {
	s := startLive(t, "Secretive", "Owned", "_User")
	aliceID, aliceToken := signUp(t, s, "alice")
	bobID, bobToken := signUp(t, s, "bob")
	call(t, s, "POST", "/schemas/Secretive", map[string]any{"className": "Secretive", "fields": map[string]any{"secret": map[string]any{"type": "String"}},
		"classLevelPermissions": map[string]any{
			"find": map[string]any{"requiresAuthentication": true}, "get": map[string]any{"requiresAuthentication": true},
			"create": map[string]any{"*": true}, "update": map[string]any{"*": true}, "delete": map[string]any{"*": true},
			"addField": map[string]any{"*": true}, "count": map[string]any{"*": true},
			"protectedFields": map[string]any{"*": []any{"secret"}},
		}}, servertest.Master())
	call(t, s, "POST", "/schemas/Owned", map[string]any{"className": "Owned", "fields": map[string]any{"owner": map[string]any{"type": "Pointer", "targetClass": "_User"}},
		"classLevelPermissions": map[string]any{
			"find": map[string]any{"pointerFields": []any{"owner"}}, "get": map[string]any{"pointerFields": []any{"owner"}},
			"create": map[string]any{"*": true}, "update": map[string]any{"*": true}, "delete": map[string]any{"*": true},
			"addField": map[string]any{"*": true}, "count": map[string]any{"*": true},
		}}, servertest.Master())

	t.Run("requiresAuthentication and protectedFields", func(t *testing.T) {
		a := listen(t, s, "Secretive", map[string]any{}, aliceToken, bobToken)
		// anon's sentinel: a subscription with alice's session on its
		// connection, which hears the object's create and then its update.
		a.anon.subscribe(2, "Secretive", map[string]any{}, map[string]any{"sessionToken": aliceToken})
		obj := call(t, s, "POST", "/classes/Secretive", map[string]any{"open": 1, "secret": "s3"}, servertest.App())
		if obj, _ := a.alice.event("create", 1); obj["open"] != float64(1) || obj["secret"] != nil {
			t.Errorf("alice got %v", obj)
		}
		a.bob.event("create", 1)
		if obj, _ := a.master.event("create", 1); obj["secret"] != "s3" {
			t.Errorf("master got %v", obj)
		}
		call(t, s, "PUT", "/classes/Secretive/"+obj["objectId"].(string), map[string]any{"open": 2}, servertest.App())
		a.anon.event("create", 2)
		a.anon.event("update", 2)
		// Querying a protected field is refused, as a find is.
		c := dial(t, wsURL(s))
		c.connect(map[string]any{"sessionToken": aliceToken})
		c.send(map[string]any{"op": "subscribe", "requestId": 5, "query": map[string]any{"className": "Secretive", "where": map[string]any{"secret": "s3"}}})
		c.expectError(119, "not allowed to query secret")
	})

	t.Run("pointer permissions", func(t *testing.T) {
		a := listen(t, s, "Owned", map[string]any{}, aliceToken, bobToken)
		a.anon.subscribe(2, "Owned", map[string]any{}, map[string]any{"sessionToken": aliceToken}) // anon's sentinel
		mine := call(t, s, "POST", "/classes/Owned", map[string]any{"owner": ptr("_User", aliceID)}, servertest.App())
		a.alice.event("create", 1)
		a.master.event("create", 1)
		bobs := call(t, s, "POST", "/classes/Owned", map[string]any{"owner": ptr("_User", bobID)}, servertest.App())
		a.bob.event("create", 1)
		a.master.event("create", 1)
		// Sentinels: alice's object changes and bob's becomes hers. Alice's
		// first event for bob's object is its enter; anon's own
		// subscription hears nothing at all.
		call(t, s, "PUT", "/classes/Owned/"+mine["objectId"].(string), map[string]any{"n": 1}, servertest.App())
		call(t, s, "PUT", "/classes/Owned/"+bobs["objectId"].(string), map[string]any{"owner": ptr("_User", aliceID)}, servertest.App())
		a.alice.expectEvents("update 1", "enter 1")
		a.anon.expectEvents("create 2", "update 2", "enter 2")
		a.bob.expectEvents("leave 1")
		a.master.expectEvents("update 1", "update 1")
	})

	t.Run("a user's email is theirs", func(t *testing.T) {
		a := listen(t, s, "_User", map[string]any{"username": "alice"}, aliceToken, bobToken)
		call(t, s, "PUT", "/users/"+aliceID, map[string]any{"nick": "al"}, asUser(aliceToken))
		if obj, _ := a.alice.event("update", 1); obj["email"] != "alice@example.com" || obj["password"] != nil {
			t.Errorf("alice sees %v", obj)
		}
		for _, c := range []*wsClient{a.bob, a.anon} {
			if obj, _ := c.event("update", 1); obj["email"] != nil || obj["nick"] != "al" {
				t.Errorf("another sees %v", obj)
			}
		}
		if obj, _ := a.master.event("update", 1); obj["email"] != "alice@example.com" {
			t.Errorf("master sees %v", obj)
		}
	})
}

func TestSessionSubscriptionsSeeOnlyTheirOwn(t *testing.T) {
	s := startLive(t, "_Session")
	aliceID, aliceToken := signUp(t, s, "alice")
	c := dial(t, wsURL(s))
	c.connect(nil)
	c.send(map[string]any{"op": "subscribe", "requestId": 1, "query": map[string]any{"className": "_Session", "where": map[string]any{}}})
	c.expectError(209, "Invalid session token")
	c.subscribe(2, "_Session", map[string]any{}, map[string]any{"sessionToken": aliceToken})
	bobID, bobToken := signUp(t, s, "bob") // bob's session: not alice's business
	// Bob's subscription on the same connection is the sentinel: it hears
	// the next change of his session, after anything its creation caused.
	c.send(map[string]any{"op": "subscribe", "requestId": 3, "sessionToken": bobToken, "query": map[string]any{"className": "_Session", "where": map[string]any{}}})
	login := call(t, s, "POST", "/login", map[string]any{"username": "alice", "password": "pw-alice"}, servertest.App())
	// Changes are dispatched asynchronously, so alice's own sign-up session
	// may arrive too; every event of hers must be hers.
	sawLogin, sawSentinel := false, false
	for !sawLogin || !sawSentinel {
		m := c.next()
		obj, _ := m["object"].(map[string]any)
		user, _ := obj["user"].(map[string]any)
		switch op, id := m["op"], m["requestId"]; {
		case op == "subscribed" && id == float64(3):
			call(t, s, "PUT", "/sessions/"+sessionID(t, s, bobID), map[string]any{"expiresAt": isoDate(time.Hour)}, servertest.Master())
		case op == "create" && id == float64(2) && user["objectId"] == aliceID:
			sawLogin = sawLogin || obj["sessionToken"] == login["sessionToken"]
		case op == "create" && id == float64(3) && user["objectId"] == bobID:
			// bob's sign-up session, dispatched after his subscription began
		case op == "update" && id == float64(3):
			sawSentinel = true
		default:
			t.Fatalf("unexpected message %v", m)
		}
	}
}

func TestMasterKeyOnlyFromMasterKeyIPs(t *testing.T) {
	s := servertest.Start(t, func(o *config.Options) {
		o.LiveQuery.ClassNames = []string{"Doc"}
		o.MasterKeyIPs = []string{"10.1.2.3"}
	})
	c := dial(t, wsURL(s))
	c.connect(map[string]any{"masterKey": servertest.MasterKey}) // from 127.0.0.1: an ordinary client
	c.subscribe(1, "Doc", map[string]any{}, nil)
	master := service.Auth{Master: true}
	hidden, err := s.Service.Create(master, "Doc", map[string]any{"ACL": map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	s.Service.Create(master, "Doc", map[string]any{"public": true})
	// Sentinel: made public, the hidden object enters; it is the first
	// event of it the client gets.
	if _, err := s.Service.Update(master, "Doc", hidden.ObjectID, publicRead()); err != nil {
		t.Fatal(err)
	}
	for _, m := range c.expectEvents("create 1", "enter 1") {
		obj := m["object"].(map[string]any)
		if m["op"] == "create" && obj["public"] != true || m["op"] == "enter" && obj["objectId"] != hidden.ObjectID {
			t.Errorf("got %v, want only the public object, then the hidden one entering", m)
		}
	}
}
