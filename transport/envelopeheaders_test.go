package transport

import (
	"bufio"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// TestWantsReadAfterWrites: any value of X-Quarry-Read-After-Writes but
// "0" and "false" asks a query to wait.
func TestWantsReadAfterWrites(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  bool
	}{{"", false}, {"1", true}, {"true", true}, {"yes", true}, {"0", false}, {"false", false}, {"FALSE", false}} {
		e := requestHeaders{readAfterWrites: []byte(tc.value)}
		if got := e.wantsReadAfterWrites(); got != tc.want {
			t.Errorf("%q: %v, want %v", tc.value, got, tc.want)
		}
	}
}

// TestReadRequestHeaders checks the one-pass reading against the lookups
// it replaces (header: X-Parse- first when not empty, else X-Svc-, the
// first header of a name counting; Peek for the others).
func TestReadRequestHeaders(t *testing.T) {
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
		{"origin, request id, authorization", [][2]string{{"Origin", "http://a.example"}, {"X-Request-Id", "r-1"},
			{"Authorization", "Basic YXBwOm1r"}, {"Upgrade", "websocket"}}},
		{"first origin, request id, authorization", [][2]string{{"origin", "http://a.example"}, {"Origin", "http://b.example"},
			{"x-request-id", "r-1"}, {"X-Request-Id", "r-2"}, {"Authorization", "Basic x"}, {"authorization", "Basic y"}}},
		{"near names", [][2]string{{"Originx", "o"}, {"X-Request-Idx", "r"}, {"Authorizations", "a"}, {"X-Requested-With", "w"}, {"Upgrades", "u"},
			{"Accept", "*/*"}, {"X", "x"}}},
		{"read after writes", [][2]string{{"x-quarry-read-after-writes", "1"}, {"X-Quarry-Read-After-Writes", "0"}}},
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
			got := readRequestHeaders(&ctx.Request.Header)
			for i, name := range envelopeHeaderNames {
				if want := header(&ctx, string(name)); got.str(i) != want {
					t.Errorf("%s: got %q, want %q", name, got.str(i), want)
				}
			}
			for _, other := range []struct {
				name string
				got  []byte
			}{{"Origin", got.origin}, {"X-Request-Id", got.requestID}, {"Authorization", got.authorization}, {"Upgrade", got.upgrade},
				{"X-Quarry-Read-After-Writes", got.readAfterWrites}} {
				if want := ctx.Request.Header.Peek(other.name); string(other.got) != string(want) {
					t.Errorf("%s: got %q, want %q", other.name, other.got, want)
				}
			}
		})
	}
}
