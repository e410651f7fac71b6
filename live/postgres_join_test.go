package live_test

import (
	"testing"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server/servertest"
	"github.com/quarrydata/quarry/store/postgres/pgtest"
)

// Live joins across instances on PostgreSQL: writes on A (an inner
// object, a relation edit) move the outer objects of a subscriber on B,
// which hears of them from the shared change log after applying them.
func TestPostgresLiveJoinsAcrossInstances(t *testing.T) {
	uri := pgtest.NewDatabase(t)
	app := testAppID()
	start := func() *servertest.Server {
		return servertest.Start(t, func(o *config.Options) {
			o.AppID = app
			o.DatabaseURI = uri
			o.LiveQuery.ClassNames = []string{"Message", "Room", "Photo", "Album"}
		})
	}
	a, b := start(), start()
	mh := appHeaders(app, servertest.MasterKey)
	create := func(class string, body map[string]any) string {
		t.Helper()
		r := a.Do(t, "POST", "/classes/"+class, body, mh)
		if r.Status != 201 {
			t.Fatalf("create %s: %d %s", class, r.Status, r.Body)
		}
		return r.Map()["objectId"].(string)
	}
	update := func(class, id string, body map[string]any) {
		t.Helper()
		if r := a.Do(t, "PUT", "/classes/"+class+"/"+id, body, mh); r.Status != 200 {
			t.Fatalf("update %s: %d %s", class, r.Status, r.Body)
		}
	}
	room := create("Room", map[string]any{"open": false})
	msg := create("Message", map[string]any{"room": ptr("Room", room)})
	album := create("Album", map[string]any{"title": "trip"})
	photo := create("Photo", map[string]any{"n": 1})
	eventually(t, "the photo on B", func() bool { return b.Do(t, "GET", "/classes/Photo/"+photo, nil, mh).Status == 200 })

	onB := dial(t, wsURL(b))
	onB.send(map[string]any{"op": "connect", "applicationId": app})
	onB.expect("connected")
	onB.subscribe(1, "Message", inOpenRooms("$inQuery"), nil)
	onB.subscribe(2, "Photo", inAlbum(album), nil)

	update("Room", room, map[string]any{"open": true})
	if obj, _ := onB.event("enter", 1); obj["objectId"] != msg {
		t.Fatalf("enter %v, want %s", obj, msg)
	}
	update("Album", album, relationOp("AddRelation", photo))
	if obj, _ := onB.event("enter", 2); obj["objectId"] != photo {
		t.Fatalf("enter %v, want %s", obj, photo)
	}
	update("Album", album, relationOp("RemoveRelation", photo))
	if obj, _ := onB.event("leave", 2); obj["objectId"] != photo {
		t.Fatalf("leave %v, want %s", obj, photo)
	}
}
