package graphql_test

import (
	"bytes"
	"cmp"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server/servertest"
)

// start runs a real server with GraphQL mounted.
func start(t testing.TB, edit func(*config.Options)) *servertest.Server {
	return servertest.Start(t, func(o *config.Options) {
		o.MountGraphQL = true
		if edit != nil {
			edit(o)
		}
	})
}

var client = &http.Client{Timeout: 30 * time.Second}

// reply is a GraphQL response as sent.
type reply struct {
	status int
	body   []byte
}

func (r reply) get(path string) gjson.Result { return gjson.GetBytes(r.body, path) }

// post sends a GraphQL request to the server's /graphql.
func post(t testing.TB, srv *servertest.Server, headers map[string]string, query string, vars map[string]any) reply {
	t.Helper()
	body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	if err != nil {
		t.Fatal(err)
	}
	return raw(t, srv, "POST", "/graphql", body, headers)
}

func raw(t testing.TB, srv *servertest.Server, method, path string, body []byte, headers map[string]string) reply {
	t.Helper()
	root := strings.TrimSuffix(srv.URL, srv.Opts.MountPath)
	req, err := http.NewRequest(method, root+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return reply{resp.StatusCode, b}
}

func with(h map[string]string, k, v string) map[string]string {
	out := map[string]string{k: v}
	for hk, hv := range h {
		out[hk] = hv
	}
	return out
}

// step is one request of a scenario: want maps gjson paths of the reply
// to the JSON they must hold; save keeps reply values for later steps.
type step struct {
	name    string
	headers map[string]string
	query   string
	vars    func(saved map[string]string) map[string]any
	want    map[string]string
	save    map[string]string
	status  int // the HTTP status wanted; 0 is 200
}

func run(t *testing.T, srv *servertest.Server, steps []step) {
	t.Helper()
	saved := map[string]string{}
	for _, s := range steps {
		var vars map[string]any
		if s.vars != nil {
			vars = s.vars(saved)
		}
		headers := s.headers
		if headers == nil {
			headers = servertest.App()
		}
		r := post(t, srv, headers, s.query, vars)
		if want := cmp.Or(s.status, http.StatusOK); r.status != want {
			t.Fatalf("%s: status %d, want %d: %s", s.name, r.status, want, r.body)
		}
		for path, want := range s.want {
			if got := r.get(path).Raw; compact(got) != compact(want) {
				t.Errorf("%s: %s = %s, want %s\nreply %s", s.name, path, got, want, r.body)
			}
		}
		for name, path := range s.save {
			saved[name] = r.get(path).String()
		}
	}
}

func compact(s string) string {
	var b bytes.Buffer
	if json.Compact(&b, []byte(s)) != nil {
		return s
	}
	return b.String()
}
