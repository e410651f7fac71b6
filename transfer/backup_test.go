package transfer_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/quarrydata/quarry/store"
	"github.com/quarrydata/quarry/transfer"
)

// TestSnapshotOfEveryPrefix: a backup copies a file the server may be
// appending to, so it may see any prefix of it. Cut the file of a store
// every 5 bytes: each cut restores to the commits wholly before it
// (a multi-record commit all there or all gone) and nothing else.
func TestSnapshotOfEveryPrefix(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "live.db")
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	const commits = 9
	for i := range commits {
		var recs []store.Record
		for j := range 1 + i%3 { // single-record commits and journalled ones
			recs = append(recs, store.Record{Kind: store.KindObject, Class: "C", Key: fmt.Sprintf("%02d-%d", i, j),
				Value: fmt.Appendf(nil, `{"objectId":"%02d-%d","commit":%d}`, i, j, i)})
		}
		if err := st.Commit(recs); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	data, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	lastWhole := -1
	for cut := 0; cut <= len(data); cut += 5 {
		src := filepath.Join(dir, fmt.Sprintf("cut%d.db", cut))
		if err := os.WriteFile(src, data[:cut], 0o600); err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(dir, fmt.Sprintf("snap%d.db", cut))
		if _, err := transfer.SnapshotData(src, dst); err != nil {
			t.Fatalf("cut at %d of %d: %v", cut, len(data), err)
		}
		counts := make([]int, commits)
		got := records(t, dst)
		for k := range got {
			var i, j int
			if _, err := fmt.Sscanf(k, "o C %02d-%d", &i, &j); err != nil {
				t.Fatalf("unexpected record %q", k)
			}
			counts[i]++
		}
		whole := -1
		for i, n := range counts {
			switch {
			case n == 1+i%3 && whole == i-1:
				whole = i
			case n != 0:
				t.Fatalf("cut at %d: commit %d has %d of %d records (commits before it whole up to %d)", cut, i, n, 1+i%3, whole)
			}
		}
		if whole < lastWhole {
			t.Fatalf("cut at %d keeps fewer commits than a shorter cut", cut)
		}
		lastWhole = whole
		os.Remove(src)
		os.Remove(src + ".lock")
	}
	if lastWhole != commits-1 {
		t.Errorf("the whole file restores %d commits, want %d", lastWhole+1, commits)
	}
}
