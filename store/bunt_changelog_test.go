package store

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/buntdb"
)

func readLog(t *testing.T, a ChangeLog, after int64) (skipped int64, got []LoggedChange) {
	t.Helper()
	skipped, err := a.ReadChanges(context.Background(), after, 100, func(c LoggedChange) error {
		got = append(got, c)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return skipped, got
}

// logString shows a change's records: kind, class, key, value, previous
// ("-" for a deletion or a previous not carried).
func logString(c LoggedChange) string {
	var parts []string
	for _, r := range c.Records {
		v, p := "-", "-"
		if r.Value != nil {
			v = string(r.Value)
		}
		if r.Previous != nil {
			p = "[" + string(r.Previous) + "]"
		}
		parts = append(parts, fmt.Sprintf("%c|%s|%s|%s|%s", r.Kind, r.Class, r.Key, v, p))
	}
	return fmt.Sprintf("%d: %s", c.ID, strings.Join(parts, " "))
}

// TestChangeLogKeepsCommits: once KeepChanges is called, every commit
// holding object or relation records is logged, in commit order, with
// previous versions; schema and meta records are not; the log and the
// cursors survive a reopen, never reach Load, and ids go on growing.
func TestChangeLogKeepsCommits(t *testing.T) {
	path := filepath.Join(t.TempDir(), "q.db")
	a, err := openBunt(path, defaultBuntOptions())
	if err != nil {
		t.Fatal(err)
	}
	mustCommit(t, a, Record{Kind: KindObject, Class: "A", Key: "before", Value: []byte(`{}`)}) // not kept yet
	if err := a.KeepChanges(0); err != nil {
		t.Fatal(err)
	}
	commits := [][]Record{
		{{Kind: KindObject, Class: "A", Key: "1", Value: []byte(`{"n":1}`), Previous: []byte{}}},
		{{Kind: KindSchema, Class: "A", Value: []byte(`{}`)}},
		{{Kind: KindMeta, Key: "k", Value: []byte(`v`)}},
		{{Kind: KindSchema, Class: "A", Value: []byte(`{}`)}, {Kind: KindObject, Class: "A", Key: "1", Value: []byte(`{"n":2}`), Previous: []byte(`{"n":1}`)},
			{Kind: KindJoin, Class: "r:A", Key: "1:2", Value: []byte{}}},
		{{Kind: KindObject, Class: "A", Key: "1", Previous: []byte(`{"n":2}`)}},
	}
	for _, c := range commits {
		mustCommit(t, a, c...)
	}
	want := []string{
		`1: o|A|1|{"n":1}|[]`,
		`2: o|A|1|{"n":2}|[{"n":1}] j|r:A|1:2||-`,
		`3: o|A|1|-|[{"n":2}]`,
	}
	check := func(a *buntAdapter, after int64, want []string) {
		t.Helper()
		skipped, got := readLog(t, a, after)
		if skipped != 0 || len(got) != len(want) {
			t.Fatalf("after %d: skipped %d, %d changes; want %d", after, skipped, len(got), len(want))
		}
		for i := range want {
			if s := logString(got[i]); s != want[i] {
				t.Errorf("change %d: %s, want %s", i, s, want[i])
			}
		}
	}
	check(a, 0, want)
	check(a, 2, want[2:])
	if err := a.SaveCursor(context.Background(), "sub:x", 2); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}

	b, err := openBunt(path, defaultBuntOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if head, _ := b.ChangesHead(context.Background()); head != 3 {
		t.Errorf("head after reopen %d, want 3", head)
	}
	if pos, ok, err := b.Cursor(context.Background(), "sub:x"); pos != 2 || !ok || err != nil {
		t.Errorf("cursor after reopen: %d %v %v", pos, ok, err)
	}
	if _, ok, _ := b.Cursor(context.Background(), "sub:y"); ok {
		t.Error("a cursor never saved was found")
	}
	if err := b.KeepChanges(0); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, b, Record{Kind: KindObject, Class: "A", Key: "2", Value: []byte(`{}`), Previous: []byte{}})
	check(b, 3, []string{`4: o|A|2|{}|[]`})
	for _, r := range loadAllRecords(t, b) {
		if r.Kind != KindObject && r.Kind != KindSchema && r.Kind != KindJoin && r.Kind != KindMeta {
			t.Errorf("Load handed over the store's own record %q", recordString(r))
		}
	}
	if err := b.Commit([]Record{{Kind: kindCursor, Key: "x", Value: []byte("1")}}); err == nil {
		t.Error("a caller committed a cursor record")
	}
}

// TestChangeLogPrunes: entries older than the retention go, the newest
// stays; a reader behind them is told how many it lost, and the ids go
// on from the newest after a reopen.
func TestChangeLogPrunes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "q.db")
	opts := defaultBuntOptions()
	opts.logPruneEvery = time.Nanosecond // after every group
	a, err := openBunt(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.KeepChanges(time.Nanosecond); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		mustCommit(t, a, Record{Kind: KindObject, Class: "A", Key: fmt.Sprint(i), Value: []byte(`{}`)})
	}
	skipped, got := readLog(t, a, 0)
	if skipped != 2 || len(got) != 1 || got[0].ID != 3 {
		t.Fatalf("skipped %d, changes %v; want 2 skipped and change 3", skipped, got)
	}
	if skipped, got = readLog(t, a, 3); skipped != 0 || len(got) != 0 {
		t.Errorf("at the head: skipped %d, %d changes", skipped, len(got))
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := openBunt(path, defaultBuntOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if skipped, _ := readLog(t, b, 1); skipped != 1 {
		t.Errorf("after reopen, a reader at 1 skipped %d, want 1", skipped)
	}
	if err := b.KeepChanges(0); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, b, Record{Kind: KindObject, Class: "A", Key: "x", Value: []byte(`{}`)})
	if _, got := readLog(t, b, 3); len(got) != 1 || got[0].ID != 4 {
		t.Errorf("after reopen the next change is %v, want id 4", got)
	}
}

func mustCommit(t *testing.T, a Adapter, records ...Record) {
	t.Helper()
	if err := a.Commit(records); err != nil {
		t.Fatal(err)
	}
}

// TestChangeLogEntryJournaled: a lone record and its log entry form a
// multi-record request, so they go through the journal: a crash between
// the journal and the records replays both at the next open.
func TestChangeLogEntryJournaled(t *testing.T) {
	path := filepath.Join(t.TempDir(), "q.db")
	a := testOpen(t, path, defaultBuntOptions())
	if err := a.KeepChanges(0); err != nil {
		t.Fatal(err)
	}
	entry, err := encodeLogEntry(time.Now(), []Record{obj("A", "1", "v")})
	if err != nil {
		t.Fatal(err)
	}
	req := &commitReq{records: []Record{obj("A", "1", "v")}, logValue: entry}
	a.addLogEntries([]*commitReq{req}) // as the committer does: change 1
	j := appendJournal(nil, []*commitReq{req})
	if len(j) == 0 {
		t.Fatal("a lone record with its log entry is not journaled")
	}
	if err := a.db.Update(func(tx *buntdb.Tx) error {
		_, _, err := tx.Set(journalKey, string(j), nil)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil { // the crash: only the journal was written
		t.Fatal(err)
	}
	b := testOpen(t, path, defaultBuntOptions())
	sameRecords(t, loadAllRecords(t, b), []Record{obj("A", "1", "v")})
	if _, got := readLog(t, b, 0); len(got) != 1 || got[0].ID != 1 || string(got[0].Records[0].Value) != "v" {
		t.Errorf("log after recovery: %v", got)
	}
}
