package transfer_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server/servertest"
	"github.com/quarrydata/quarry/store"
	"github.com/quarrydata/quarry/transfer"
)

// importInto imports from into a new data file and returns its path.
func importInto(t *testing.T, from string, opts transfer.ImportOptions) (string, *transfer.Summary) {
	t.Helper()
	return importIntoFile(t, from, filepath.Join(t.TempDir(), "quarry.db"), opts)
}

// importIntoFile imports from into a new data file at db.
func importIntoFile(t *testing.T, from, db string, opts transfer.ImportOptions) (string, *transfer.Summary) {
	t.Helper()
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	opts.From = from
	sum, err := transfer.Import(context.Background(), st, opts)
	if err != nil {
		t.Fatal(err)
	}
	return db, sum
}

func serve(t *testing.T, db string) *servertest.Server {
	t.Helper()
	return servertest.Start(t, func(o *config.Options) { o.DatabaseURI = db })
}

func get(t *testing.T, s *servertest.Server, path string, headers map[string]string) map[string]any {
	t.Helper()
	r := s.Do(t, "GET", path, nil, headers)
	if r.Status != 200 {
		t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
	}
	return r.Map()
}

func TestImportMongoexportFixtures(t *testing.T) {
	db, sum := importInto(t, "testdata/mongoexport", transfer.ImportOptions{})
	wantObjects := map[string]int64{"_User": 2, "_Session": 2, "_Role": 1, "Post": 2, "_GlobalConfig": 1}
	if !reflect.DeepEqual(sum.Objects, wantObjects) {
		t.Errorf("objects %v, want %v", sum.Objects, wantObjects)
	}
	if sum.Relations != 3 || sum.Sessions != 1 {
		t.Errorf("relations %d sessions %d, want 3 and 1", sum.Relations, sum.Sessions)
	}
	if sum.Skipped["Post: no usable _id"] != 1 {
		t.Errorf("skipped %v, want the Post without _id", sum.Skipped)
	}
	if len(sum.Dropped) != 0 {
		t.Errorf("dropped %v: Parse Server's account fields (_perishable_token, _failed_login_count …) are kept", sum.Dropped)
	}

	s := serve(t, db)
	m := servertest.Master()
	// Users keep their Parse Server passwords (bcryptjs $2b$ and $2a$ hashes).
	for _, u := range []struct{ name, pw string }{{"alice", "alice-password"}, {"Bob", "bob-password"}} {
		r := s.Do(t, "POST", "/login", map[string]any{"username": u.name, "password": u.pw}, servertest.App())
		if r.Status != 200 || r.Map()["sessionToken"] == nil {
			t.Errorf("login %s: %d %s", u.name, r.Status, r.Body)
		}
		r = s.Do(t, "POST", "/login", map[string]any{"username": u.name, "password": "wrong"}, servertest.App())
		if r.Status == 200 {
			t.Errorf("login %s with a wrong password succeeded", u.name)
		}
	}
	// Existing sessions stay valid: a _Session and a legacy _User._session_token.
	for token, user := range map[string]string{"r:4f1d2c3b4a5968778695a4b3c2d1e0f1": "alice", "legacyBobToken42": "Bob"} {
		h := servertest.App()
		h["X-Parse-Session-Token"] = token
		if me := get(t, s, "/users/me", h); me["username"] != user {
			t.Errorf("session %s is %v, want %s", token, me["username"], user)
		}
	}

	post := get(t, s, "/classes/Post/postHello1", m)
	want := map[string]any{
		"objectId": "postHello1", "title": "Hello",
		"createdAt": "2020-02-02T02:02:02.000Z", "updatedAt": "2020-02-03T02:02:02.000Z",
		"author":    map[string]any{"__type": "Pointer", "className": "_User", "objectId": "aliceUser1"},
		"location":  map[string]any{"__type": "GeoPoint", "latitude": 52.5, "longitude": 13.4},
		"area":      map[string]any{"__type": "Polygon", "coordinates": []any{[]any{52.0, 13.0}, []any{52.0, 14.0}, []any{53.0, 14.0}, []any{52.0, 13.0}}},
		"published": map[string]any{"__type": "Date", "iso": "2020-02-02T02:02:02.000Z"},
		"views":     42.0, "tags": []any{"go", "parse"},
		"meta":  map[string]any{"seen": map[string]any{"__type": "Date", "iso": "2020-01-01T00:00:00.000Z"}, "n": 7.0},
		"thumb": map[string]any{"__type": "Bytes", "base64": "aGk="},
		"ACL": map[string]any{"*": map[string]any{"read": true}, "role:Editors": map[string]any{"write": true},
			"aliceUser1": map[string]any{"write": true}},
		"likes": map[string]any{"__type": "Relation", "className": "_User"},
	}
	cover, _ := post["cover"].(map[string]any)
	if cover["name"] != "tfss-3c5a1e2d-cover.png" || cover["__type"] != "File" {
		t.Errorf("cover = %v", post["cover"])
	}
	delete(post, "cover")
	if !reflect.DeepEqual(post, want) {
		got, _ := json.Marshal(post)
		exp, _ := json.Marshal(want)
		t.Errorf("post:\n got %s\nwant %s", got, exp)
	}
	// Relations: who likes the post; who is in the role.
	likes := get(t, s, `/classes/_User?where={"$relatedTo":{"object":{"__type":"Pointer","className":"Post","objectId":"postHello1"},"key":"likes"}}`, m)
	if n := len(likes["results"].([]any)); n != 2 {
		t.Errorf("post likes %d users, want 2", n)
	}
	editors := get(t, s, `/classes/_User?where={"$relatedTo":{"object":{"__type":"Pointer","className":"_Role","objectId":"roleEdit01"},"key":"users"}}`, m)
	if res := editors["results"].([]any); len(res) != 1 || res[0].(map[string]any)["username"] != "alice" {
		t.Errorf("role members %v", res)
	}
	// The schema keeps CLPs and indexes (pointer keys renamed, _id_ as Parse shows it).
	sc := get(t, s, "/schemas/Post", m)
	clp := sc["classLevelPermissions"].(map[string]any)
	if !reflect.DeepEqual(clp["create"], map[string]any{"role:Editors": true}) || !reflect.DeepEqual(clp["readUserFields"], []any{"author"}) {
		t.Errorf("CLP %v", clp)
	}
	idx, _ := json.Marshal(sc["indexes"])
	if !strings.Contains(string(idx), `"_p_author_1":{"author":1}`) || !strings.Contains(string(idx), `"title_1":{"title":1}`) {
		t.Errorf("indexes %s", idx)
	}
	if f := sc["fields"].(map[string]any)["title"].(map[string]any); f["required"] != true {
		t.Errorf("title field %v, want required", f)
	}
	// Parse Config.
	if cfg := get(t, s, "/config", servertest.App()); cfg["params"].(map[string]any)["welcome"] != "Hello from Parse" {
		t.Errorf("config %v", cfg)
	}
	// A public user read hides nothing it should show and leaks no internals.
	u := get(t, s, "/users/bobUser002", m)
	for k := range u {
		if strings.HasPrefix(k, "_") {
			t.Errorf("user reply leaks %s", k)
		}
	}
	if ad, _ := u["authData"].(map[string]any); ad["facebook"] == nil {
		t.Errorf("authData %v", u["authData"])
	}
}

// TestImportDashboardExport: Parse Dashboard's per-class {"results": [...]}
// files import in REST form; relation fields come from their markers.
func TestImportDashboardExport(t *testing.T) {
	db, sum := importInto(t, "testdata/dashboard", transfer.ImportOptions{})
	if sum.Objects["Post"] != 2 || sum.Objects["_User"] != 1 || len(sum.Skipped) > 0 {
		t.Fatalf("summary %+v", sum)
	}
	s := serve(t, db)
	m := servertest.Master()
	post := get(t, s, "/classes/Post/dashPost01?include=author", m)
	if a, _ := post["author"].(map[string]any); a["username"] != "carol" {
		t.Errorf("author %v", post["author"])
	}
	if post["createdAt"] != "2021-04-05T06:07:08.090Z" || post["likes"] == nil {
		t.Errorf("post %v", post)
	}
	if c, _ := post["cover"].(map[string]any); c["name"] != "d41d8cd9_cover.jpg" || strings.Contains(fmt.Sprint(c["url"]), "parse.example.com") {
		t.Errorf("cover %v: the url should be Quarry's", c)
	}
	// The user is found by name, case-insensitively, as Quarry looks users up.
	users := get(t, s, `/classes/_User?where={"username":"carol"}`, m)
	if len(users["results"].([]any)) != 1 {
		t.Errorf("users %v", users)
	}
	h := servertest.App()
	r := s.Do(t, "GET", "/classes/Post/dashPost01", nil, h)
	if r.Status != 200 {
		t.Errorf("public read of a public post: %d %s", r.Status, r.Body)
	}
}

// TestImportKeepsServerSettings: a data file holding only server settings
// (a first start generated its master key) is still a new file to import
// into, and the settings stay.
func TestImportKeepsServerSettings(t *testing.T) {
	db := filepath.Join(t.TempDir(), "quarry.db")
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Commit([]store.Record{{Kind: store.KindMeta, Key: "masterKey", Value: []byte("generated")}}); err != nil {
		t.Fatal(err)
	}
	if _, err := transfer.Import(context.Background(), st, transfer.ImportOptions{From: "testdata/dashboard"}); err != nil {
		t.Fatalf("import into a file with settings only: %v", err)
	}
	_, err = transfer.Import(context.Background(), st, transfer.ImportOptions{From: "testdata/dashboard"})
	if !errors.Is(err, transfer.ErrNotEmpty) {
		t.Errorf("second import: %v, want ErrNotEmpty", err)
	}
	found := false
	st.Load(func(r store.Record) error {
		found = found || r.Kind == store.KindMeta && string(r.Value) == "generated"
		return nil
	})
	st.Close()
	if !found {
		t.Errorf("the master key setting is gone")
	}
}
