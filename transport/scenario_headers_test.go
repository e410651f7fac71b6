package transport_test

import (
	"strings"
	"testing"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server/servertest"
)

// TestLongHeaders: request lines and headers up to Node's 16 KiB are read
// (a long where in the URL, a long wrong key), longer ones get a Parse error.
func TestLongHeaders(t *testing.T) {
	srv := servertest.Start(t, func(o *config.Options) { o.JavaScriptKey = "js-key" })
	long := strings.Repeat("k", 4<<10)
	js := map[string]string{"X-Parse-Application-Id": servertest.AppID, "X-Parse-Javascript-Key": "js-key"}
	runScenarios(t, srv, []scenario{
		{name: "a short wrong master key", path: "/classes/Thing", expectedStatus: 403,
			headers: map[string]string{"X-Parse-Application-Id": servertest.AppID, "X-Parse-Master-Key": "nope"},
			check:   replyIs(`{"error":"unauthorized"}`)},
		{name: "a 4 KiB master key is a wrong key like any other", path: "/classes/Thing", expectedStatus: 403,
			headers: map[string]string{"X-Parse-Application-Id": servertest.AppID, "X-Parse-Master-Key": long},
			check:   replyIs(`{"error":"unauthorized"}`)},
		{name: "a 4 KiB session token is an invalid session", path: "/classes/Thing", expectedStatus: 400,
			headers: with(js, "X-Parse-Session-Token", long), check: codeIs(209)},
		{name: "a 4 KiB application id is unauthorized", path: "/classes/Thing", expectedStatus: 403,
			headers: map[string]string{"X-Parse-Application-Id": long}},
		{name: "a 10 KiB where in the URL", path: `/classes/Thing?where={"name":{"$in":["` + strings.Repeat("a", 10<<10) + `"]}}`,
			headers: js, expectedStatus: 200, check: replyIs(`{"results":[]}`)},
		{name: "beyond 16 KiB of headers", path: "/classes/Thing", expectedStatus: 431,
			headers: map[string]string{"X-Parse-Application-Id": servertest.AppID, "X-Big": strings.Repeat("b", 20<<10)},
			check:   codeIs(107)},
	})
}
