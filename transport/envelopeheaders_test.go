package transport

import (
	"bufio"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// TestReadEnvelopeHeaders checks the one-pass reading against the lookups
// it replaces (header: X-Parse- first when not empty, else X-Svc-, the
// first header of a name counting).
func TestReadEnvelopeHeaders(t *testing.T) {
	tests := []struct {
		name    string
		headers [][2]string
	}{
		{"none", nil},
		{"parse prefix", [][2]string{{"X-Parse-Application-Id", "app"}, {"X-Parse-Master-Key", "mk"}}},
		{"svc prefix", [][2]string{{"X-Svc-Application-Id", "app"}, {"X-Svc-Session-Token", "r:1"}}},
		{"parse wins", [][2]string{{"X-Svc-Master-Key", "svc"}, {"X-Parse-Master-Key", "parse"}}},
		{"empty parse falls back", [][2]string{{"X-Parse-Client-Key", ""}, {"X-Svc-Client-Key", "ck"}}},
		{"lower case", [][2]string{{"x-parse-rest-api-key", "rk"}, {"x-svc-installation-id", "inst"}}},
		{"first of a name", [][2]string{{"X-Parse-Javascript-Key", "one"}, {"X-Parse-Javascript-Key", "two"}}},
		{"others ignored", [][2]string{{"X-Parse-Client-Version", "js1"}, {"X-Parse-Windows-Key", "wk"},
			{"X-Parse-Cloud-Context", `{"a":1}`}, {"X-Parse-", "bare"}, {"Content-Type", "text/plain"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Read from the wire, as a served request is.
			raw := "GET /parse/classes/A HTTP/1.1\r\nHost: localhost\r\n"
			for _, h := range tt.headers {
				raw += h[0] + ": " + h[1] + "\r\n"
			}
			var ctx fasthttp.RequestCtx
			if err := ctx.Request.Read(bufio.NewReader(strings.NewReader(raw + "\r\n"))); err != nil {
				t.Fatal(err)
			}
			got := readEnvelopeHeaders(&ctx.Request.Header)
			for i, name := range envelopeHeaderNames {
				if want := header(&ctx, string(name)); got.str(i) != want {
					t.Errorf("%s: got %q, want %q", name, got.str(i), want)
				}
			}
		})
	}
}
