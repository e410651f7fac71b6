package graphql_test

import (
	"testing"

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
