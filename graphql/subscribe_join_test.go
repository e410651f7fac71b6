package graphql_test

import (
	"testing"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server/servertest"
)

// TestSubscriptionLiveJoins: a subscription's where may follow a pointer
// (have/haveNot: LiveQuery's $inQuery/$notInQuery) or compare with another
// class's values (inQueryKey: $select); a change of the other class makes
// the outer objects enter or leave, as with a LiveQuery client.
func TestSubscriptionLiveJoins(t *testing.T) {
	srv := startLive(t, "Message", "Room")
	m := servertest.Master()
	srv.Do(t, "POST", "/schemas/Room", map[string]any{"className": "Room", "fields": map[string]any{
		"open": map[string]any{"type": "Boolean"}, "topic": map[string]any{"type": "String"}}}, m)
	srv.Do(t, "POST", "/schemas/Message", map[string]any{"className": "Message", "fields": map[string]any{
		"text": map[string]any{"type": "String"}, "topic": map[string]any{"type": "String"},
		"room": map[string]any{"type": "Pointer", "targetClass": "Room"}}}, m)
	room := srv.Do(t, "POST", "/classes/Room", map[string]any{"open": false, "topic": "go"}, m).Map()["objectId"].(string)
	msg := srv.Do(t, "POST", "/classes/Message", map[string]any{"text": "hi", "topic": "go",
		"room": map[string]any{"__type": "Pointer", "className": "Room", "objectId": room}}, m).Map()["objectId"].(string)

	s := connect(t, srv, m)
	open := map[string]any{"open": map[string]any{"equalTo": true}}
	s.subscribe("entered", `subscription($where: MessageWhereInput) { messageEntered(where: $where) { objectId text } }`,
		map[string]any{"where": map[string]any{"room": map[string]any{"have": open}}})
	s.subscribe("left", `subscription($where: MessageWhereInput) { messageLeft(where: $where) { objectId text } }`,
		map[string]any{"where": map[string]any{"topic": map[string]any{"inQueryKey": map[string]any{"key": "topic",
			"query": map[string]any{"className": "Room", "where": map[string]any{"open": true}}}}}}) // SubqueryInput's where is REST's
	s.subscribe("ready", `{ health }`, nil)
	s.next()
	s.next()

	// The room opens: the message enters the have join.
	srv.Do(t, "PUT", "/classes/Room/"+room, map[string]any{"open": true}, m)
	if ev := s.next(); ev.Get("id").String() != "entered" || ev.Get("payload.data.messageEntered.objectId").String() != msg {
		t.Fatalf("after the room opened: %s", ev.Raw)
	}
	// The room's topic changes: the message leaves the inQueryKey join.
	srv.Do(t, "PUT", "/classes/Room/"+room, map[string]any{"topic": "js"}, m)
	if ev := s.next(); ev.Get("id").String() != "left" || ev.Get("payload.data.messageLeft.text").String() != "hi" {
		t.Fatalf("after the topic changed: %s", ev.Raw)
	}
}

// TestSubscriptionQuotaPerUser: a user's GraphQL subscriptions count
// against LiveQuery's per-user quota (maxSubscriptionsPerUser) together
// with their LiveQuery ones; past it a subscribe fails with 155.
func TestSubscriptionQuotaPerUser(t *testing.T) {
	srv := start(t, func(o *config.Options) {
		o.LiveQuery.ClassNames = []string{"Note"}
		o.LiveQueryServer.MaxSubscriptionsPerUser = 2
	})
	srv.Do(t, "POST", "/schemas/Note", map[string]any{"className": "Note", "fields": map[string]any{"text": map[string]any{"type": "String"}}}, servertest.Master())
	user := srv.Do(t, "POST", "/users", map[string]any{"username": "ann", "password": "pw"}, servertest.App()).Map()
	s := connect(t, srv, with(servertest.App(), "X-Parse-Session-Token", user["sessionToken"].(string)))
	for _, id := range []string{"a", "b", "c"} {
		s.subscribe(id, `subscription { noteCreated { text } }`, nil)
	}
	s.subscribe("ready", `{ health }`, nil)
	for {
		m := s.next()
		if m.Get("id").String() == "c" {
			if m.Get("type").String() != "error" || m.Get("payload.0.extensions.code").Int() != 155 {
				t.Fatalf("the third subscription: %s", m.Raw)
			}
			break
		}
		if m.Get("id").String() != "ready" {
			t.Fatalf("before the third subscription's answer: %s", m.Raw)
		}
	}
}
