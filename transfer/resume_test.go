package transfer_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/quarrydata/quarry/store"
	"github.com/quarrydata/quarry/transfer"
)

// writeSource writes a mongoexport directory of n Parse Server documents
// per class: users with password hashes, posts pointing at them with ACLs
// and dates, comments pointing at posts, and a relation.
func writeSource(tb testing.TB, dir string, n int) {
	tb.Helper()
	write := func(name string, line func(i int) string, count int) {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			tb.Fatal(err)
		}
		w := bufio.NewWriter(f)
		for i := range count {
			w.WriteString(line(i))
			w.WriteByte('\n')
		}
		if err := w.Flush(); err != nil {
			tb.Fatal(err)
		}
		f.Close()
	}
	write("_SCHEMA.json", func(i int) string {
		return []string{
			`{"_id":"Post","objectId":"string","createdAt":"date","updatedAt":"date","title":"string","author":"*_User","score":"number","published":"date","fans":"relation<_User>","_metadata":{"class_permissions":{"find":{"*":true},"get":{"*":true}},"indexes":{"_id_":{"_id":1},"score_1":{"score":1}}}}`,
			`{"_id":"Comment","objectId":"string","createdAt":"date","updatedAt":"date","text":"string","post":"*Post","tags":"array"}`,
		}[i]
	}, 2)
	const ts = `"_created_at":{"$date":"2022-01-02T03:04:05.678Z"},"_updated_at":{"$date":"2022-01-02T03:04:05.678Z"}`
	write("_User.json", func(i int) string {
		return fmt.Sprintf(`{"_id":"u%09d","username":"user%d","email":"user%d@example.com","_hashed_password":"$2b$10$NOWksge4AFL8..kJmaAjtOUrH1wpVxtWtFd3vcIxAxQNzV5eXQMv6","_rperm":["*","u%09d"],"_wperm":["u%09d"],"_acl":{"*":{"r":true},"u%09d":{"r":true,"w":true}},%s}`,
			i, i, i, i, i, i, ts)
	}, n)
	write("Post.json", func(i int) string {
		return fmt.Sprintf(`{"_id":"p%09d","title":"Post number %d about something","_p_author":"_User$u%09d","score":{"$numberInt":"%d"},"published":{"$date":"2021-06-07T08:09:10.000Z"},"_rperm":["*"],"_wperm":["u%09d","role:Admin"],%s}`,
			i, i, i, i%1000, i, ts)
	}, n)
	write("Comment.json", func(i int) string {
		return fmt.Sprintf(`{"_id":"c%09d","text":"a comment","_p_post":"Post$p%09d","tags":["x","y"],%s}`, i, (i*7)%n, ts)
	}, n)
	write("_Join:fans:Post.json", func(i int) string {
		return fmt.Sprintf(`{"owningId":"p%09d","relatedId":"u%09d"}`, i, (i*3)%n)
	}, n)
}

// TestImportResumesAfterInterruption: an import stopped after a few batches
// leaves a checkpoint; without --resume it is refused, with it the import
// finishes and the data file equals one imported in one go.
func TestImportResumesAfterInterruption(t *testing.T) {
	src := t.TempDir()
	writeSource(t, src, 700)
	whole, wholeSum := importInto(t, src, transfer.ImportOptions{BatchSize: 100})

	db := filepath.Join(t.TempDir(), "quarry.db")
	cp := db + ".import.json"
	run := func(opts transfer.ImportOptions) (*transfer.Summary, error) {
		st, err := store.Open(db)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		opts.From, opts.Checkpoint, opts.BatchSize = src, cp, 100
		return transfer.Import(context.Background(), st, opts)
	}
	ctx, cancel := context.WithCancel(context.Background())
	batches := 0
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	_, err = transfer.Import(ctx, st, transfer.ImportOptions{From: src, Checkpoint: cp, BatchSize: 100, Progress: func(p transfer.Progress) {
		if batches++; batches == 9 { // inside Post.json
			cancel()
		}
	}})
	st.Close()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted import: %v", err)
	}
	if _, err := os.Stat(cp); err != nil {
		t.Fatalf("no checkpoint after the interruption: %v", err)
	}
	if _, err := run(transfer.ImportOptions{}); !errors.Is(err, transfer.ErrCheckpoint) {
		t.Fatalf("a second import without --resume: %v, want ErrCheckpoint", err)
	}
	sum, err := run(transfer.ImportOptions{Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Total() != wholeSum.Total() || sum.Relations != wholeSum.Relations {
		t.Errorf("resumed import counts %d objects, %d relations; in one go %d, %d", sum.Total(), sum.Relations, wholeSum.Total(), wholeSum.Relations)
	}
	if _, err := os.Stat(cp); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("checkpoint left after a finished import: %v", err)
	}
	diffRecords(t, records(t, whole), records(t, db))
}
