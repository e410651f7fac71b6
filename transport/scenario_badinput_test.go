package transport_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server/servertest"
	"github.com/quarrydata/quarry/transport"
)

// wellFormedBad bodies are valid JSON refused only by the write rules, so
// a DELETE (which has no use for a body) may accept them.
var wellFormedBad = map[string]bool{"value nested deeper than the object limit": true}

// TestScenarioBadInput: malformed bodies are 4xx with code 107 on every
// write route and leave the data exactly as it was.
func TestScenarioBadInput(t *testing.T) {
	srv := servertest.Start(t, nil)
	id := mustCreate(t, srv, "Bad", map[string]any{"a": 1, "arr": []any{1}})
	snap := snapshot(t, srv, "Bad")
	unchanged := func(t testing.TB, res servertest.Response) {
		t.Helper()
		codeIs(107)(t, res)
		if after := snapshot(t, srv, "Bad"); after != snap {
			t.Errorf("bad input changed the class:\nbefore %s\nafter  %s", snap, after)
		}
	}
	var table []scenario
	for _, b := range transport.BadBodySeeds {
		for _, route := range []struct{ method, path string }{
			{"POST", "/classes/Bad"},
			{"PUT", "/classes/Bad/" + id},
			{"DELETE", "/classes/Bad/" + id},
			{"POST", "/batch"},
		} {
			if wellFormedBad[b.Name] && route.method == "DELETE" {
				continue
			}
			table = append(table, scenario{
				name:   fmt.Sprintf("%s %s %s", b.Name, route.method, route.path[:6]),
				method: route.method, path: route.path, body: b.Body,
				headers:        with(servertest.Master(), "Content-Type", "application/json"),
				expectedStatus: 400, check: unchanged,
			})
		}
	}
	table = append(table,
		scenario{name: "JSON under another content type is still JSON", method: "POST", path: "/classes/Bad",
			headers: with(servertest.App(), "Content-Type", "application/x-www-form-urlencoded"), body: `{"b":1}`,
			expectedStatus: 201},
		scenario{name: "malformed body without an app id is unauthorized", method: "POST", path: "/classes/Bad",
			body: `{"a":`, expectedStatus: 403, expectedContains: []string{unauthorizedBody}},
		scenario{name: "malformed batch item body", method: "POST", path: "/batch", headers: servertest.App(),
			body:           `{"requests":[{"method":"PUT","path":"/parse/classes/Bad/` + id + `","body":{"a":1e400}}]}`,
			expectedStatus: 400, check: codeIs(107)},
		scenario{name: "NUL inside a string is fine", method: "POST", path: "/classes/Bad", headers: servertest.App(),
			body: `{"s":"a\u0000b"}`, expectedStatus: 201},
		scenario{name: "lone surrogate escape is tolerated", method: "POST", path: "/classes/Bad", headers: servertest.App(),
			body: `{"s":"\ud800"}`, expectedStatus: 201},
		scenario{name: "whitespace-only body is an empty object", method: "PUT", path: "/classes/Bad/" + id,
			headers: servertest.App(), body: " \n\t ", expectedStatus: 200},
		scenario{name: "deep where in the URL", path: "/classes/Bad?where=" + strings.Repeat("%5B", 3000),
			headers: servertest.App(), expectedStatus: 400},
		scenario{name: "a URL over the header limit", path: "/classes/Bad?where=" + strings.Repeat("%5B", 20000),
			headers: servertest.App(), expectedStatus: 431, check: codeIs(107)},
		scenario{name: "limit out of range in the URL", path: "/classes/Bad?limit=1e400",
			headers: servertest.App(), expectedStatus: 400, check: codeIs(117)},
	)
	runScenarios(t, srv, table)
	got := mustGet(t, srv, "Bad", id)
	if got["a"] != 1.0 {
		t.Errorf("object changed: %v", got)
	}
}

// TestScenarioBodyLimit: bodies over maxUploadSize are refused with a 4xx
// and nothing is written.
func TestScenarioBodyLimit(t *testing.T) {
	const limit = 2000
	srv := servertest.Start(t, func(o *config.Options) { o.MaxUploadSize = limit })
	big := func(n int) string { return `{"pad":"` + strings.Repeat("x", n) + `"}` }
	runScenarios(t, srv, []scenario{
		{name: "just under the limit", method: "POST", path: "/classes/Big", headers: servertest.App(),
			body: big(limit - 100), expectedStatus: 201},
		{name: "just over the limit", method: "POST", path: "/classes/Big", headers: servertest.App(),
			body: big(limit + 10), expectedStatus: 413},
		{name: "over the limit in an update", method: "PUT", path: "/classes/Big/nothere123", headers: servertest.App(),
			body: big(limit + 10), expectedStatus: 413},
		{name: "over the limit in a batch", method: "POST", path: "/batch", headers: servertest.App(),
			body:           `{"requests":[{"method":"POST","path":"/parse/classes/Big","body":` + big(limit+10) + `}]}`,
			expectedStatus: 413},
	})
	// Well and far beyond: the server answers before the body is all
	// sent and closes, so the client may see its write reset instead of
	// the reply (more often on a loaded machine); a reply it does see is
	// 413, never a 5xx.
	if res, err := tryDo(srv.URL+"/classes/Big", "POST", big(40*limit), servertest.App()); err == nil && res.Status != 413 {
		t.Errorf("body well over the limit: %d %s", res.Status, clip(string(res.Body)))
	}
	res, err := tryDo(srv.URL+"/classes/Big", "POST", big(200*limit+(64<<10)), servertest.App())
	if err == nil && (res.Status < 400 || res.Status >= 500) {
		t.Errorf("huge body: %d %s", res.Status, clip(string(res.Body)))
	}
	if n := len(listAll(t, srv, "Big")); n != 1 {
		t.Errorf("%d objects, want 1 (only the body under the limit)", n)
	}
}
