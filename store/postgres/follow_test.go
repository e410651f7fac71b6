package postgres_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/quarrydata/quarry/store"
	"github.com/quarrydata/quarry/store/postgres"
	"github.com/quarrydata/quarry/store/postgres/pgtest"
)

// collector gathers what a follower hands over.
type collector struct {
	mu      sync.Mutex
	commits [][]store.Record
	changed chan struct{}
}

func newCollector() *collector { return &collector{changed: make(chan struct{}, 1)} }

func (c *collector) add(fc store.ForeignCommit) {
	var records []store.Record
	for _, r := range fc.Records {
		if !fc.Superseded(r) {
			records = append(records, r)
		}
	}
	c.mu.Lock()
	c.commits = append(c.commits, records)
	c.mu.Unlock()
	select {
	case c.changed <- struct{}{}:
	default:
	}
}

// waitKeys waits until the collected commits' first keys are want ("-"
// for a commit whose records were all superseded).
func (c *collector) waitKeys(t *testing.T, want ...string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		c.mu.Lock()
		var got []string
		for _, cm := range c.commits {
			if len(cm) == 0 {
				got = append(got, "-") // every record superseded
				continue
			}
			got = append(got, cm[0].Key)
		}
		c.mu.Unlock()
		if fmt.Sprint(got) == fmt.Sprint(want) {
			return
		}
		if len(got) > len(want) {
			t.Fatalf("followed %v, want %v", got, want)
		}
		select {
		case <-c.changed:
		case <-deadline:
			t.Fatalf("followed %v after 10s, want %v", got, want)
		}
	}
}

func open(t testing.TB, uri string) *postgres.Adapter {
	t.Helper()
	a, err := postgres.Open(uri, postgres.Options{Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

func commit(t testing.TB, a store.Adapter, records ...store.Record) {
	t.Helper()
	if err := a.Commit(records); err != nil {
		t.Fatal(err)
	}
}

// TestFollow: an adapter follows the other's commits, in order, skips its
// own, starts where its Load stood and catches up after its connection is
// cut.
func TestFollow(t *testing.T) {
	uri := pgtest.NewDatabase(t)
	a, b := open(t, uri), open(t, uri)
	commit(t, a, obj("C", "before", `{"objectId":"before"}`))
	if n := len(loadAll(t, b)); n != 1 {
		t.Fatalf("loaded %d records", n)
	}
	got := newCollector()
	stop, err := b.Follow(b.Position(), got.add)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	commit(t, a, obj("C", "a1", `{"objectId":"a1"}`), join("r:C", "a1:x"))
	commit(t, b, obj("C", "b1", `{"objectId":"b1"}`)) // own: skipped
	commit(t, a, del(store.KindObject, "C", "a1"))
	got.waitKeys(t, "a1", "a1")
	if c := got.commits[0]; len(c) != 2 || c[1].Kind != store.KindJoin || c[1].Value == nil {
		t.Fatalf("first commit followed as %+v", c)
	}
	if c := got.commits[1]; c[0].Value != nil {
		t.Fatalf("delete followed as %+v", c)
	}

	// Cut every connection of the database; the follower reconnects and
	// catches up from its position.
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"); err != nil {
		t.Fatal(err)
	}
	c := open(t, uri)
	commit(t, c, obj("C", "c1", `{"objectId":"c1"}`))
	commit(t, c, obj("C", "c2", `{"objectId":"c2"}`))
	got.waitKeys(t, "a1", "a1", "c1", "c2")
}

// TestFollowOwnLaterWrite: a record of a foreign change older than this
// instance's own later write of it is Superseded (applying it would undo
// the newer write in memory); other records of that change are not.
func TestFollowOwnLaterWrite(t *testing.T) {
	uri := pgtest.NewDatabase(t)
	a, b := open(t, uri), open(t, uri)
	loadAll(t, b)
	// a's commit lands before b follows; b then writes x itself.
	commit(t, a, obj("C", "x", `{"objectId":"x","v":"a"}`), obj("C", "y", `{"objectId":"y"}`))
	commit(t, b, obj("C", "x", `{"objectId":"x","v":"b"}`))
	got := newCollector()
	stop, err := b.Follow(b.Position(), got.add)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	commit(t, a, obj("C", "z", `{"objectId":"z"}`))
	got.waitKeys(t, "y", "z")
	if n := len(got.commits[0]); n != 1 {
		t.Fatalf("the older change of x was handed over: %+v", got.commits[0])
	}
}

// TestFollowPrevious: the previous version a commit carries for an object
// (store.Record.Previous) reaches the follower as it was sent: an object,
// "there was none", or nothing (not carried); a _changes row written in
// the format without it reads as not carried.
func TestFollowPrevious(t *testing.T) {
	uri := pgtest.NewDatabase(t)
	a, b := open(t, uri), open(t, uri)
	loadAll(t, b)
	got := newCollector()
	stop, err := b.Follow(b.Position(), got.add)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	with := func(r store.Record, previous []byte) store.Record { r.Previous = previous; return r }
	v1, v2 := `{"objectId":"k1","n":1,"s":"<&>"}`, `{"objectId":"k1","n":2}`
	cases := []struct {
		name   string
		record store.Record
		want   []byte // nil: not carried
	}{
		{"created", with(obj("K", "k1", v1), []byte{}), []byte{}},
		{"updated", with(obj("K", "k1", v2), []byte(v1)), []byte(v1)},
		{"deleted", with(del(store.KindObject, "K", "k1"), []byte(v2)), []byte(v2)},
		{"not carried", obj("M", "m1", `{"objectId":"m1"}`), nil},
	}
	var keys []string
	for _, c := range cases {
		commit(t, a, c.record)
		keys = append(keys, c.record.Key)
	}
	// A row as an instance without previous versions wrote it.
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	old := `[{"kind":"o","class":"K","key":"old","value":"` + base64.StdEncoding.EncodeToString([]byte(`{"objectId":"old"}`)) + `"}]`
	if _, err := conn.Exec(ctx, `INSERT INTO "_changes" ("origin", "records") VALUES ('an older instance', $1)`, []byte(old)); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `SELECT pg_notify('quarry_changes', '')`); err != nil {
		t.Fatal(err)
	}
	got.waitKeys(t, append(keys, "old")...)
	for i, c := range cases {
		r := got.commits[i][0]
		if (r.Previous == nil) != (c.want == nil) || !sameJSON(r.Previous, c.want) {
			t.Errorf("%s: followed previous %q, want %q", c.name, r.Previous, c.want)
		}
		if (r.Value == nil) != (c.record.Value == nil) {
			t.Errorf("%s: followed value %q", c.name, r.Value)
		}
	}
	if r := got.commits[len(cases)][0]; r.Previous != nil || string(r.Value) != `{"objectId":"old"}` {
		t.Errorf("the old-format row followed as %+v", r)
	}
}

// sameJSON reports whether a and b hold equal JSON values (both empty
// counts as equal).
func sameJSON(a, b []byte) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// TestCommitFailureLeavesNothing: a commit refused inside its transaction,
// before the pipelined writes (a value that is not JSON) or by the server
// among them (a key PostgreSQL cannot hold), leaves no row and no change,
// and the adapter's next commits go through on the connections it keeps.
func TestCommitFailureLeavesNothing(t *testing.T) {
	uri := pgtest.NewDatabase(t)
	a := open(t, uri)
	loadAll(t, a)
	commit(t, a, sch("C", `{"className":"C","fields":{"n":{"type":"Number"}}}`))
	cases := []struct {
		name   string
		record store.Record
	}{
		{"not JSON", obj("C", "bad1", `{"n":`)},
		{"invalid UTF-8 key", obj("C", "bad\xff", `{"n":1}`)},
	}
	for i, c := range cases {
		err := a.Commit([]store.Record{obj("C", fmt.Sprint("with", i), `{"n":1}`), c.record})
		if err == nil {
			t.Fatalf("%s: committed", c.name)
		}
		t.Logf("%s: %v", c.name, err)
		for j := range 4 { // more than one pooled connection
			commit(t, a, obj("C", fmt.Sprintf("ok%d%d", i, j), `{"n":2}`))
		}
	}
	var keys []string
	for _, r := range loadAll(t, open(t, uri)) {
		if r.Kind == store.KindObject {
			keys = append(keys, r.Key)
		}
	}
	if want := "[ok00 ok01 ok02 ok03 ok10 ok11 ok12 ok13]"; fmt.Sprint(keys) != want {
		t.Fatalf("stored %v, want %s", keys, want)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var changes int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM "_changes"`).Scan(&changes); err != nil {
		t.Fatal(err)
	}
	if changes != 1+8 {
		t.Fatalf("%d changes, want 9 (the schema and the good commits)", changes)
	}
}

// TestCommitSeveralVersionsOfOneObject: a Commit holding an object's
// versions one after the other (updates of one object decided in a run)
// leaves the last in its row, and the others follow every version in
// order, each a record of the one change.
func TestCommitSeveralVersionsOfOneObject(t *testing.T) {
	uri := pgtest.NewDatabase(t)
	a, b := open(t, uri), open(t, uri)
	commit(t, a, obj("C", "x", `{"objectId":"x","n":0}`))
	loadAll(t, b)
	got := newCollector()
	stop, err := b.Follow(b.Position(), got.add)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	commit(t, a, obj("C", "x", `{"objectId":"x","n":1}`), obj("C", "y", `{"objectId":"y"}`),
		obj("C", "x", `{"objectId":"x","n":2}`), obj("C", "x", `{"objectId":"x","n":3}`))
	commit(t, a, obj("C", "z", `{"objectId":"z"}`), del(store.KindObject, "C", "z"))
	got.waitKeys(t, "x", "z") // each commit by its first record
	var versions []string
	for _, r := range got.commits[0] {
		versions = append(versions, string(r.Value))
	}
	want := []string{`{"objectId":"x","n":1}`, `{"objectId":"y"}`, `{"objectId":"x","n":2}`, `{"objectId":"x","n":3}`}
	if fmt.Sprint(versions) != fmt.Sprint(want) {
		t.Fatalf("followed %q, want %q", versions, want)
	}
	rows := map[string]string{}
	for _, r := range loadAll(t, open(t, uri)) {
		if r.Kind == store.KindObject {
			rows[r.Key] = string(r.Value)
		}
	}
	if len(rows) != 2 || rows["y"] == "" {
		t.Fatalf("rows %v, want x and y (z created and deleted in one commit)", rows)
	}
	var n map[string]any
	if err := json.Unmarshal([]byte(rows["x"]), &n); err != nil || n["n"] != 3.0 {
		t.Fatalf("x's row holds %s, want its last version (n 3)", rows["x"])
	}
}
