package transport_test

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/quarrydata/quarry/server/servertest"
	"github.com/quarrydata/quarry/transport"
)

// syncBuffer is a log sink the server's goroutines may write concurrently.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *syncBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// TestSlowQueryLineDescribesThePlan: a query over the threshold is logged
// as a warning with its plan (access, reason, estimate, sort) and without
// any value of its where clause.
func TestSlowQueryLineDescribesThePlan(t *testing.T) {
	logs := &syncBuffer{}
	srv := servertest.StartLogged(t, slog.New(slog.NewTextHandler(logs, nil)), nil)
	transport.SetSlowQueryForTest(srv.REST, 1) // every query is slow
	const secret = "value-that-must-not-be-logged"
	if res := srv.Do(t, "POST", "/classes/Item", map[string]any{"name": secret, "n": 1}, servertest.App()); res.Status != 201 {
		t.Fatalf("create: %d %s", res.Status, res.Body)
	}
	res := srv.Do(t, "GET", `/classes/Item?where={"name":"`+secret+`"}&order=-n`, nil, servertest.App())
	if res.Status != 200 {
		t.Fatalf("find: %d %s", res.Status, res.Body)
	}
	var line string
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, `msg="slow query"`) {
			line = l
		}
	}
	if line == "" {
		t.Fatalf("no slow-query line in:\n%s", logs.String())
	}
	for _, want := range []string{"level=WARN", "plan=", "explain=", "class Item", "estimate", "sort top-k heap"} {
		if !strings.Contains(line, want) {
			t.Errorf("slow-query line lacks %q: %s", want, line)
		}
	}
	if strings.Contains(logs.String(), secret) {
		t.Errorf("the log holds a value of the query:\n%s", logs.String())
	}
}
