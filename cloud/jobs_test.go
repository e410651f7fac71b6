package cloud_test

import (
	"context"
	"strings"
	"testing"

	"github.com/quarrydata/quarry/cloud"
	"github.com/quarrydata/quarry/server/servertest"
	"github.com/quarrydata/quarry/service"
)

// A job still running when the server stops is marked failed, not left
// "running" forever; its late end changes nothing.
func TestJobRunningAtShutdownFails(t *testing.T) {
	reg := cloud.New(quiet, 0)
	started, release := make(chan struct{}), make(chan struct{})
	reg.Job("slow", func(ctx context.Context, req *cloud.JobRequest) error {
		close(started)
		<-release
		return nil
	})
	defer close(release)
	srv := servertest.StartCloud(t, quiet, reg, nil)
	res := srv.Do(t, "POST", "/jobs/slow", map[string]any{}, servertest.Master())
	id := res.Header.Get("X-Parse-Job-Status-Id")
	if res.Status != 200 || id == "" {
		t.Fatalf("start: %d %s", res.Status, res.Body)
	}
	<-started
	srv.Restart(t)
	got := srv.Do(t, "GET", "/classes/_JobStatus/"+id, nil, servertest.Master())
	body := string(got.Body)
	for _, want := range []string{`"status":"failed"`, service.JobAbandoned, `"finishedAt"`} {
		if !strings.Contains(body, want) {
			t.Errorf("job status %s lacks %s", body, want)
		}
	}
}
