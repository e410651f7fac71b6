package postgres_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/quarrydata/quarry/store"
	"github.com/quarrydata/quarry/store/postgres"
	"github.com/quarrydata/quarry/store/postgres/pgtest"
)

// PostgreSQL keeps each authData.<provider>.id linked to one user, across
// instances that never asked each other, for providers nobody listed: the
// refusal names _User.authData; unlinking, changing the id or deleting the
// user frees it, and an id of another provider or a user's own id again is
// no conflict.
func TestAuthDataIDsUnique(t *testing.T) {
	uri := pgtest.NewDatabase(t)
	a, b := open(t, uri), open(t, uri)
	user := func(id, authData string) store.Record {
		return obj("_User", id, `{"objectId":"`+id+`","authData":`+authData+`}`)
	}
	steps := []struct {
		name   string
		on     *postgres.Adapter
		record store.Record
		taken  bool
	}{
		{"first link", a, user("u1", `{"facebook":{"id":"F1","access_token":"t"}}`), false},
		{"same id, other user, other instance", b, user("u2", `{"facebook":{"id":"F1"}}`), true},
		{"same id, other provider", b, user("u2", `{"myoauth":{"id":"F1"}}`), false},
		{"own id again (a refreshed token)", b, user("u1", `{"facebook":{"id":"F1","access_token":"t2"}}`), false},
		{"second provider of a user already linked", a, user("u3", `{"myoauth":{"id":"F1"}}`), true},
		{"an entry without an id links no one", a, user("u3", `{"anon":{"token":"x"},"other":{"id":""}}`), false},
		{"unlinked (null entry)", a, user("u1", `{"facebook":null}`), false},
		{"the freed id", b, user("u4", `{"facebook":{"id":"F1"}}`), false},
		{"id changed", b, user("u4", `{"facebook":{"id":"F2"}}`), false},
		{"old id free after the change", a, user("u5", `{"facebook":{"id":"F1"}}`), false},
		{"user deleted", a, store.Record{Kind: store.KindObject, Class: "_User", Key: "u5"}, false},
		{"deleted user's id free", b, user("u6", `{"facebook":{"id":"F1"}}`), false},
		{"two providers, one taken", a, user("u7", `{"github":{"id":"G1"},"facebook":{"id":"F2"}}`), true},
		{"nothing of the refused write kept", b, user("u8", `{"github":{"id":"G1"}}`), false},
		{"a NUL in a provider id", a, user("u9", `{"odd\u0000":{"id":"N\u0000"}}`), false},
		{"the same id with a NUL", b, user("u10", `{"odd\u0000":{"id":"N\u0000"}}`), true},
	}
	for _, s := range steps {
		err := s.on.Commit([]store.Record{s.record})
		var u *store.UniqueError
		switch {
		case s.taken && (!errors.As(err, &u) || u.Class != "_User" || u.Field != "authData" || !errors.Is(err, store.ErrUnique)):
			t.Errorf("%s: want a unique refusal of _User.authData, got %v", s.name, err)
		case !s.taken && err != nil:
			t.Errorf("%s: %v", s.name, err)
		}
	}
	// A group commit with a refused Commit in it: the others commit.
	errs := make(chan error, 3)
	for _, r := range []store.Record{user("g1", `{"x":{"id":"1"}}`), user("g2", `{"facebook":{"id":"F2"}}`), user("g3", `{"x":{"id":"3"}}`)} {
		go func() { errs <- a.Commit([]store.Record{r}) }()
	}
	var refused int
	for range 3 {
		if err := <-errs; errors.Is(err, store.ErrUnique) {
			refused++
		} else if err != nil {
			t.Error(err)
		}
	}
	if refused != 1 {
		t.Errorf("refused %d of the group, want 1", refused)
	}
}

// Users linked to one provider id before the index existed are named at
// Open, which still succeeds, and kept: no index is made and nothing is
// merged. Once an operator unlinks one, the next Open makes the index.
func TestAuthDataDuplicatesReported(t *testing.T) {
	uri := pgtest.NewDatabase(t)
	a := open(t, uri)
	commit(t, a, obj("_User", "u1", `{"objectId":"u1","authData":{"facebook":{"id":"F1"}}}`))
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `DROP INDEX "_authIds:unique"`); err != nil {
		t.Fatal(err)
	}
	commit(t, a, obj("_User", "u2", `{"objectId":"u2","authData":{"facebook":{"id":"F1"}}}`))
	// A database from before _authIds: the table is rebuilt from _User.
	if _, err := conn.Exec(ctx, `DROP TABLE "_authIds"`); err != nil {
		t.Fatal(err)
	}
	a.Close()
	var logged []string
	b, err := postgres.Open(uri, postgres.Options{Logf: func(f string, args ...any) { logged = append(logged, f) }})
	if err != nil {
		t.Fatalf("open with duplicates: %v", err)
	}
	w := b.Warnings()
	if len(logged) != 1 || len(w) != 1 || !strings.Contains(w[0], `authData.facebook.id "F1" in users u1, u2`) {
		t.Fatalf("logged %q, warnings %q", logged, w)
	}
	indexed := func() bool {
		var ok bool
		if err := conn.QueryRow(ctx, `SELECT to_regclass('"_authIds:unique"') IS NOT NULL`).Scan(&ok); err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if indexed() {
		t.Fatal("index made over duplicates")
	}
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM "_User"`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("users: %d %v", n, err)
	}
	commit(t, b, obj("_User", "u2", `{"objectId":"u2","authData":{"facebook":null}}`))
	b.Close()
	c := open(t, uri)
	if len(c.Warnings()) != 0 || !indexed() {
		t.Fatalf("after the duplicate was resolved: warnings %q, indexed %v", c.Warnings(), indexed())
	}
	if err := c.Commit([]store.Record{obj("_User", "u3", `{"objectId":"u3","authData":{"facebook":{"id":"F1"}}}`)}); !errors.Is(err, store.ErrUnique) {
		t.Fatalf("enforced after the rebuild: %v", err)
	}
}
