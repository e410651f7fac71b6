package graphql_test

import (
	"strings"
	"testing"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server/servertest"
)

// TestPlayground: /playground serves a self-contained page (no external
// scripts or styles) wired to graphQLPath with the app id and master key,
// only when mountPlayground is on.
func TestPlayground(t *testing.T) {
	on := start(t, func(o *config.Options) { o.MountPlayground = true; o.GraphQLPath = "/gql" })
	off := start(t, nil)
	r := raw(t, on, "GET", "/playground", nil, nil)
	page := string(r.body)
	if r.status != 200 || !strings.Contains(page, `"path":"/gql"`) || !strings.Contains(page, `"masterKey":"`+servertest.MasterKey+`"`) {
		t.Fatalf("%d %s", r.status, page)
	}
	for _, external := range []string{"src=", "href=", "http://", "https://"} {
		if strings.Contains(page, external) {
			t.Errorf("the page loads something from elsewhere (%s)", external)
		}
	}
	if r := post(t, on, servertest.App(), `{ health }`, nil); r.status != 404 {
		t.Errorf("graphQLPath moved, /graphql still answers: %d", r.status)
	}
	if r := raw(t, on, "POST", "/gql", []byte(`{"query":"{ health }"}`), servertest.App()); r.get("data.health").Raw != "true" {
		t.Errorf("/gql: %d %s", r.status, r.body)
	}
	if r := raw(t, off, "GET", "/playground", nil, nil); r.status != 404 || r.get("code").Int() != 108 {
		t.Errorf("playground off: %d %s", r.status, r.body)
	}
}

// TestGraphQLRequestsHaveTheirFamily: metrics and request logs name
// GraphQL requests "graphql", not "other".
func TestGraphQLRequestsHaveTheirFamily(t *testing.T) {
	srv := start(t, nil)
	post(t, srv, servertest.App(), `{ health }`, nil)
	metrics := raw(t, srv, "GET", "/metrics", nil, nil)
	if !strings.Contains(string(metrics.body), `family="graphql"`) {
		t.Errorf("no graphql family in /metrics (status %d)", metrics.status)
	}
}
