package postgres

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quarrydata/quarry/store"
	"github.com/quarrydata/quarry/store/postgres/pgtest"
)

func TestOwnParams(t *testing.T) {
	var o Options
	got, err := ownParams("postgres://u:pw@h/db?sslmode=disable&changeRetention=6h", &o)
	if err != nil || o.ChangeRetention != 6*time.Hour || strings.Contains(got, "changeRetention") || !strings.Contains(got, "sslmode=disable") {
		t.Fatalf("ownParams = %q, %v, %v", got, o.ChangeRetention, err)
	}
	if _, err := ownParams("postgres://h/db?changeRetention=soon", &o); err == nil || strings.Contains(err.Error(), "pw") {
		t.Fatalf("a bad changeRetention: %v", err)
	}
}

// TestPrunedChanges: a follower whose position was pruned says so and
// follows what is left.
func TestPrunedChanges(t *testing.T) {
	uri := pgtest.NewDatabase(t)
	var mu sync.Mutex
	var logs []string
	logf := func(format string, args ...any) {
		mu.Lock()
		logs = append(logs, format)
		mu.Unlock()
	}
	a, err := Open(uri, Options{ChangeRetention: time.Microsecond})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(uri, Options{Logf: logf})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.Load(func(store.Record) error { return nil }); err != nil {
		t.Fatal(err)
	}
	rec := func(key string) []store.Record {
		return []store.Record{{Kind: store.KindObject, Class: "C", Key: key, Value: []byte(`{}`)}}
	}
	for _, k := range []string{"x", "y"} {
		if err := a.Commit(rec(k)); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.pruneOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The guard keys those changes wrote went with them.
	var kept int
	if err := a.pool.QueryRow(context.Background(), `SELECT count(*) FROM `+quote(tableVersions)).Scan(&kept); err != nil || kept != 0 {
		t.Fatalf("%s rows left after pruning: %d %v", tableVersions, kept, err)
	}
	got := make(chan string, 10)
	stop, err := b.Follow(b.Position(), func(fc store.ForeignCommit) { got <- fc.Records[0].Key })
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if err := a.Commit(rec("z")); err != nil {
		t.Fatal(err)
	}
	select {
	case k := <-got:
		if k != "z" {
			t.Fatalf("followed %q first, want z", k)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("nothing followed")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(logs) == 0 {
		t.Fatal("the pruned position was not reported")
	}
}
