package postgres_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/quarrydata/quarry/store"
	"github.com/quarrydata/quarry/store/postgres/pgtest"
)

// TestFollowCarriedChanges: a follower hands over, in order and intact,
// changes small enough for their notification to carry them and changes
// too large for it, across an id no commit used (a rolled-back append)
// and notifications that carry nothing it can use.
func TestFollowCarriedChanges(t *testing.T) {
	uri := pgtest.NewDatabase(t)
	a, b := open(t, uri), open(t, uri)
	loadAll(t, b)
	got := newCollector()
	stop, err := b.Follow(b.Position(), got.add)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	large := `{"objectId":"x2","s":"` + strings.Repeat("ü", 6000) + `"}`
	values := map[string]string{}
	steps := []struct {
		name string
		do   func() string // the key it commits, "" for none
	}{
		{"small", func() string { return put(t, a, values, "x1", `{"objectId":"x1","n":1}`) }},
		{"too large to carry", func() string { return put(t, a, values, "x2", large) }},
		{"small after a large one", func() string { return put(t, a, values, "x3", `{"objectId":"x3"}`) }},
		{"an id no commit used", func() string {
			tx, err := conn.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO "_changes" ("origin", "records") VALUES ('rolled back', '\x5b5d')`); err != nil {
				t.Fatal(err)
			}
			tx.Rollback(ctx)
			return ""
		}},
		{"small after the gap", func() string { return put(t, a, values, "x4", `{"objectId":"x4"}`) }},
		{"notifications carrying nothing usable", func() string {
			for _, payload := range []string{"", "not an id", "99999999", "99999999 someone AAAA", "1 someone !!"} {
				if _, err := conn.Exec(ctx, `SELECT pg_notify('quarry_changes', $1)`, payload); err != nil {
					t.Fatal(err)
				}
			}
			return ""
		}},
		{"small after those", func() string { return put(t, a, values, "x5", `{"objectId":"x5"}`) }},
		{"own: skipped", func() string { put(t, b, values, "own", `{"objectId":"own"}`); return "" }},
		{"small after an own one", func() string { return put(t, a, values, "x6", `{"objectId":"x6"}`) }},
	}
	var want []string
	for _, s := range steps {
		if k := s.do(); k != "" {
			want = append(want, k)
			got.waitKeys(t, want...)
		}
	}
	for i, c := range got.commits {
		if len(c) != 1 || !sameJSON(c[0].Value, []byte(values[c[0].Key])) {
			t.Errorf("commit %d (%s) followed as %.80q", i, want[i], c)
		}
	}
}

// put commits key's value on a and notes it in values.
func put(t *testing.T, a interface{ Commit([]store.Record) error }, values map[string]string, key, value string) string {
	t.Helper()
	if err := a.Commit([]store.Record{obj("X", key, value)}); err != nil {
		t.Fatal(err)
	}
	values[key] = value
	return key
}
