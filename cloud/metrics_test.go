package cloud_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/quarrydata/quarry/cloud"
	"github.com/quarrydata/quarry/server/servertest"
)

// TestCloudRunsAreCounted: /metrics counts cloud code runs, failures and
// timeouts (a run past cloudCodeTimeout).
func TestCloudRunsAreCounted(t *testing.T) {
	reg := cloud.New(quiet, 50*time.Millisecond)
	reg.Define("ok", func(context.Context, *cloud.FunctionRequest) (any, error) { return 1, nil })
	reg.Define("fails", func(context.Context, *cloud.FunctionRequest) (any, error) { return nil, errors.New("no") })
	reg.Define("slow", func(ctx context.Context, _ *cloud.FunctionRequest) (any, error) {
		<-ctx.Done() // runs until cloudCodeTimeout interrupts it
		return nil, ctx.Err()
	})
	srv := servertest.StartCloud(t, quiet, reg, nil)
	for _, name := range []string{"ok", "ok", "fails", "slow"} {
		srv.Do(t, "POST", "/functions/"+name, map[string]any{}, servertest.App())
	}
	res, err := http.Get(strings.TrimSuffix(srv.URL, srv.Opts.MountPath) + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	for _, want := range []string{"quarry_cloud_runs_total 4", "quarry_cloud_failures_total 2", "quarry_cloud_timeouts_total 1"} {
		if !strings.Contains(string(body), want+"\n") {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}
