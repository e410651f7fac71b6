package live_test

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"net/url"
	"slices"
	"sync"
	"testing"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/live"
	"github.com/quarrydata/quarry/server/servertest"
)

// inOpenRooms is a live join: messages whose room is open.
func inOpenRooms(op string) map[string]any {
	return map[string]any{"room": map[string]any{op: map[string]any{"className": "Room", "where": map[string]any{"open": true}}}}
}

func TestLiveJoinEntersAndLeavesOnInnerChanges(t *testing.T) {
	s := startLive(t, "Message", "Room")
	master := servertest.Master()
	closed := call(t, s, "POST", "/classes/Room", map[string]any{"open": false}, master)["objectId"].(string)
	open := call(t, s, "POST", "/classes/Room", map[string]any{"open": true}, master)["objectId"].(string)
	m1 := call(t, s, "POST", "/classes/Message", map[string]any{"room": ptr("Room", closed), "n": 1}, master)["objectId"].(string)
	m2 := call(t, s, "POST", "/classes/Message", map[string]any{"room": ptr("Room", closed), "n": 2}, master)["objectId"].(string)

	c := dial(t, wsURL(s))
	c.connect(nil)
	c.subscribe(1, "Message", inOpenRooms("$inQuery"), nil)
	c.subscribe(2, "Message", inOpenRooms("$notInQuery"), nil)

	// A message created in an open room: create for $inQuery only.
	m3 := call(t, s, "POST", "/classes/Message", map[string]any{"room": ptr("Room", open), "n": 3}, master)["objectId"].(string)
	obj, _ := c.event("create", 1)
	if obj["objectId"] != m3 {
		t.Fatalf("create %v", obj)
	}
	// The closed room opens: its two messages enter 1 and leave 2.
	call(t, s, "PUT", "/classes/Room/"+closed, map[string]any{"open": true}, master)
	msgs := c.expectEvents("enter 1", "enter 1", "leave 2", "leave 2")
	var ids []string
	for _, m := range msgs {
		o := m["object"].(map[string]any)
		if o["className"] != "Message" || o["room"] == nil {
			t.Fatalf("event object %v", m)
		}
		if m["op"] == "enter" {
			ids = append(ids, o["objectId"].(string))
		}
	}
	if slices.Sort(ids); !slices.Equal(ids, sortStrings([]string{m1, m2})) {
		t.Fatalf("entered %v, want %v and %v", ids, m1, m2)
	}
	// An outer change moves a message to the other open room: an update.
	call(t, s, "PUT", "/classes/Message/"+m1, map[string]any{"room": ptr("Room", open)}, master)
	c.event("update", 1)
	// Deleting the room: its remaining message leaves 1, enters 2.
	call(t, s, "DELETE", "/classes/Room/"+closed, nil, master)
	c.expectEvents("leave 1", "enter 2")
	// An inner change that changes no answer sends nothing: the next
	// event is the sentinel's.
	call(t, s, "PUT", "/classes/Room/"+open, map[string]any{"name": "lobby"}, master)
	call(t, s, "PUT", "/classes/Message/"+m2, map[string]any{"n": 20}, master)
	c.expectEvents("update 2")
}

// An inner object the subscriber may not read does not make outer objects
// match, as in a find whose subquery runs with the caller's rights.
func TestLiveJoinHidesInnerObjectsTheSubscriberCannotRead(t *testing.T) {
	s := startLive(t, "Message", "Room")
	master := servertest.Master()
	alice, _ := signUp(t, s, "alice")
	_, bobToken := signUp(t, s, "bob")
	private := call(t, s, "POST", "/classes/Room", map[string]any{"open": false,
		"ACL": map[string]any{alice: map[string]any{"read": true, "write": true}}}, master)["objectId"].(string)
	public := call(t, s, "POST", "/classes/Room", map[string]any{"open": false}, master)["objectId"].(string)
	call(t, s, "POST", "/classes/Message", map[string]any{"room": ptr("Room", private)}, master)
	pub := call(t, s, "POST", "/classes/Message", map[string]any{"room": ptr("Room", public)}, master)["objectId"].(string)

	c := dial(t, wsURL(s))
	c.connect(map[string]any{"sessionToken": bobToken})
	c.subscribe(1, "Message", inOpenRooms("$inQuery"), nil)
	call(t, s, "PUT", "/classes/Room/"+private, map[string]any{"open": true}, master) // bob cannot read it
	call(t, s, "PUT", "/classes/Room/"+public, map[string]any{"open": true}, master)
	if obj, _ := c.event("enter", 1); obj["objectId"] != pub {
		t.Fatalf("bob saw %v enter, want only %s", obj, pub)
	}
	r := s.Do(t, "GET", "/classes/Message?where="+urlJSON(inOpenRooms("$inQuery")), nil, asUser(bobToken)).Map()
	if res := r["results"].([]any); len(res) != 1 {
		t.Fatalf("REST answers %v", r)
	}
}

// TestLiveJoinAgreesWithFind is the differential property test: after a
// random sequence of writes to rooms (open or not, readable or not) and
// messages (moved, created, deleted), the messages a client believes match
// are those a find with the same where returns.
func TestLiveJoinAgreesWithFind(t *testing.T) {
	s := startLive(t, "Message", "Room", "Sentinel")
	master := servertest.Master()
	user, token := signUp(t, s, "carol")
	for seed := int64(1); seed <= 5; seed++ {
		for _, op := range []string{"$inQuery", "$notInQuery"} {
			t.Run(fmt.Sprintf("%s/seed%d", op, seed), func(t *testing.T) {
				differential(t, s, master, user, token, rand.New(rand.NewSource(seed)), inOpenRooms(op))
			})
		}
	}
	sel := map[string]any{"topic": map[string]any{"$select": map[string]any{"key": "topic",
		"query": map[string]any{"className": "Room", "where": map[string]any{"open": true}}}}}
	dsel := map[string]any{"topic": map[string]any{"$dontSelect": map[string]any{"key": "topic",
		"query": map[string]any{"className": "Room", "where": map[string]any{"open": true}}}}}
	for seed := int64(1); seed <= 2; seed++ {
		t.Run(fmt.Sprintf("$select/seed%d", seed), func(t *testing.T) {
			differential(t, s, master, user, token, rand.New(rand.NewSource(seed)), sel)
		})
		t.Run(fmt.Sprintf("$dontSelect/seed%d", seed), func(t *testing.T) {
			differential(t, s, master, user, token, rand.New(rand.NewSource(seed)), dsel)
		})
	}
}

func differential(t *testing.T, s *servertest.Server, master map[string]string, user, token string, rng *rand.Rand, where map[string]any) {
	topics := []string{"go", "js", "db"}
	acl := func() map[string]any {
		if rng.Intn(3) == 0 {
			return map[string]any{"someoneElse": map[string]any{"read": true, "write": true}}
		}
		return map[string]any{"*": map[string]any{"read": true}, user: map[string]any{"read": true}}
	}
	var rooms, msgs []string
	for i := 0; i < 4; i++ {
		rooms = append(rooms, call(t, s, "POST", "/classes/Room", map[string]any{"open": rng.Intn(2) == 0, "ACL": acl(),
			"topic": topics[rng.Intn(3)]}, master)["objectId"].(string))
	}
	for i := 0; i < 6; i++ {
		msgs = append(msgs, call(t, s, "POST", "/classes/Message", map[string]any{"room": ptr("Room", rooms[rng.Intn(len(rooms))]),
			"topic": topics[rng.Intn(3)], "ACL": acl()}, master)["objectId"].(string))
	}
	c := dial(t, wsURL(s))
	c.connect(map[string]any{"sessionToken": token})
	c.subscribe(1, "Message", where, nil)
	c.subscribe(2, "Sentinel", map[string]any{"room": map[string]any{"$inQuery": map[string]any{"className": "Room", "where": map[string]any{}}}}, nil)
	believed := map[string]bool{}
	for _, id := range restIDs(t, s, token, where) {
		believed[id] = true
	}
	for step := 0; step < 40; step++ {
		switch rng.Intn(6) {
		case 0, 1:
			call(t, s, "PUT", "/classes/Room/"+rooms[rng.Intn(len(rooms))], map[string]any{"open": rng.Intn(2) == 0}, master)
		case 2:
			call(t, s, "PUT", "/classes/Room/"+rooms[rng.Intn(len(rooms))], map[string]any{"ACL": acl(), "topic": topics[rng.Intn(3)]}, master)
		case 3:
			call(t, s, "PUT", "/classes/Message/"+msgs[rng.Intn(len(msgs))], map[string]any{"room": ptr("Room", rooms[rng.Intn(len(rooms))]),
				"topic": topics[rng.Intn(3)]}, master)
		case 4:
			msgs = append(msgs, call(t, s, "POST", "/classes/Message", map[string]any{"room": ptr("Room", rooms[rng.Intn(len(rooms))]),
				"topic": topics[rng.Intn(3)], "ACL": acl()}, master)["objectId"].(string))
		case 5:
			if len(rooms) > 2 && rng.Intn(3) == 0 {
				i := rng.Intn(len(rooms))
				call(t, s, "DELETE", "/classes/Room/"+rooms[i], nil, master)
				rooms = append(rooms[:i], rooms[i+1:]...)
			} else if len(msgs) > 1 {
				i := rng.Intn(len(msgs))
				call(t, s, "DELETE", "/classes/Message/"+msgs[i], nil, master)
				msgs = append(msgs[:i], msgs[i+1:]...)
			}
		}
	}
	// Then writers at once: the joins must follow the commit order, not
	// the order requests happen to reach the dispatchers.
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wr := rand.New(rand.NewSource(rng.Int63()))
		rs, ms := slices.Clone(rooms), slices.Clone(msgs)
		var acls []map[string]any
		for i := 0; i < 10; i++ {
			acls = append(acls, acl())
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for step := 0; step < 15; step++ {
				switch wr.Intn(3) {
				case 0:
					s.Do(t, "PUT", "/classes/Room/"+rs[wr.Intn(len(rs))], map[string]any{"open": wr.Intn(2) == 0}, master)
				case 1:
					s.Do(t, "PUT", "/classes/Room/"+rs[wr.Intn(len(rs))], map[string]any{"ACL": acls[wr.Intn(len(acls))], "topic": topics[wr.Intn(3)]}, master)
				case 2:
					s.Do(t, "PUT", "/classes/Message/"+ms[wr.Intn(len(ms))], map[string]any{"room": ptr("Room", rs[wr.Intn(len(rs))]),
						"topic": topics[wr.Intn(3)]}, master)
				}
			}
		}()
	}
	wg.Wait()
	// The sentinel: a change of another subscription on the same
	// connection, made after every write above. Live joins are decided in
	// commit order on one goroutine, so once its event arrives every
	// earlier event of this subscription has been queued before it.
	lobby := call(t, s, "POST", "/classes/Room", map[string]any{"name": "lobby"}, master)["objectId"].(string) // public, never written again
	call(t, s, "POST", "/classes/Sentinel", map[string]any{"room": ptr("Room", lobby)}, master)
	for {
		m := c.next()
		if m["requestId"] == float64(2) {
			break
		}
		id := m["object"].(map[string]any)["objectId"].(string)
		switch m["op"] {
		case "create", "enter", "update":
			believed[id] = true
		case "leave", "delete":
			delete(believed, id)
		}
	}
	var got []string
	for id := range believed {
		got = append(got, id)
	}
	want := restIDs(t, s, token, where)
	if !slices.Equal(sortStrings(got), want) {
		t.Fatalf("the client believes %v match, a find returns %v", sortStrings(got), want)
	}
}

func restIDs(t *testing.T, s *servertest.Server, token string, where map[string]any) []string {
	t.Helper()
	r := s.Do(t, "GET", "/classes/Message?limit=1000&where="+urlJSON(where), nil, asUser(token))
	if r.Status != 200 {
		t.Fatalf("find: %d %s", r.Status, r.Body)
	}
	var ids []string
	for _, o := range r.Map()["results"].([]any) {
		ids = append(ids, o.(map[string]any)["objectId"].(string))
	}
	return sortStrings(ids)
}

func urlJSON(v any) string {
	b, _ := json.Marshal(v)
	return url.QueryEscape(string(b))
}

// A live join whose subquery would scan too much is refused with 154, as
// the same find would be; with an index on the field it is accepted.
func TestLiveJoinRefusesWhatAFindRefuses(t *testing.T) {
	s := servertest.Start(t, func(o *config.Options) {
		o.LiveQuery.ClassNames = []string{"Message", "Room"}
		o.MaxScan = 5
		o.Indexes = []string{"Room.name", "Message.room"}
	})
	master := servertest.Master()
	for i := 0; i < 10; i++ {
		r := call(t, s, "POST", "/classes/Room", map[string]any{"open": true, "name": fmt.Sprint("r", i)}, master)
		call(t, s, "POST", "/classes/Message", map[string]any{"room": ptr("Room", r["objectId"].(string))}, master)
	}
	_, token := signUp(t, s, "dave")
	if r := s.Do(t, "GET", "/classes/Message?where="+urlJSON(inOpenRooms("$inQuery")), nil, asUser(token)); r.Status != 400 || r.Map()["code"] != float64(154) {
		t.Fatalf("the find answers %d %s", r.Status, r.Body)
	}
	c := dial(t, wsURL(s))
	c.connect(map[string]any{"sessionToken": token})
	c.send(map[string]any{"op": "subscribe", "requestId": 1, "query": map[string]any{"className": "Message", "where": inOpenRooms("$inQuery")}})
	c.expectError(154, "")
	c.subscribe(2, "Message", map[string]any{"room": map[string]any{"$inQuery": map[string]any{"className": "Room", "where": map[string]any{"name": "r3"}}}}, nil)
}

// The subscriber's rights on the inner class apply as in a find: a CLP
// that refuses them the find, or a subquery on a protected field, refuses
// the subscription with the find's code; protected fields of the inner
// objects never reach the events (they are outer objects only).
func TestLiveJoinAppliesTheInnerClassRules(t *testing.T) {
	s := startLive(t, "Message", "Room", "Vault")
	master := servertest.Master()
	_, token := signUp(t, s, "erin")
	clp := func(find map[string]any) map[string]any {
		return map[string]any{"find": find, "get": find, "create": map[string]any{"*": true}, "update": map[string]any{"*": true},
			"delete": map[string]any{"*": true}, "addField": map[string]any{"*": true}, "count": map[string]any{"*": true},
			"protectedFields": map[string]any{"*": []any{"secret"}}}
	}
	call(t, s, "POST", "/schemas/Vault", map[string]any{"className": "Vault", "fields": map[string]any{"secret": map[string]any{"type": "String"}},
		"classLevelPermissions": clp(map[string]any{})}, master)
	call(t, s, "POST", "/schemas/Room", map[string]any{"className": "Room", "fields": map[string]any{"secret": map[string]any{"type": "String"}},
		"classLevelPermissions": clp(map[string]any{"*": true})}, master)
	room := call(t, s, "POST", "/classes/Room", map[string]any{"open": false, "secret": "x"}, master)["objectId"].(string)
	call(t, s, "POST", "/classes/Message", map[string]any{"room": ptr("Room", room)}, master)
	c := dial(t, wsURL(s))
	c.connect(map[string]any{"sessionToken": token})
	for i, where := range []map[string]any{
		{"room": map[string]any{"$inQuery": map[string]any{"className": "Vault", "where": map[string]any{}}}},
		{"room": map[string]any{"$inQuery": map[string]any{"className": "Room", "where": map[string]any{"secret": "x"}}}},
	} {
		want := s.Do(t, "GET", "/classes/Message?where="+urlJSON(where), nil, asUser(token))
		if want.Status < 400 {
			t.Fatalf("the find of %v answers %d", where, want.Status)
		}
		c.send(map[string]any{"op": "subscribe", "requestId": i + 1, "query": map[string]any{"className": "Message", "where": where}})
		c.expectError(int(want.Map()["code"].(float64)), "")
	}
	c.subscribe(3, "Message", inOpenRooms("$inQuery"), nil)
	call(t, s, "PUT", "/classes/Room/"+room, map[string]any{"open": true}, master)
	if obj, _ := c.event("enter", 3); obj["room"] == nil {
		t.Fatalf("enter %v", obj)
	}
}

// TestLiveJoinLateCreateIsNotNews: a create committed before a live-join
// subscription but dispatched after it (its object already in the
// subscribe-time answer) sends nothing; the next event is the sentinel's.
func TestLiveJoinLateCreateIsNotNews(t *testing.T) {
	s := startLive(t, "Message", "Room")
	master := servertest.Master()
	closed := call(t, s, "POST", "/classes/Room", map[string]any{"open": false}, master)["objectId"].(string)
	m := call(t, s, "POST", "/classes/Message", map[string]any{"room": ptr("Room", closed), "n": 1}, master)["objectId"].(string)
	stored := call(t, s, "GET", "/classes/Message/"+m, nil, master)
	stored["className"] = "Message"

	c := dial(t, wsURL(s))
	c.connect(nil)
	c.subscribe(1, "Message", inOpenRooms("$notInQuery"), nil)
	s.Live.Publish(live.Change{Class: "Message", Object: stored})
	call(t, s, "PUT", "/classes/Message/"+m, map[string]any{"n": 2}, master)
	obj, _ := c.event("update", 1)
	if obj["n"] != 2.0 {
		t.Fatalf("first event's object %v, want the sentinel update (n 2): the late create was sent", obj)
	}
}
