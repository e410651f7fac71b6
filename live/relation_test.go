package live_test

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"

	"github.com/quarrydata/quarry/live"
	"github.com/quarrydata/quarry/server/servertest"
)

// inAlbum is a $relatedTo subscription's where: the photos of an album.
func inAlbum(album string) map[string]any {
	return map[string]any{"$relatedTo": map[string]any{"object": ptr("Album", album), "key": "photos"}}
}

func relationOp(op string, ids ...string) map[string]any {
	objs := make([]any, len(ids))
	for i, id := range ids {
		objs[i] = ptr("Photo", id)
	}
	return map[string]any{"photos": map[string]any{"__op": op, "objects": objs}}
}

// Adding a photo to an album's relation makes it enter a $relatedTo
// subscription, removing it makes it leave; changes of members are
// updates, of other photos nothing; the owner's deletion empties it.
func TestLiveRelatedToEntersAndLeaves(t *testing.T) {
	s := startLive(t, "Photo", "Album")
	master := servertest.Master()
	album := call(t, s, "POST", "/classes/Album", map[string]any{"title": "trip"}, master)["objectId"].(string)
	other := call(t, s, "POST", "/classes/Album", map[string]any{"title": "other"}, master)["objectId"].(string)
	var photos []string
	for i := 0; i < 4; i++ {
		photos = append(photos, call(t, s, "POST", "/classes/Photo", map[string]any{"n": i}, master)["objectId"].(string))
	}
	call(t, s, "PUT", "/classes/Album/"+album, relationOp("AddRelation", photos[0]), master)

	c := dial(t, wsURL(s))
	c.connect(nil)
	c.subscribe(1, "Photo", inAlbum(album), nil)
	c.subscribe(2, "Photo", map[string]any{"$relatedTo": map[string]any{"object": ptr("Album", album), "key": "photos"}, "n": map[string]any{"$gte": 2}}, nil)

	// Two photos join: both enter 1, the one with n >= 2 enters 2.
	call(t, s, "PUT", "/classes/Album/"+album, relationOp("AddRelation", photos[1], photos[2]), master)
	msgs := c.expectEvents("enter 1", "enter 1", "enter 2")
	var entered []string
	for _, m := range msgs {
		o := m["object"].(map[string]any)
		if o["className"] != "Photo" {
			t.Fatalf("event object %v", m)
		}
		if m["requestId"] == float64(1) {
			entered = append(entered, o["objectId"].(string))
		}
	}
	if !slices.Equal(sortStrings(entered), sortStrings([]string{photos[1], photos[2]})) {
		t.Fatalf("entered %v, want %v and %v", entered, photos[1], photos[2])
	}
	// Another album's relation does not concern the subscription.
	call(t, s, "PUT", "/classes/Album/"+other, relationOp("AddRelation", photos[3]), master)
	// A member changes: an update; a photo outside the relation: nothing.
	call(t, s, "PUT", "/classes/Photo/"+photos[3], map[string]any{"n": 30}, master)
	call(t, s, "PUT", "/classes/Photo/"+photos[0], map[string]any{"n": 10}, master)
	if obj, _ := c.event("update", 1); obj["objectId"] != photos[0] {
		t.Fatalf("update of %v", obj)
	}
	if obj, _ := c.event("enter", 2); obj["objectId"] != photos[0] { // n went to 10
		t.Fatalf("enter of %v", obj)
	}
	// A photo leaves the relation.
	call(t, s, "PUT", "/classes/Album/"+album, relationOp("RemoveRelation", photos[1]), master)
	if obj, _ := c.event("leave", 1); obj["objectId"] != photos[1] {
		t.Fatalf("leave of %v", obj)
	}
	// A member is deleted: delete.
	call(t, s, "DELETE", "/classes/Photo/"+photos[2], nil, master)
	c.expectEvents("delete 1", "delete 2")
	// The album is deleted: its members leave.
	call(t, s, "DELETE", "/classes/Album/"+album, nil, master)
	c.expectEvents("leave 1", "leave 2")
}

// A live join on a class that does not publish is refused (119), as a
// subscription to it is: its changes would never move the outer objects.
func TestLiveJoinOnAClassThatDoesNotPublish(t *testing.T) {
	s := startLive(t, "Photo", "Message")
	c := dial(t, wsURL(s))
	c.connect(nil)
	c.send(map[string]any{"op": "subscribe", "requestId": 1, "query": map[string]any{"className": "Photo", "where": inAlbum("x")}})
	c.expectError(119, "Class Album is not enabled")
	c.send(map[string]any{"op": "subscribe", "requestId": 2, "query": map[string]any{"className": "Message", "where": inOpenRooms("$inQuery")}})
	c.expectError(119, "Class Room is not enabled")
	c.subscribe(3, "Message", map[string]any{"room": map[string]any{"$inQuery": map[string]any{"className": "Message", "where": map[string]any{}}}}, nil)
}

// Whoever may not get the owner is given nothing, as a find's $relatedTo
// answers nothing: the members enter when the owner becomes readable to
// the subscriber, and leave when it stops being.
func TestLiveRelatedToFollowsTheOwnersACL(t *testing.T) {
	s := startLive(t, "Photo", "Album")
	master := servertest.Master()
	alice, aliceToken := signUp(t, s, "alice")
	album := call(t, s, "POST", "/classes/Album", map[string]any{"ACL": map[string]any{"someone": map[string]any{"read": true}}}, master)["objectId"].(string)
	photo := call(t, s, "POST", "/classes/Photo", map[string]any{"n": 1}, master)["objectId"].(string)
	call(t, s, "PUT", "/classes/Album/"+album, relationOp("AddRelation", photo), master)

	c := dial(t, wsURL(s))
	c.connect(map[string]any{"sessionToken": aliceToken})
	c.subscribe(1, "Photo", inAlbum(album), nil)
	call(t, s, "PUT", "/classes/Album/"+album, map[string]any{"ACL": map[string]any{alice: map[string]any{"read": true}}}, master)
	if obj, _ := c.event("enter", 1); obj["objectId"] != photo {
		t.Fatalf("enter %v", obj)
	}
	if ids := relatedIDs(t, s, aliceToken, album); !slices.Equal(ids, []string{photo}) {
		t.Fatalf("the find answers %v", ids)
	}
	call(t, s, "PUT", "/classes/Album/"+album, map[string]any{"ACL": map[string]any{"someone": map[string]any{"read": true}}}, master)
	c.event("leave", 1)
	if ids := relatedIDs(t, s, aliceToken, album); len(ids) != 0 {
		t.Fatalf("the find answers %v", ids)
	}
}

// TestLiveRelatedToAgreesWithFind is the differential property test of
// $relatedTo: after random relation edits, owner ACL changes, photo
// updates, creations and deletions, the photos a client believes match
// are those a find with the same where returns.
func TestLiveRelatedToAgreesWithFind(t *testing.T) {
	s := startLive(t, "Photo", "Album")
	user, token := signUp(t, s, "carol")
	for seed := int64(1); seed <= 6; seed++ {
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) { relatedDifferential(t, s, user, token, seed) })
	}
}

// A change through Redis comes without the commit's relation rows: the
// joins then read the relation's members again at each change of the
// owner. The same differential holds.
func TestLiveRelatedToAgreesWithFindWithoutRelationEdits(t *testing.T) {
	s := startLive(t, "Photo", "Album")
	live.IgnoreRelationEdits(s.Live)
	user, token := signUp(t, s, "dora")
	for seed := int64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) { relatedDifferential(t, s, user, token, seed) })
	}
}

func relatedDifferential(t *testing.T, s *servertest.Server, user, token string, seed int64) {
	master := servertest.Master()
	{
		{
			rng := rand.New(rand.NewSource(seed))
			acl := func() map[string]any {
				if rng.Intn(3) == 0 {
					return map[string]any{"someoneElse": map[string]any{"read": true, "write": true}}
				}
				return map[string]any{"*": map[string]any{"read": true}, user: map[string]any{"read": true}}
			}
			album := call(t, s, "POST", "/classes/Album", map[string]any{"ACL": acl()}, master)["objectId"].(string)
			var photos []string
			for i := 0; i < 8; i++ {
				photos = append(photos, call(t, s, "POST", "/classes/Photo", map[string]any{"n": rng.Intn(4), "ACL": acl()}, master)["objectId"].(string))
			}
			pick := func() []string {
				var ids []string
				for _, p := range photos {
					if rng.Intn(3) == 0 {
						ids = append(ids, p)
					}
				}
				if len(ids) == 0 {
					ids = append(ids, photos[rng.Intn(len(photos))])
				}
				return ids
			}
			call(t, s, "PUT", "/classes/Album/"+album, relationOp("AddRelation", pick()...), master)
			where := inAlbum(album)
			if seed%2 == 0 {
				where["n"] = map[string]any{"$lt": 2}
			}
			c := dial(t, wsURL(s))
			c.connect(map[string]any{"sessionToken": token})
			c.subscribe(1, "Photo", where, nil)
			believed := map[string]bool{}
			for _, id := range findIDs(t, s, token, where) {
				believed[id] = true
			}
			for step := 0; step < 40; step++ {
				switch rng.Intn(6) {
				case 0:
					call(t, s, "PUT", "/classes/Album/"+album, relationOp("AddRelation", pick()...), master)
				case 1:
					call(t, s, "PUT", "/classes/Album/"+album, relationOp("RemoveRelation", pick()...), master)
				case 2:
					call(t, s, "PUT", "/classes/Album/"+album, map[string]any{"ACL": acl()}, master)
				case 3:
					call(t, s, "PUT", "/classes/Photo/"+photos[rng.Intn(len(photos))], map[string]any{"n": rng.Intn(4), "ACL": acl()}, master)
				case 4:
					photos = append(photos, call(t, s, "POST", "/classes/Photo", map[string]any{"n": rng.Intn(4), "ACL": acl()}, master)["objectId"].(string))
				case 5:
					if len(photos) > 2 {
						i := rng.Intn(len(photos))
						call(t, s, "DELETE", "/classes/Photo/"+photos[i], nil, master)
						photos = append(photos[:i], photos[i+1:]...)
					}
				}
			}
			// The sentinel: a new photo joins the relation last, after the
			// owner became public. Live joins are decided in commit order on
			// one goroutine, so once its enter arrives every earlier event of
			// the subscription has been queued before it.
			last := call(t, s, "POST", "/classes/Photo", map[string]any{"n": 0}, master)["objectId"].(string)
			call(t, s, "PUT", "/classes/Album/"+album, map[string]any{"ACL": map[string]any{"*": map[string]any{"read": true}}}, master)
			call(t, s, "PUT", "/classes/Album/"+album, relationOp("AddRelation", last), master)
			for {
				m := c.next()
				if m["requestId"] != float64(1) {
					continue
				}
				id := m["object"].(map[string]any)["objectId"].(string)
				switch m["op"] {
				case "create", "enter", "update":
					believed[id] = true
				case "leave", "delete":
					delete(believed, id)
				}
				if id == last && m["op"] == "enter" {
					break
				}
			}
			var got []string
			for id := range believed {
				got = append(got, id)
			}
			if want := findIDs(t, s, token, where); !slices.Equal(sortStrings(got), want) {
				t.Fatalf("the client believes %v match, a find returns %v", sortStrings(got), want)
			}
		}
	}
}

func findIDs(t *testing.T, s *servertest.Server, token string, where map[string]any) []string {
	t.Helper()
	r := s.Do(t, "GET", "/classes/Photo?limit=1000&where="+urlJSON(where), nil, asUser(token))
	if r.Status != 200 {
		t.Fatalf("find: %d %s", r.Status, r.Body)
	}
	var ids []string
	for _, o := range r.Map()["results"].([]any) {
		ids = append(ids, o.(map[string]any)["objectId"].(string))
	}
	return sortStrings(ids)
}

func relatedIDs(t *testing.T, s *servertest.Server, token, album string) []string {
	return findIDs(t, s, token, inAlbum(album))
}
