package transfer

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestProgressPrinter(t *testing.T) {
	var bar bytes.Buffer
	pp := NewProgressPrinter(&bar, true)
	pp.Update(Progress{Collection: "Post", Bytes: 50, TotalBytes: 100, Imported: 2000, Elapsed: time.Second})
	pp.Finish()
	want := "\r\x1b[K[###############...............]  50%  Post  2000 objects  2000/s\n"
	if bar.String() != want {
		t.Errorf("bar %q, want %q", bar.String(), want)
	}

	var plain bytes.Buffer
	pp = NewProgressPrinter(&plain, false)
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	pp.now = func() time.Time { return clock }
	pp.Update(Progress{Collection: "Post", Docs: 10, Bytes: 10, TotalBytes: 100, Imported: 10, Elapsed: time.Second})
	clock = clock.Add(PlainEvery / 2)
	pp.Update(Progress{Collection: "Post", Docs: 20, Bytes: 20, TotalBytes: 100, Imported: 20, Elapsed: time.Second}) // within PlainEvery: not shown
	pp.Update(Progress{Collection: "Post", Docs: 30, Bytes: 30, TotalBytes: 100, Imported: 30, Elapsed: time.Second, Done: true})
	pp.Finish()
	lines := strings.Split(strings.TrimSpace(plain.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "import: Post importing (10 documents); 10% of the source read") ||
		!strings.HasPrefix(lines[1], "import: Post done (30 documents)") || strings.Contains(plain.String(), "\r") {
		t.Errorf("plain progress:\n%s", plain.String())
	}
}
