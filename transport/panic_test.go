package transport_test

import (
	"strings"
	"testing"

	"github.com/quarrydata/quarry/server/servertest"
	"github.com/quarrydata/quarry/transport"
)

// TestPanicAnswers500AndServerLivesOn: a panic inside a request is answered
// 500 in Parse's shape, counted, and the server goes on serving.
func TestPanicAnswers500AndServerLivesOn(t *testing.T) {
	srv := servertest.Start(t, nil)
	transport.HandleForTest(srv.REST, "GET", "/test-panic", func() { panic("injected failure") })
	for range 3 {
		res := srv.Do(t, "GET", "/test-panic", nil, servertest.App())
		if res.Status != 500 || !strings.Contains(string(res.Body), `"code":1`) || strings.Contains(string(res.Body), "injected") {
			t.Fatalf("panicking request: %d %s, want 500 code 1 without the panic's text", res.Status, res.Body)
		}
		if res.Header.Get("Access-Control-Allow-Origin") == "" {
			t.Errorf("the 500 lacks CORS headers: %v", res.Header)
		}
	}
	if n := srv.REST.Panics(); n != 3 {
		t.Errorf("Panics() = %d, want 3", n)
	}
	if res := srv.Do(t, "POST", "/classes/Thing", map[string]any{"a": 1}, servertest.App()); res.Status != 201 {
		t.Fatalf("the server after panics: %d %s", res.Status, res.Body)
	}
}
