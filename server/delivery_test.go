package server_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server/servertest"
)

// TestChangeConsumerMetrics: each change consumer the server runs has its
// queue, delivered and lost series; a server without LiveQuery or a
// cacheAdapter runs none (its writes gather no changes).
func TestChangeConsumerMetrics(t *testing.T) {
	cases := []struct {
		name      string
		edit      func(*config.Options)
		want, not []string
	}{
		{"liveQuery", func(o *config.Options) { o.LiveQuery.ClassNames = []string{"Message"} },
			[]string{`quarry_change_queue{consumer="liveQuery"}`, `quarry_changes_delivered_total{consumer="liveQuery"}`, `quarry_changes_lost_total{consumer="liveQuery"} 0`},
			[]string{`consumer="cacheAdapter"`}},
		{"none", nil, nil, []string{"quarry_change_queue", "quarry_changes_lost_total"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := servertest.Start(t, c.edit)
			if r := srv.Do(t, "POST", "/classes/Message", map[string]any{"text": "hi"}, servertest.App()); r.Status != 201 {
				t.Fatalf("create: %d %s", r.Status, r.Body)
			}
			resp, err := http.Get(strings.TrimSuffix(srv.URL, srv.Opts.MountPath) + "/metrics")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			for _, w := range c.want {
				if !strings.Contains(string(b), w) {
					t.Errorf("/metrics lacks %s", w)
				}
			}
			for _, n := range c.not {
				if strings.Contains(string(b), n) {
					t.Errorf("/metrics has %s", n)
				}
			}
		})
	}
}
