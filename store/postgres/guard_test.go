package postgres_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/quarrydata/quarry/store"
	"github.com/quarrydata/quarry/store/postgres"
	"github.com/quarrydata/quarry/store/postgres/pgtest"
)

const userSchema = `{"className":"_User","fields":{"objectId":{"type":"String"},"username":{"type":"String"},"email":{"type":"String"}}}`

// A guarded commit is refused, alone in its group, when another Adapter
// wrote a guarded key after its base; a key this Adapter wrote last, or
// one written before the base, lets it through.
func TestGuardedCommit(t *testing.T) {
	uri := pgtest.NewDatabase(t)
	a, b := open(t, uri), open(t, uri)
	if err := a.Load(func(store.Record) error { return nil }); err != nil {
		t.Fatal(err)
	}
	base := a.Applied()
	key := store.ObjectKey("Item", "x")
	if err := a.Commit([]store.Record{obj("Item", "x", `{"objectId":"x","n":1}`)}); err != nil {
		t.Fatal(err)
	}
	// a wrote x last: its copy is current whatever its base.
	if err := a.CommitGuarded([]store.Record{obj("Item", "x", `{"objectId":"x","n":2}`)}, []store.Guard{{Key: key, Base: base}}); err != nil {
		t.Fatalf("own key: %v", err)
	}
	// b has not seen a's commits: refused, and told which change to await.
	err := b.CommitGuarded([]store.Record{obj("Item", "x", `{"objectId":"x","n":9}`)}, []store.Guard{{Key: key, Base: base}})
	var stale *store.StaleError
	if !errors.As(err, &stale) || !errors.Is(err, store.ErrStale) || stale.Through <= base {
		t.Fatalf("stale write: %v", err)
	}
	// A unique value guard works the same way.
	claim := "u\x1fusername\x1fbob"
	if err := a.CommitGuarded([]store.Record{obj("Item", "y", `{"objectId":"y"}`)}, []store.Guard{{Key: claim, Base: base}}); err != nil {
		t.Fatal(err)
	}
	// Several of b's commits in flight at once: the stale one fails, the
	// others commit.
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			guards := []store.Guard{{Key: store.ObjectKey("Item", "z"+string(rune('0'+i))), Base: base}}
			if i == 0 {
				guards = append(guards, store.Guard{Key: claim, Base: base})
			}
			errs[i] = b.CommitGuarded([]store.Record{obj("Item", "z"+string(rune('0'+i)), `{"n":1}`)}, guards)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if (i == 0) != errors.Is(err, store.ErrStale) {
			t.Errorf("commit %d of the group: %v", i, err)
		}
	}
	// Once b's base is past the change, its write goes through.
	head, err := b.Head(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := b.CommitGuarded([]store.Record{obj("Item", "x", `{"objectId":"x","n":3}`)}, []store.Guard{{Key: key, Base: head}}); err != nil {
		t.Fatalf("current write: %v", err)
	}
}

// PostgreSQL keeps usernames (case-insensitively) unique whatever the
// instances do, and the refusal names the field.
func TestUniqueIndexes(t *testing.T) {
	uri := pgtest.NewDatabase(t)
	a := open(t, uri)
	if err := a.Commit([]store.Record{sch("_User", userSchema), obj("_User", "u1", `{"objectId":"u1","username":"Bob","email":"b@x.io"}`)}); err != nil {
		t.Fatal(err)
	}
	err := a.Commit([]store.Record{obj("_User", "u2", `{"objectId":"u2","username":"bob"}`)})
	var u *store.UniqueError
	if !errors.As(err, &u) || u.Class != "_User" || u.Field != "username" {
		t.Fatalf("duplicate username: %v", err)
	}
	err = a.Commit([]store.Record{obj("_User", "u3", `{"objectId":"u3","username":"carol","email":"B@X.IO"}`)})
	if !errors.As(err, &u) || u.Field != "email" {
		t.Fatalf("duplicate email: %v", err)
	}
}

// Duplicates written before the unique index existed are reported when an
// instance opens the database, and left as they are: no index, no merge,
// no failure to start.
func TestUniqueDuplicatesReported(t *testing.T) {
	uri := pgtest.NewDatabase(t)
	a := open(t, uri)
	if err := a.Commit([]store.Record{sch("_User", userSchema), obj("_User", "u1", `{"objectId":"u1","username":"dup"}`)}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `DROP INDEX "_User:username:unique"`); err != nil {
		t.Fatal(err)
	}
	if err := a.Commit([]store.Record{obj("_User", "u2", `{"objectId":"u2","username":"DUP"}`)}); err != nil {
		t.Fatal(err)
	}
	var logged []string
	b, err := postgres.Open(uri, postgres.Options{Logf: func(f string, args ...any) { logged = append(logged, f) }})
	if err != nil {
		t.Fatalf("open with duplicates: %v", err)
	}
	defer b.Close()
	w := b.Warnings()
	if len(logged) != 1 {
		t.Errorf("logged: %q", logged)
	}
	if len(w) != 1 || !strings.Contains(w[0], "username") || !strings.Contains(w[0], `"dup"`) {
		t.Fatalf("warnings: %q", w)
	}
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM "_User"`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("rows: %d %v", n, err)
	}
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT to_regclass('"_User:username:unique"') IS NOT NULL`).Scan(&exists); err != nil || exists {
		t.Fatalf("index made over duplicates: %v %v", exists, err)
	}
}

// While one Adapter holds a key with LockKeys, another's guarded commit
// that writes it is refused as stale, naming the key, and nothing is
// written; the holder's own commits go through; once it unlocks, the
// other's LockKeys reads a head that includes the holder's commit, and
// its commit goes through.
func TestLockKeys(t *testing.T) {
	uri := pgtest.NewDatabase(t)
	a, b := open(t, uri), open(t, uri)
	ctx := context.Background()
	key := store.ObjectKey("Item", "x")
	if err := a.Commit([]store.Record{obj("Item", "x", `{"objectId":"x","n":1}`)}); err != nil {
		t.Fatal(err)
	}
	head, unlock, err := a.LockKeys(ctx, []string{key, key})
	if err != nil {
		t.Fatal(err)
	}
	err = b.CommitGuarded([]store.Record{obj("Item", "x", `{"objectId":"x","n":9}`)}, []store.Guard{{Key: key, Base: head}})
	var stale *store.StaleError
	if !errors.As(err, &stale) || len(stale.Keys) != 1 || stale.Keys[0] != key {
		t.Fatalf("a commit of a key another Adapter holds: %v (%+v)", err, stale)
	}
	// A commit of another key is not held up.
	other := store.ObjectKey("Item", "y")
	if err := b.CommitGuarded([]store.Record{obj("Item", "y", `{"objectId":"y"}`)}, []store.Guard{{Key: other, Base: head}}); err != nil {
		t.Fatalf("another key: %v", err)
	}
	if err := a.CommitGuarded([]store.Record{obj("Item", "x", `{"objectId":"x","n":2}`)}, []store.Guard{{Key: key, Base: head}}); err != nil {
		t.Fatalf("the holder's commit: %v", err)
	}
	committed, err := a.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	unlock()
	unlock() // a second call does nothing
	bHead, bUnlock, err := b.LockKeys(ctx, []string{key})
	if err != nil {
		t.Fatal(err)
	}
	defer bUnlock()
	if bHead < committed {
		t.Fatalf("LockKeys read head %d, before the holder's commit %d", bHead, committed)
	}
	if err := b.CommitGuarded([]store.Record{obj("Item", "x", `{"objectId":"x","n":3}`)}, []store.Guard{{Key: key, Base: bHead}}); err != nil {
		t.Fatalf("after the unlock: %v", err)
	}
}
