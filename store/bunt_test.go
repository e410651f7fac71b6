package store

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"
)

func testOpen(t testing.TB, path string, opts buntOptions) *buntAdapter {
	t.Helper()
	a, err := openBunt(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	return a
}

func loadAllRecords(t testing.TB, a Adapter) []Record {
	t.Helper()
	var got []Record
	if err := a.Load(func(r Record) error {
		got = append(got, r)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return got
}

func recordString(r Record) string {
	return fmt.Sprintf("%c|%s|%s|%q", r.Kind, r.Class, r.Key, r.Value)
}

func sameRecords(t testing.TB, got, want []Record) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d records, want %d\ngot:  %v\nwant: %v", len(got), len(want), got, want)
	}
	for i := range got {
		if g, w := recordString(got[i]), recordString(want[i]); g != w {
			t.Fatalf("record %d = %s, want %s", i, g, w)
		}
		if got[i].Value == nil {
			t.Fatalf("record %d has a nil Value; Load must never return nil (nil means delete)", i)
		}
	}
}

func compareRecords(a, b Record) int {
	return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Class, b.Class), cmp.Compare(a.Key, b.Key))
}

func obj(class, id, json string) Record {
	return Record{Kind: KindObject, Class: class, Key: id, Value: []byte(json)}
}

func del(kind Kind, class, key string) Record { return Record{Kind: kind, Class: class, Key: key} }

// TestRoundTrip commits batches, closes, reopens and compares what Load
// returns with the expected final state, for disk and memory.
func TestRoundTrip(t *testing.T) {
	tests := []struct {
		name    string
		commits [][]Record
		want    []Record // in Load order
	}{
		{
			name:    "empty",
			commits: nil,
			want:    nil,
		},
		{
			name: "every kind",
			commits: [][]Record{{
				obj("Place", "a1", `{"name":"x"}`),
				{Kind: KindSchema, Class: "Place", Value: []byte(`{"className":"Place"}`)},
				{Kind: KindJoin, Class: "likes:_User", Key: "u1:p1", Value: []byte{}},
				{Kind: KindMeta, Key: "masterKey", Value: []byte("s3cret")},
			}},
			want: []Record{
				{Kind: KindJoin, Class: "likes:_User", Key: "u1:p1", Value: []byte{}},
				{Kind: KindMeta, Key: "masterKey", Value: []byte("s3cret")},
				obj("Place", "a1", `{"name":"x"}`),
				{Kind: KindSchema, Class: "Place", Value: []byte(`{"className":"Place"}`)},
			},
		},
		{
			name: "overwrite and delete across commits",
			commits: [][]Record{
				{obj("A", "1", `1`), obj("A", "2", `2`), obj("A", "3", `3`)},
				{obj("A", "2", `22`), del(KindObject, "A", "3")},
				{del(KindObject, "A", "never-existed")},
			},
			want: []Record{obj("A", "1", `1`), obj("A", "2", `22`)},
		},
		{
			name: "set then delete in one commit, last wins",
			commits: [][]Record{
				{obj("A", "1", `1`), del(KindObject, "A", "1"), obj("A", "2", `2`), obj("A", "2", `3`)},
			},
			want: []Record{obj("A", "2", `3`)},
		},
		{
			name: "binary values and keys with separators",
			commits: [][]Record{{
				obj("A", "k\x00\r\n*3", "\x00\xff\r\n$5\r\n"),
				{Kind: KindMeta, Key: "", Value: []byte("empty key")},
			}},
			want: []Record{
				{Kind: KindMeta, Key: "", Value: []byte("empty key")},
				obj("A", "k\x00\r\n*3", "\x00\xff\r\n$5\r\n"),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "q.db")
			for _, uri := range []string{path, MemoryURI} {
				a, err := Open(uri)
				if err != nil {
					t.Fatal(err)
				}
				for _, c := range tt.commits {
					if err := a.Commit(c); err != nil {
						t.Fatal(err)
					}
				}
				if uri == MemoryURI {
					sameRecords(t, loadAllRecords(t, a), tt.want)
					if err := a.Close(); err != nil {
						t.Fatal(err)
					}
					continue
				}
				if err := a.Close(); err != nil {
					t.Fatal(err)
				}
				a, err = Open(uri)
				if err != nil {
					t.Fatal(err)
				}
				sameRecords(t, loadAllRecords(t, a), tt.want)
				if err := a.Close(); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// TestLoadOrder checks the (Kind, Class, Key) order over class names that
// are prefixes of each other or contain '_' and ':', and that no two classes
// share a key. More than loadChunk records make Load cross chunk borders.
func TestLoadOrder(t *testing.T) {
	classes := []string{"a", "ab", "a_b", "a:b", "_User", "a:", "B", "b"}
	keys := []string{"", "1", "b", ":b", "b:c", "\x00", "zz"}
	var want []Record
	for _, k := range []Kind{KindObject, KindSchema, KindJoin, KindMeta} {
		for _, c := range classes {
			for _, key := range keys {
				want = append(want, Record{Kind: k, Class: c, Key: key, Value: []byte(c + "|" + key)})
			}
		}
	}
	for i := range 100 { // past loadChunk
		want = append(want, obj("Many", fmt.Sprintf("%04d", i), "{}"))
	}
	shuffled := slices.Clone(want)
	for i := range shuffled { // deterministic shuffle
		j := (i*7919 + 13) % len(shuffled)
		shuffled[i], shuffled[j] = shuffled[j], shuffled[i]
	}
	slices.SortFunc(want, compareRecords)

	path := filepath.Join(t.TempDir(), "q.db")
	a := testOpen(t, path, defaultBuntOptions())
	for i := 0; i < len(shuffled); i += 50 {
		if err := a.Commit(shuffled[i:min(i+50, len(shuffled))]); err != nil {
			t.Fatal(err)
		}
	}
	sameRecords(t, loadAllRecords(t, a), want)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	sameRecords(t, loadAllRecords(t, testOpen(t, path, defaultBuntOptions())), want)
}

func TestLoadStopsOnError(t *testing.T) {
	a := testOpen(t, filepath.Join(t.TempDir(), "q.db"), defaultBuntOptions())
	if err := a.Commit([]Record{obj("A", "1", "1"), obj("A", "2", "2")}); err != nil {
		t.Fatal(err)
	}
	stop := errors.New("stop")
	calls := 0
	err := a.Load(func(Record) error { calls++; return stop })
	if !errors.Is(err, stop) || calls != 1 {
		t.Fatalf("Load = %v after %d calls, want the callback's error after 1", err, calls)
	}
}

// TestLoadMayCommit: the callback runs outside buntdb's lock.
func TestLoadMayCommit(t *testing.T) {
	a := testOpen(t, filepath.Join(t.TempDir(), "q.db"), defaultBuntOptions())
	if err := a.Commit([]Record{obj("A", "1", "1")}); err != nil {
		t.Fatal(err)
	}
	err := a.Load(func(r Record) error {
		return a.Commit([]Record{{Kind: KindMeta, Key: "seen", Value: r.Value}})
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestInvalidRecords(t *testing.T) {
	tests := []struct {
		name string
		rec  Record
	}{
		{"unknown kind", Record{Kind: 'x', Class: "A", Key: "1", Value: []byte("{}")}},
		{"zero kind", Record{Class: "A", Key: "1", Value: []byte("{}")}},
		{"NUL in class", Record{Kind: KindObject, Class: "A\x00B", Key: "1", Value: []byte("{}")}},
	}
	for _, uri := range []string{"disk", MemoryURI} {
		for _, tt := range tests {
			t.Run(uri+"/"+tt.name, func(t *testing.T) {
				u := uri
				if u == "disk" {
					u = filepath.Join(t.TempDir(), "q.db")
				}
				a, err := Open(u)
				if err != nil {
					t.Fatal(err)
				}
				defer a.Close()
				err = a.Commit([]Record{obj("A", "ok", "{}"), tt.rec})
				if !errors.Is(err, ErrInvalidRecord) {
					t.Fatalf("Commit = %v, want ErrInvalidRecord", err)
				}
				if got := loadAllRecords(t, a); len(got) != 0 {
					t.Fatalf("a rejected Commit applied %v", got)
				}
			})
		}
	}
}

func TestClosed(t *testing.T) {
	for _, uri := range []string{"disk", MemoryURI} {
		t.Run(uri, func(t *testing.T) {
			u := uri
			if u == "disk" {
				u = filepath.Join(t.TempDir(), "q.db")
			}
			a, err := Open(u)
			if err != nil {
				t.Fatal(err)
			}
			if err := a.Close(); err != nil {
				t.Fatal(err)
			}
			for name, err := range map[string]error{
				"Commit":       a.Commit([]Record{obj("A", "1", "{}")}),
				"empty Commit": a.Commit(nil),
				"Load":         a.Load(func(Record) error { return nil }),
				"Close":        a.Close(),
			} {
				if !errors.Is(err, ErrClosed) {
					t.Errorf("%s after Close = %v, want ErrClosed", name, err)
				}
			}
		})
	}
}

// TestCloseDrains: Commits racing with Close either succeed and survive or
// return ErrClosed; none is lost or left hanging.
func TestCloseDrains(t *testing.T) {
	path := filepath.Join(t.TempDir(), "q.db")
	a := testOpen(t, path, defaultBuntOptions())
	var wg sync.WaitGroup
	ok := make([]bool, 64)
	for i := range ok {
		wg.Go(func() {
			err := a.Commit([]Record{obj("A", fmt.Sprint(i), "{}")})
			if err != nil && !errors.Is(err, ErrClosed) {
				t.Error(err)
			}
			ok[i] = err == nil
		})
	}
	time.Sleep(time.Millisecond)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	got := map[string]bool{}
	for _, r := range loadAllRecords(t, testOpen(t, path, defaultBuntOptions())) {
		got[r.Key] = true
	}
	for i, committed := range ok {
		if committed && !got[fmt.Sprint(i)] {
			t.Errorf("commit %d returned nil but is missing after reopen", i)
		}
	}
}

func TestLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "q.db")
	a, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := Open(path); !errors.Is(err, ErrLocked) {
		if b != nil {
			b.Close()
		}
		t.Fatalf("second Open = %v, want ErrLocked", err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := Open(path)
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	b.Close()
}

// TestLockedUnderAnyName: a second opener is refused whatever name it uses
// for the open file — a symbolic link to it, to its directory, or a hard
// link — also after a rewrite has swapped in a new file.
func TestLockedUnderAnyName(t *testing.T) {
	names := []struct {
		name string
		link func(t *testing.T, dir, path string) string
	}{
		{"symlink to the file", func(t *testing.T, dir, path string) string {
			l := filepath.Join(dir, "alias.db")
			if err := os.Symlink(path, l); err != nil {
				t.Fatal(err)
			}
			return l
		}},
		{"symlink to the directory", func(t *testing.T, dir, path string) string {
			l := filepath.Join(t.TempDir(), "dirlink")
			if err := os.Symlink(dir, l); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(l, filepath.Base(path))
		}},
		{"hard link", func(t *testing.T, dir, path string) string {
			l := filepath.Join(dir, "hard.db")
			if err := os.Link(path, l); err != nil {
				t.Fatal(err)
			}
			return l
		}},
	}
	for _, rewritten := range []bool{false, true} {
		for _, n := range names {
			t.Run(fmt.Sprintf("%s, rewritten=%v", n.name, rewritten), func(t *testing.T) {
				dir := t.TempDir()
				path := filepath.Join(dir, "q.db")
				a := testOpen(t, path, defaultBuntOptions())
				defer a.Close()
				if err := a.Commit([]Record{obj("A", "1", "{}")}); err != nil {
					t.Fatal(err)
				}
				if rewritten {
					if err := a.db.Shrink(); err != nil {
						t.Fatal(err)
					}
					if _, err := a.syncFile(); err != nil {
						t.Fatal(err)
					}
				}
				other := n.link(t, dir, path)
				if b, err := Open(other); !errors.Is(err, ErrLocked) {
					if b != nil {
						b.Close()
					}
					t.Fatalf("Open(%s) = %v, want ErrLocked", other, err)
				}
			})
		}
	}
}

// TestLockedHardLinkAcrossRewrite: a hard link made to the data file
// before a rewrite names the old file afterwards (the rewrite renames a new
// file over the data file's name); a second opener on that stale copy is
// refused while the adapter runs. Once the
// link is gone, the old file's descriptor is let go at the next rewrite.
func TestLockedHardLinkAcrossRewrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "q.db")
	a := testOpen(t, path, defaultBuntOptions())
	if err := a.Commit([]Record{obj("A", "1", "{}")}); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "backup.db")
	if err := os.Link(path, link); err != nil {
		t.Fatal(err)
	}
	rewrite := func() {
		t.Helper()
		if err := a.db.Shrink(); err != nil {
			t.Fatal(err)
		}
		if _, err := a.syncFile(); err != nil {
			t.Fatal(err)
		}
	}
	rewrite()
	if cur, old := mustStat(t, path), mustStat(t, link); os.SameFile(cur, old) {
		t.Fatal("the rewrite did not swap the file")
	}
	if b, err := Open(link); !errors.Is(err, ErrLocked) {
		if b != nil {
			b.Close()
		}
		t.Fatalf("Open(stale hard link) = %v, want ErrLocked", err)
	}
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	rewrite()
	a.syncMu.Lock()
	kept := len(a.retired)
	a.syncMu.Unlock()
	if kept != 0 {
		t.Fatalf("%d former files kept open after their last link went", kept)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
}

func mustStat(t *testing.T, path string) os.FileInfo {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi
}

// TestConcurrentCommits: 64 writers, each with several multi-record
// Commits; everything is there after reopen.
func TestConcurrentCommits(t *testing.T) {
	const writers, commitsEach = 64, 10
	path := filepath.Join(t.TempDir(), "q.db")
	a := testOpen(t, path, defaultBuntOptions())
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for c := range commitsEach {
				id := fmt.Sprintf("w%02d-c%02d", w, c)
				err := a.Commit([]Record{
					obj("Item", id, fmt.Sprintf(`{"w":%d,"c":%d}`, w, c)),
					{Kind: KindJoin, Class: "owner:Item", Key: id + ":u1", Value: []byte{}},
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	groups, commits := a.groups.Load(), a.commits.Load()
	t.Logf("%d commits in %d fsync groups", commits, groups)
	if commits != writers*commitsEach {
		t.Fatalf("committer answered %d commits, want %d", commits, writers*commitsEach)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	got := loadAllRecords(t, testOpen(t, path, defaultBuntOptions()))
	if len(got) != 2*writers*commitsEach {
		t.Fatalf("reopened store has %d records, want %d", len(got), 2*writers*commitsEach)
	}
	for w := range writers {
		for c := range commitsEach {
			id := fmt.Sprintf("w%02d-c%02d", w, c)
			want := fmt.Sprintf(`{"w":%d,"c":%d}`, w, c)
			_, found := slices.BinarySearchFunc(got, obj("Item", id, ""), compareRecords)
			if !found {
				t.Fatalf("object %s missing", id)
			}
			i, _ := slices.BinarySearchFunc(got, obj("Item", id, ""), compareRecords)
			if string(got[i].Value) != want {
				t.Fatalf("object %s = %s, want %s", id, got[i].Value, want)
			}
		}
	}
}

// TestGroupCommit holds the first fsync until the 63 other writers are
// queued, so they must all share the second one: 64 Commits, 2 fsyncs.
func TestGroupCommit(t *testing.T) {
	const writers = 64
	var a *buntAdapter
	var once sync.Once
	held := make(chan struct{})
	opts := defaultBuntOptions()
	opts.beforeSync = func(n int) {
		once.Do(func() {
			close(held)
			deadline := time.Now().Add(5 * time.Second)
			for len(a.queue) < writers-n && time.Now().Before(deadline) {
				time.Sleep(100 * time.Microsecond)
			}
		})
	}
	path := filepath.Join(t.TempDir(), "q.db")
	a = testOpen(t, path, opts)
	var wg sync.WaitGroup
	for w := range writers {
		if w == 1 {
			<-held // the first Commit is alone in its group
		}
		wg.Go(func() {
			if err := a.Commit([]Record{obj("A", fmt.Sprint(w), "{}")}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if groups, commits := a.groups.Load(), a.commits.Load(); commits != writers || groups != 2 {
		t.Fatalf("%d commits in %d fsync groups, want %d in 2", commits, groups, writers)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if n := len(loadAllRecords(t, testOpen(t, path, defaultBuntOptions()))); n != writers {
		t.Fatalf("%d records after reopen, want %d", n, writers)
	}
}

// TestGroupLimits: a group never exceeds maxGroupCommits callers, and a
// Commit larger than maxGroupBytes still goes through, alone.
func TestGroupLimits(t *testing.T) {
	var mu sync.Mutex
	var sizes []int
	opts := defaultBuntOptions()
	opts.beforeSync = func(n int) {
		mu.Lock()
		sizes = append(sizes, n)
		mu.Unlock()
		time.Sleep(2 * time.Millisecond) // let the queue fill
	}
	a := testOpen(t, filepath.Join(t.TempDir(), "q.db"), opts)
	big := bytes.Repeat([]byte("x"), maxGroupBytes+1)
	var wg sync.WaitGroup
	for w := range 3 * maxGroupCommits / 2 {
		wg.Go(func() {
			if err := a.Commit([]Record{obj("A", fmt.Sprint(w), "{}")}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Go(func() {
		if err := a.Commit([]Record{obj("Big", "1", string(big))}); err != nil {
			t.Error(err)
		}
	})
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	t.Logf("group sizes: %v", sizes)
	for _, n := range sizes {
		if n > maxGroupCommits {
			t.Fatalf("group of %d commits, limit %d", n, maxGroupCommits)
		}
	}
	if got := loadAllRecords(t, a); len(got) != 3*maxGroupCommits/2+1 {
		t.Fatalf("%d records, want %d", len(got), 3*maxGroupCommits/2+1)
	}
}

// TestSyncFailureIsSticky: after a failed fsync every Commit fails, since
// the kernel may have dropped the dirty pages it could not write.
func TestSyncFailureIsSticky(t *testing.T) {
	a := testOpen(t, filepath.Join(t.TempDir(), "q.db"), defaultBuntOptions())
	a.syncMu.Lock()
	_ = a.syncf.Close() // the next fsync fails
	a.syncMu.Unlock()
	err1 := a.Commit([]Record{obj("A", "1", "{}")})
	err2 := a.Commit([]Record{obj("A", "2", "{}")})
	if err1 == nil || err2 == nil || err1.Error() != err2.Error() {
		t.Fatalf("Commits after a failed fsync = %v, %v; want the same error twice", err1, err2)
	}
}

// TestShrink: with a tiny threshold the file is rewritten in the background
// while commits go on; the rewritten file keeps its mode, later commits
// are fsynced into it, and everything survives a reopen.
func TestShrink(t *testing.T) {
	path := filepath.Join(t.TempDir(), "q.db")
	opts := defaultBuntOptions()
	opts.shrinkMinSize = 64 << 10
	a := testOpen(t, path, opts)
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	value := bytes.Repeat([]byte("v"), 1000)
	want := map[string]string{}
	var peak int64
	// Overwrite 10 keys until the file passes 64 KB and a rewrite starts,
	// then a few more commits that the rewrite must copy from the tail.
	extra := 5
	for i := 0; extra > 0; i++ {
		if i > 10000 {
			t.Fatal("no rewrite started")
		}
		if a.shrinking.Load() {
			extra--
		}
		id := fmt.Sprint(i % 10)
		v := fmt.Sprintf("%d:%s", i, value)
		if err := a.Commit([]Record{obj("A", id, v)}); err != nil {
			t.Fatal(err)
		}
		want[id] = v
		if fi, err := os.Stat(path); err == nil {
			peak = max(peak, fi.Size())
		}
	}
	a.shrinkWG.Wait()
	// One more commit after the rewrite lands in the new file.
	if err := a.Commit([]Record{obj("A", "after", "1")}); err != nil {
		t.Fatal(err)
	}
	want["after"] = "1"
	after, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if os.SameFile(before, after) {
		t.Fatal("the file was never rewritten")
	}
	if after.Size() >= peak/2 {
		t.Fatalf("file is %d bytes after the rewrite, peak was %d", after.Size(), peak)
	}
	if perm := after.Mode().Perm(); perm != 0o600 {
		t.Fatalf("rewritten file has mode %v, want 0600", perm)
	}
	a.syncMu.Lock()
	cur, _ := a.syncf.Stat()
	a.syncMu.Unlock()
	if !os.SameFile(cur, after) {
		t.Fatal("the adapter still fsyncs the old file")
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	got := loadAllRecords(t, testOpen(t, path, opts))
	if len(got) != len(want) {
		t.Fatalf("%d records after reopen, want %d", len(got), len(want))
	}
	for _, r := range got {
		if want[r.Key] != string(r.Value) {
			t.Fatalf("%s = %.20q, want %.20q", r.Key, r.Value, want[r.Key])
		}
	}
}

func TestKeyRoundTrip(t *testing.T) {
	for _, r := range []Record{
		{Kind: KindObject, Class: "A", Key: "1"},
		{Kind: KindJoin, Class: "rel:_User", Key: "a:b"},
		{Kind: KindMeta, Class: "", Key: ""},
		{Kind: KindObject, Class: "A", Key: "x\x00y"},
	} {
		got, ok := parseKey(recordKey(r))
		if !ok || got.Kind != r.Kind || got.Class != r.Class || got.Key != r.Key {
			t.Fatalf("parseKey(recordKey(%v)) = %v, %v", r, got, ok)
		}
	}
	if _, ok := parseKey("oNoSeparator"); ok {
		t.Fatal("parseKey accepted a key without separator")
	}
}

// TestGroupWaitsForAnsweredCallers: a group of one is held at its fsync
// until three more Commits queue. The committer then expects all four
// back, so the next group waits for the first writer's second Commit
// (the group wait is far longer than the test) and one fsync covers the
// four. A lone writer, expected alone, never waits.
func TestGroupWaitsForAnsweredCallers(t *testing.T) {
	var a *buntAdapter
	var mu sync.Mutex
	var sizes []int
	hold := make(chan struct{})
	opts := defaultBuntOptions()
	opts.groupWait = time.Hour
	opts.beforeSync = func(n int) {
		mu.Lock()
		sizes = append(sizes, n)
		held := len(sizes) == 2
		mu.Unlock()
		if held {
			<-hold
		}
	}
	a = testOpen(t, filepath.Join(t.TempDir(), "q.db"), opts)
	commit := func(key string) {
		if err := a.Commit([]Record{obj("A", key, "{}")}); err != nil {
			t.Error(err)
		}
	}
	commit("alone") // expected alone, committed at once
	var wg sync.WaitGroup
	wg.Go(func() {
		commit("first") // held at its fsync
		commit("first-again")
	})
	for len(lockedCopy(&mu, &sizes)) < 2 {
		time.Sleep(100 * time.Microsecond) // until the second group is held
	}
	for w := range 3 {
		wg.Go(func() { commit(fmt.Sprint("queued-", w)) })
	}
	for len(a.queue) < 3 {
		time.Sleep(100 * time.Microsecond)
	}
	close(hold)
	wg.Wait()
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if got := lockedCopy(&mu, &sizes); !slices.Equal(got, []int{1, 1, 4}) {
		t.Fatalf("group sizes %v, want [1 1 4]", got)
	}
}

// TestGroupWaitBacksOff: after a group wait that ran out with none of the
// expected callers come, the next groups start without waiting.
func TestGroupWaitBacksOff(t *testing.T) {
	opts := defaultBuntOptions()
	opts.groupWait = time.Millisecond
	a := testOpen(t, filepath.Join(t.TempDir(), "q.db"), opts)
	// Two Commits answered together expect two callers back; only one
	// comes, alone.
	a.expect = 2
	if err := a.Commit([]Record{obj("A", "1", "{}")}); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if a.waitBackoff != missedWaitBackoff {
		t.Fatalf("waitBackoff = %d after an idle wait, want %d", a.waitBackoff, missedWaitBackoff)
	}
}

// TestGroupWaitKeptWhenSomeCame: a wait that ran out after some of the
// expected callers came (one of two here) paid off, so the next group
// waits again.
func TestGroupWaitKeptWhenSomeCame(t *testing.T) {
	var wg sync.WaitGroup
	var a *buntAdapter
	commit := func(key string) {
		if err := a.Commit([]Record{obj("A", key, "{}")}); err != nil {
			t.Error(err)
		}
	}
	var sizes []int
	var mu sync.Mutex
	opts := defaultBuntOptions()
	opts.groupWait = 300 * time.Millisecond
	opts.waiting = func() {
		mu.Lock()
		defer mu.Unlock()
		if len(sizes) == 0 {
			wg.Go(func() { commit("came") })
		}
	}
	opts.beforeSync = func(n int) {
		mu.Lock()
		sizes = append(sizes, n)
		mu.Unlock()
	}
	a = testOpen(t, filepath.Join(t.TempDir(), "q.db"), opts)
	a.expect = 3 // three answered together; two come back
	commit("first")
	wg.Wait()
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if got := lockedCopy(&mu, &sizes); !slices.Equal(got, []int{2}) {
		t.Fatalf("group sizes %v, want [2]", got)
	}
	if a.waitBackoff != 0 {
		t.Fatalf("waitBackoff = %d after a wait that brought a caller, want 0", a.waitBackoff)
	}
}

// lockedCopy is a copy of *sizes taken under mu.
func lockedCopy(mu *sync.Mutex, sizes *[]int) []int {
	mu.Lock()
	defer mu.Unlock()
	return slices.Clone(*sizes)
}
