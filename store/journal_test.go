package store

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/tidwall/buntdb"
)

func TestJournalEncoding(t *testing.T) {
	group := []*commitReq{
		{records: []Record{obj("Lone", "1", "{}")}}, // single record: not journaled
		{records: []Record{
			obj("A", "1", `{"x":1}`),
			{Kind: KindJoin, Class: "r:A", Key: "1:2", Value: []byte{}},
			del(KindObject, "A", "gone"),
			{Kind: KindMeta, Key: "k\x00\xff", Value: []byte("\x00")},
		}},
	}
	buf := appendJournal(nil, group)
	got, err := decodeJournal(string(buf))
	if err != nil {
		t.Fatal(err)
	}
	want := group[1].records
	if len(got) != len(want) {
		t.Fatalf("decoded %d records, want %d", len(got), len(want))
	}
	for i := range want {
		if recordString(got[i]) != recordString(want[i]) || (got[i].Value == nil) != (want[i].Value == nil) {
			t.Fatalf("record %d = %s (nil %v), want %s", i, recordString(got[i]), got[i].Value == nil, recordString(want[i]))
		}
	}
	if b := appendJournal(nil, group[:1]); len(b) != 0 {
		t.Fatalf("single-record requests were journaled: %q", b)
	}
	for cut := 1; cut < len(buf); cut++ {
		if recs, err := decodeJournal(string(buf[:cut])); err == nil {
			// A cut can fall on a record boundary; then it must decode a prefix.
			if len(recs) >= len(want) {
				t.Fatalf("cut at %d decoded %d records", cut, len(recs))
			}
		} else if !errors.Is(err, errBadJournal) {
			t.Fatalf("cut at %d: %v", cut, err)
		}
	}
}

// TestJournalRecovery leaves a journal behind, as a crash between the
// journal write and its deletion would, and reopens.
func TestJournalRecovery(t *testing.T) {
	path := filepath.Join(t.TempDir(), "q.db")
	a := testOpen(t, path, defaultBuntOptions())
	if err := a.Commit([]Record{obj("A", "1", "old"), obj("A", "2", "keep")}); err != nil {
		t.Fatal(err)
	}
	j := appendJournal(nil, []*commitReq{{records: []Record{obj("A", "1", "new"), del(KindObject, "A", "2"), obj("B", "1", "b")}}})
	if err := a.db.Update(func(tx *buntdb.Tx) error {
		_, _, err := tx.Set(journalKey, string(j), nil)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	sameRecords(t, loadAllRecords(t, a), []Record{obj("A", "1", "old"), obj("A", "2", "keep")}) // journal invisible
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	b := testOpen(t, path, defaultBuntOptions())
	sameRecords(t, loadAllRecords(t, b), []Record{obj("A", "1", "new"), obj("B", "1", "b")})
	if err := b.db.View(func(tx *buntdb.Tx) error {
		_, err := tx.Get(journalKey)
		return err
	}); !errors.Is(err, buntdb.ErrNotFound) {
		t.Fatalf("journal still there after recovery: %v", err)
	}
}

// TestTornWrite cuts the file at every byte of a multi-record group's
// writes, as a kill in the middle of write(2) would, and checks that each
// reopen sees the group's request whole or not at all.
func TestTornWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "q.db")
	a := testOpen(t, path, defaultBuntOptions())
	base := []Record{obj("A", "1", `{"v":1}`), obj("A", "2", `{"v":1}`)}
	if err := a.Commit(base); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	from := fi.Size()
	group := []Record{
		obj("A", "1", `{"v":2}`),
		del(KindObject, "A", "2"),
		obj("A", "3", `{"v":2,"pad":"................................"}`),
		{Kind: KindJoin, Class: "r:A", Key: "1:3", Value: []byte{}},
	}
	if err := a.Commit(group); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	full, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	before := []Record{obj("A", "1", `{"v":1}`), obj("A", "2", `{"v":1}`)}
	after := []Record{{Kind: KindJoin, Class: "r:A", Key: "1:3", Value: []byte{}}, group[0], group[2]}
	cutPath := filepath.Join(dir, "cut.db")
	for cut := from; cut <= int64(len(full)); cut++ {
		if err := os.WriteFile(cutPath, full[:cut], 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := openBunt(cutPath, defaultBuntOptions())
		if err != nil {
			t.Fatalf("cut at %d: %v", cut, err)
		}
		got := loadAllRecords(t, c)
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		if len(got) == len(before) && recordString(got[0]) == recordString(before[0]) && recordString(got[1]) == recordString(before[1]) {
			continue
		}
		if len(got) == len(after) {
			sameRecords(t, got, after)
			continue
		}
		t.Fatalf("cut at %d of %d..%d: torn state %v", cut, from, len(full), got)
	}
}
