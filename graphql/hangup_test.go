package graphql_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quarrydata/quarry/cloud"
	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server/servertest"
)

// TestHangupStopsTheQuery: a query whose client closes the connection
// resolves no further field; a mutation whose client leaves runs to its
// end (its writes do not depend on who waits for the answer).
func TestHangupStopsTheQuery(t *testing.T) {
	var calls atomic.Int32
	started := make(chan struct{}, 1)
	var release atomic.Pointer[chan struct{}] // a new one per case
	reg := cloud.New(nil, 0)
	reg.Define("slow", func(ctx context.Context, req *cloud.FunctionRequest) (any, error) {
		calls.Add(1)
		select {
		case started <- struct{}{}:
		default:
		}
		<-*release.Load()
		return "done", nil
	})
	srv := servertest.StartCloud(t, nil, reg, func(o *config.Options) {
		o.MountGraphQL = true
		o.GraphQLCustomTypeDefs = `
			extend type Query { slow: String @resolve }
			extend type Mutation { slowly: String @resolve(to: "slow") }`
	})
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	many := func(field string) string {
		var b strings.Builder
		for i := range 10 {
			fmt.Fprintf(&b, " a%d: %s", i, field)
		}
		return b.String()
	}
	for _, c := range []struct {
		name, query string
		want        int32
	}{
		{"query", "{" + many("slow") + " }", 1},
		{"mutation", "mutation {" + many("slowly") + " }", 10},
	} {
		t.Run(c.name, func(t *testing.T) {
			calls.Store(0)
			gate := make(chan struct{})
			release.Store(&gate)
			body, _ := json.Marshal(map[string]any{"query": c.query})
			conn, err := net.Dial("tcp", u.Host)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(conn, "POST /graphql HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nX-Parse-Application-Id: %s\r\nContent-Length: %d\r\n\r\n%s",
				u.Host, servertest.AppID, len(body), body)
			<-started
			conn.Close()
			time.Sleep(500 * time.Millisecond) // several polls of the connection
			close(gate)
			deadline := time.Now().Add(5 * time.Second)
			for calls.Load() < c.want && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			time.Sleep(300 * time.Millisecond) // room for calls beyond want
			if got := calls.Load(); got != c.want {
				t.Errorf("%d calls of the function after the client hung up, want %d", got, c.want)
			}
		})
	}
}
