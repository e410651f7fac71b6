package transport

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// TestConnErrorLogWindow: a burst per window is written, the rest is held
// back and counted in one line when the next window starts.
func TestConnErrorLogWindow(t *testing.T) {
	var out bytes.Buffer
	l := NewConnErrorLog(slog.New(slog.NewTextHandler(&out, nil)))
	now := time.Unix(1_000_000, 0)
	l.now = func() time.Time { return now }
	for i := range connLogBurst + 25 {
		l.Printf("error %d", i)
	}
	if got := strings.Count(out.String(), "\n"); got != connLogBurst {
		t.Fatalf("%d lines in the first window, want %d:\n%s", got, connLogBurst, out.String())
	}
	now = now.Add(connLogWindow)
	out.Reset()
	l.Printf("next")
	text := out.String()
	if !strings.Contains(text, "count=25") || !strings.Contains(text, "next") {
		t.Fatalf("second window logged %q, want the held count 25 and the new line", text)
	}
}

func TestRedactQuoted(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`error when serving connection "127.0.0.1:1"<->"127.0.0.1:2": cannot find whitespace in the first line of request "GET /?token=r:abc\r\n". Buffer size=9`,
			`error when serving connection 127.0.0.1:1<->127.0.0.1:2: cannot find whitespace in the first line of request "…". Buffer size=9`},
		{`invalid header key "X-\"quoted\"-Key"`, `invalid header key "…"`},
		{`no quotes at all`, `no quotes at all`},
	} {
		if got := redactQuoted(c.in); got != c.want {
			t.Errorf("redactQuoted(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}
