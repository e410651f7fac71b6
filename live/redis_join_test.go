package live_test

import (
	"math/rand"
	"path/filepath"
	"strconv"
	"testing"
)

// A standalone `quarry livequery` takes live joins: the inner changes
// reach it through Redis like any change of a published class, and it
// runs the joins' look-ups (the subscriber's find, the inner sets, the
// outer objects an inner change moves, a relation's members) as requests
// to its REST server.
func TestRedisStandaloneLiveJoins(t *testing.T) {
	requireRedis(t)
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	app, master := testAppID(), "mk-"+strconv.FormatUint(rand.Uint64(), 36)
	rest := run(t, "--appId", app, "--masterKey", master, "--liveQuery.classNames", "Message,Room,Photo,Album",
		"--liveQuery.redisURL", redisURL, "--databaseURI", filepath.Join(t.TempDir(), "a.db"))
	lq := run(t, "livequery", "--appId", app, "--masterKey", master, "--liveQuery.redisURL", redisURL,
		"--liveQueryServerOptions.serverURL", rest.url())
	h, mh := appHeaders(app, ""), appHeaders(app, master)
	alice := restCall(t, "POST", rest.url()+"/users", map[string]any{"username": "alice", "password": "pw"}, h)
	room := restCall(t, "POST", rest.url()+"/classes/Room", map[string]any{"open": false}, mh)["objectId"].(string)
	msg := restCall(t, "POST", rest.url()+"/classes/Message", map[string]any{"room": ptr("Room", room)}, mh)["objectId"].(string)
	album := restCall(t, "POST", rest.url()+"/classes/Album", map[string]any{"title": "trip"}, mh)["objectId"].(string)
	photo := restCall(t, "POST", rest.url()+"/classes/Photo", map[string]any{"n": 1}, mh)["objectId"].(string)

	c := dial(t, lq.ws())
	c.send(map[string]any{"op": "connect", "applicationId": app, "sessionToken": alice["sessionToken"]})
	c.expect("connected")
	c.subscribe(1, "Message", inOpenRooms("$inQuery"), nil)
	c.subscribe(2, "Photo", inAlbum(album), nil)

	restCall(t, "PUT", rest.url()+"/classes/Room/"+room, map[string]any{"open": true}, mh)
	if obj, _ := c.event("enter", 1); obj["objectId"] != msg {
		t.Fatalf("enter %v, want %s", obj, msg)
	}
	restCall(t, "PUT", rest.url()+"/classes/Album/"+album, relationOp("AddRelation", photo), mh)
	if obj, _ := c.event("enter", 2); obj["objectId"] != photo {
		t.Fatalf("enter %v, want %s", obj, photo)
	}
	// The album turns private: alice may no longer list its relation.
	restCall(t, "PUT", rest.url()+"/classes/Album/"+album, map[string]any{"ACL": map[string]any{}}, mh)
	c.event("leave", 2)
	restCall(t, "PUT", rest.url()+"/classes/Room/"+room, map[string]any{"open": false}, mh)
	c.event("leave", 1)
}
