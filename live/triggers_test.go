package live_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server/servertest"
)

const liveTriggersJS = `
Parse.Cloud.beforeConnect((req) => {
  if (req.installationId === 'blocked') { throw new Parse.Error(119, 'not you'); }
});
Parse.Cloud.beforeSubscribe('Message', (req) => {
  if (req.query.toJSON().where.room === 'secret') { throw new Parse.Error(119, 'no secrets'); }
  req.query.equalTo('visible', true);
});
Parse.Cloud.afterLiveQueryEvent('Message', (req) => {
  if (req.object.get('text') === 'hide') { req.sendEvent = false; return; }
  req.object.set('seenBy', req.event);
});
`

// beforeConnect may refuse a client, beforeSubscribe refuse or narrow a
// query, afterLiveQueryEvent change or suppress an event.
func TestLiveQueryTriggers(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.js"), []byte(liveTriggersJS), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := servertest.Start(t, func(o *config.Options) {
		o.Cloud = filepath.Join(dir, "main.js")
		o.LiveQuery.ClassNames = []string{"Message"}
	})
	blocked := dial(t, wsURL(srv))
	blocked.send(map[string]any{"op": "connect", "applicationId": servertest.AppID, "installationId": "blocked"})
	blocked.expectError(119, "not you")

	c := dial(t, wsURL(srv))
	c.connect(nil)
	c.send(map[string]any{"op": "subscribe", "requestId": 1, "query": map[string]any{"className": "Message", "where": map[string]any{"room": "secret"}}})
	c.expectError(119, "no secrets")
	c.subscribe(2, "Message", map[string]any{"room": "r"}, nil)

	post := func(body map[string]any) {
		body["room"] = "r"
		if res := srv.Do(t, "POST", "/classes/Message", body, servertest.App()); res.Status != 201 {
			t.Fatalf("create: %d %s", res.Status, res.Body)
		}
	}
	post(map[string]any{"text": "invisible", "visible": false}) // beforeSubscribe narrowed the query
	post(map[string]any{"text": "hide", "visible": true})       // afterLiveQueryEvent suppresses it
	post(map[string]any{"text": "shown", "visible": true})
	obj, _ := c.event("create", 2)
	if obj["text"] != "shown" || obj["seenBy"] != "create" {
		t.Fatalf("event object %v, want text shown, seenBy create", obj)
	}
}

const liveJoinTriggersJS = `
Parse.Cloud.afterLiveQueryEvent('Photo', (req) => {
  if (req.object.get('n') === 13) { req.sendEvent = false; return; }
  req.object.set('seenBy', req.event);
});
`

// afterLiveQueryEvent runs for the events of live joins too: enter and
// leave caused by a relation edit or an inner object's change, as for an
// outer object's own change.
func TestAfterLiveQueryEventRunsForJoinEvents(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.js"), []byte(liveJoinTriggersJS), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := servertest.Start(t, func(o *config.Options) {
		o.Cloud = filepath.Join(dir, "main.js")
		o.LiveQuery.ClassNames = []string{"Photo", "Album"}
	})
	master := servertest.Master()
	album := call(t, srv, "POST", "/classes/Album", map[string]any{"open": false}, master)["objectId"].(string)
	unlucky := call(t, srv, "POST", "/classes/Photo", map[string]any{"n": 13, "album": ptr("Album", album)}, master)["objectId"].(string)
	photo := call(t, srv, "POST", "/classes/Photo", map[string]any{"n": 1, "album": ptr("Album", album)}, master)["objectId"].(string)

	c := dial(t, wsURL(srv))
	c.connect(nil)
	c.subscribe(1, "Photo", inAlbum(album), nil)
	c.subscribe(2, "Photo", map[string]any{"album": map[string]any{"$inQuery": map[string]any{"className": "Album", "where": map[string]any{"open": true}}}}, nil)

	call(t, srv, "PUT", "/classes/Album/"+album, relationOp("AddRelation", unlucky, photo), master) // unlucky's enter is suppressed
	if obj, _ := c.event("enter", 1); obj["objectId"] != photo || obj["seenBy"] != "enter" {
		t.Fatalf("enter %v, want %s seen by the trigger", obj, photo)
	}
	call(t, srv, "PUT", "/classes/Album/"+album, map[string]any{"open": true}, master)
	if obj, _ := c.event("enter", 2); obj["objectId"] != photo || obj["seenBy"] != "enter" {
		t.Fatalf("enter %v, want %s seen by the trigger", obj, photo)
	}
	call(t, srv, "PUT", "/classes/Album/"+album, relationOp("RemoveRelation", photo), master)
	if obj, _ := c.event("leave", 1); obj["objectId"] != photo || obj["seenBy"] != "leave" {
		t.Fatalf("leave %v, want %s seen by the trigger", obj, photo)
	}
	call(t, srv, "DELETE", "/classes/Photo/"+photo, nil, master)
	if obj, _ := c.event("delete", 2); obj["objectId"] != photo || obj["seenBy"] != "delete" {
		t.Fatalf("delete %v, want %s seen by the trigger", obj, photo)
	}
}
