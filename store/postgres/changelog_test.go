package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/quarrydata/quarry/store"
	"github.com/quarrydata/quarry/store/postgres/pgtest"
)

// TestChangeLogReadAndCursor: ReadChanges hands over every instance's
// commits after a position, in commit order, with the previous versions
// writers carried and without schema or meta records; cursors are kept
// across adapters.
func TestChangeLogReadAndCursor(t *testing.T) {
	uri := pgtest.NewDatabase(t)
	a, b := open(t, uri), open(t, uri)
	ctx := context.Background()
	start, err := a.ChangesHead(ctx)
	if err != nil {
		t.Fatal(err)
	}
	commit(t, a, store.Record{Kind: store.KindObject, Class: "A", Key: "1", Value: []byte(`{"objectId":"1","n":1}`), Previous: []byte{}})
	commit(t, b, store.Record{Kind: store.KindMeta, Key: "k", Value: []byte("v")},
		store.Record{Kind: store.KindObject, Class: "A", Key: "1", Value: []byte(`{"objectId":"1","n":2}`), Previous: []byte(`{"objectId":"1","n":1}`)})
	var got []store.LoggedChange
	skipped, err := b.ReadChanges(ctx, start, 10, func(c store.LoggedChange) error {
		got = append(got, c)
		return nil
	})
	if err != nil || skipped != 0 || len(got) != 2 {
		t.Fatalf("read %d changes (skipped %d, err %v), want 2", len(got), skipped, err)
	}
	if got[0].ID >= got[1].ID || len(got[1].Records) != 1 || string(got[1].Records[0].Previous) != `{"objectId":"1","n":1}` ||
		got[0].Records[0].Previous == nil || len(got[0].Records[0].Previous) != 0 {
		t.Errorf("changes %+v", got)
	}
	if err := a.SaveCursor(ctx, "sub:x", got[0].ID); err != nil {
		t.Fatal(err)
	}
	if err := a.SaveCursor(ctx, "sub:x", got[1].ID); err != nil {
		t.Fatal(err)
	}
	if pos, ok, err := b.Cursor(ctx, "sub:x"); pos != got[1].ID || !ok || err != nil {
		t.Errorf("cursor read by the other adapter: %d %v %v", pos, ok, err)
	}
	if _, ok, _ := b.Cursor(ctx, "sub:none"); ok {
		t.Error("a cursor never saved was found")
	}
}

// TestLeaseOneHolder: a lease is held by one adapter at a time; another
// gets it once the holder releases it or its connection is gone.
func TestLeaseOneHolder(t *testing.T) {
	uri := pgtest.NewDatabase(t)
	a, b := open(t, uri), open(t, uri)
	ctx := context.Background()
	try := func(who interface {
		TryLease(context.Context, string) (store.Lease, bool, error)
	}, name string) (store.Lease, bool) {
		t.Helper()
		l, ok, err := who.TryLease(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		return l, ok
	}
	la, ok := try(a, "x")
	if !ok {
		t.Fatal("the first asker did not get the lease")
	}
	if _, ok := try(b, "x"); ok {
		t.Fatal("two adapters hold one lease")
	}
	if _, ok := try(b, "y"); !ok {
		t.Fatal("another name's lease was refused")
	}
	la.Release()
	lb, ok := try(b, "x")
	if !ok {
		t.Fatal("the lease was not free after Release")
	}
	if _, ok := try(a, "x"); ok {
		t.Fatal("the lease was given back to its former holder while held")
	}
	b.Close() // its session ends: PostgreSQL frees the locks
	select {
	case <-lb.Lost():
	case <-time.After(10 * time.Second):
		t.Error("a closed adapter's lease was not reported lost")
	}
	// Free once PostgreSQL has ended b's lease session.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, ok := try(a, "x"); ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the lease of a closed adapter was not free after 10s")
		}
		time.Sleep(10 * time.Millisecond) // PostgreSQL's backend ending: nothing to wait on
	}
}
