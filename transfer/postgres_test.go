package transfer_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/quarrydata/quarry/server/servertest"
	"github.com/quarrydata/quarry/transfer"
)

// startPostgres runs a throw-away PostgreSQL cluster on 127.0.0.1 and
// returns its URI; the test is skipped where PostgreSQL is not installed.
func startPostgres(t *testing.T) string {
	t.Helper()
	initdb, err := exec.LookPath("initdb")
	if err != nil {
		t.Skip("PostgreSQL is not installed (no initdb)")
	}
	pgctl, err := exec.LookPath("pg_ctl")
	if err != nil {
		t.Skip("PostgreSQL is not installed (no pg_ctl)")
	}
	base, err := os.MkdirTemp("", "quarry-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	os.Chmod(base, 0o755)
	data := filepath.Join(base, "data")
	os.Mkdir(data, 0o700)
	var as []string // PostgreSQL refuses to run as root
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Skip("running as root and there is no postgres user")
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(data, uid, gid); err != nil {
			t.Fatal(err)
		}
		as = []string{"runuser", "-u", "postgres", "--"}
	}
	run := func(args ...string) {
		t.Helper()
		args = append(as, args...)
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	run(initdb, "-D", data, "-A", "trust", "-U", "postgres", "--no-sync")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	run(pgctl, "-D", data, "-l", filepath.Join(data, "server.log"), "-w", "start",
		"-o", fmt.Sprintf("-c listen_addresses=127.0.0.1 -p %d -k %s -c fsync=off", port, data))
	t.Cleanup(func() {
		args := append(as, pgctl, "-D", data, "-m", "immediate", "stop")
		exec.Command(args[0], args[1:]...).Run()
	})
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
}

// TestImportFromPostgres reads a Parse Server database straight from
// PostgreSQL (tables laid out as Parse Server's PostgreSQL adapter does).
func TestImportFromPostgres(t *testing.T) {
	uri := startPostgres(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	sql, err := os.ReadFile("testdata/parse-postgres.sql")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.PgConn().Exec(ctx, string(sql)).ReadAll(); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)

	var last transfer.Progress
	db, sum := importInto(t, uri, transfer.ImportOptions{Progress: func(p transfer.Progress) { last = p }})
	if last.TotalBytes != 11 || last.Bytes != 11 { // rows of the Parse tables (never analysed: counted)
		t.Errorf("last progress %+v, want 11 of 11 rows", last)
	}
	want := map[string]int64{"_User": 2, "_Session": 1, "Post": 2, "_GlobalConfig": 1}
	if !reflect.DeepEqual(sum.Objects, want) || sum.Relations != 2 || len(sum.Skipped) > 0 {
		t.Fatalf("summary %+v", sum)
	}
	s := serve(t, db)
	m := servertest.Master()
	for _, u := range []struct{ name, pw string }{{"alice", "alice-password"}, {"Bob", "bob-password"}} {
		if r := s.Do(t, "POST", "/login", map[string]any{"username": u.name, "password": u.pw}, servertest.App()); r.Status != 200 {
			t.Errorf("login %s: %d %s", u.name, r.Status, r.Body)
		}
	}
	h := servertest.App()
	h["X-Parse-Session-Token"] = "r:pgsessiontoken0001"
	if me := get(t, s, "/users/me", h); me["username"] != "alice" {
		t.Errorf("session of alice: %v", me)
	}
	post := get(t, s, "/classes/Post/postHello1", m)
	delete(post, "cover")
	wantPost := map[string]any{
		"objectId": "postHello1", "title": "Hello",
		"createdAt": "2020-02-02T02:02:02.000Z", "updatedAt": "2020-02-03T02:02:02.000Z",
		"author":    map[string]any{"__type": "Pointer", "className": "_User", "objectId": "aliceUser1"},
		"location":  map[string]any{"__type": "GeoPoint", "latitude": 52.5, "longitude": 13.4},
		"area":      map[string]any{"__type": "Polygon", "coordinates": []any{[]any{52.0, 13.0}, []any{52.0, 14.0}, []any{53.0, 14.0}, []any{52.0, 13.0}}},
		"published": map[string]any{"__type": "Date", "iso": "2020-02-02T02:02:02.000Z"},
		"views":     42.0, "tags": []any{"go", "parse"},
		"meta": map[string]any{"seen": map[string]any{"__type": "Date", "iso": "2020-01-01T00:00:00.000Z"}, "n": 7.0},
		"ACL": map[string]any{"*": map[string]any{"read": true}, "role:Editors": map[string]any{"write": true},
			"aliceUser1": map[string]any{"write": true}},
		"likes": map[string]any{"__type": "Relation", "className": "_User"},
	}
	if !reflect.DeepEqual(post, wantPost) {
		t.Errorf("post:\n got %v\nwant %v", post, wantPost)
	}
	open := get(t, s, "/classes/Post/postOpen02", servertest.App())
	if open["views"] != 7.5 || open["ACL"] != nil || open["author"] != nil {
		t.Errorf("open post %v: NULL columns are absent fields, no _rperm is public", open)
	}
	likes := get(t, s, `/classes/_User?where={"$relatedTo":{"object":{"__type":"Pointer","className":"Post","objectId":"postHello1"},"key":"likes"}}`, m)
	if n := len(likes["results"].([]any)); n != 2 {
		t.Errorf("post likes %d users, want 2", n)
	}
	sc := get(t, s, "/schemas/Post", m)
	if clp := sc["classLevelPermissions"].(map[string]any); !reflect.DeepEqual(clp["create"], map[string]any{"role:Editors": true}) {
		t.Errorf("CLP %v", clp)
	}
	if _, leaked := sc["fields"].(map[string]any)["_rperm"]; leaked {
		t.Errorf("schema fields %v hold Parse Server's _rperm", sc["fields"])
	}
}
