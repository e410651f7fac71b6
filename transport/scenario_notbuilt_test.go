package transport_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/quarrydata/quarry/server/servertest"
)

// TestUnknownAndNotBuiltRoutesAnswerJSON: every route Quarry does not
// serve answers a JSON Parse error with a code and a message saying what is
// missing, never the router's text (which the SDKs cannot parse).
func TestUnknownAndNotBuiltRoutesAnswerJSON(t *testing.T) {
	srv := servertest.Start(t, nil)
	app, master := servertest.App(), servertest.Master()
	cases := []struct {
		method, path string
		root         bool
		headers      map[string]string
		status, code int
		says         string
	}{
		{"POST", "/functions/hello", false, app, 400, 141, `Invalid function: \"hello\"`},
		{"POST", "/jobs/nightly", false, master, 400, 141, "Invalid job."},
		{"POST", "/push", false, master, 400, 115, "Push controller is not set"},
		{"POST", "/requestPasswordReset", false, app, 400, 108, "no email adapter"},
		{"POST", "/verificationEmailRequest", false, app, 400, 108, "no email adapter"},
		{"POST", "/validate_purchase", false, app, 400, 108, "Purchase validation"},
		{"GET", "/nothing/here", false, app, 404, 108, "Quarry has no route GET /parse/nothing/here."},
		{"PATCH", "/classes/Thing", false, app, 404, 108, "Quarry has no route PATCH /parse/classes/Thing."},
		{"POST", "/graphql", true, nil, 404, 108, "GraphQL is not available yet."},
		{"GET", "/elsewhere", true, nil, 404, 108, "Quarry has no route GET /elsewhere."},
	}
	for _, c := range cases {
		t.Run(c.method+" "+c.path, func(t *testing.T) {
			var res servertest.Response
			if c.root {
				res = rawDo(t, rootURL(srv)+c.path, c.method, nil, c.headers)
			} else {
				res = srv.Do(t, c.method, c.path, map[string]any{}, c.headers)
			}
			var body struct {
				Code  int
				Error string
			}
			if err := json.Unmarshal(res.Body, &body); err != nil || res.Status != c.status || body.Code != c.code {
				t.Fatalf("%d %s, want %d with code %d", res.Status, res.Body, c.status, c.code)
			}
			if !json.Valid(res.Body) || !strings.Contains(string(res.Body), c.says) {
				t.Errorf("reply %s does not say %q", res.Body, c.says)
			}
		})
	}
	// Credentials are still checked first, as Parse Server does.
	if res := srv.Do(t, "POST", "/push", map[string]any{}, nil); res.Status != 403 {
		t.Errorf("a not-built route without an application id: %d %s", res.Status, res.Body)
	}
}
