package cloud_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/quarrydata/quarry/cloud"
	"github.com/quarrydata/quarry/jobs"
	"github.com/quarrydata/quarry/server/servertest"
)

// Parse Dashboard's schedules (/cloud_code/jobs) are kept in _JobSchedule
// and started when due.
func TestJobSchedules(t *testing.T) {
	reg := cloud.New(quiet, 0)
	ran := make(chan map[string]any, 4)
	reg.Job("nightly", func(ctx context.Context, req *cloud.JobRequest) error {
		ran <- req.Params
		return nil
	})
	srv := servertest.StartCloud(t, quiet, reg, nil)
	m := servertest.Master()
	schedule := map[string]any{"job_schedule": map[string]any{"jobName": "nightly", "description": "d", "params": `{"x":1}`,
		"startAfter": "2026-01-01T00:00:00.000Z", "timeOfDay": "03:00:00.000Z", "daysOfWeek": []any{}}}
	created := srv.Do(t, "POST", "/cloud_code/jobs", schedule, m)
	id, _ := created.Map()["objectId"].(string)
	if created.Status != 201 || id == "" {
		t.Fatalf("create: %d %s", created.Status, created.Body)
	}
	run(t, srv, []scenario{
		{name: "needs master", method: "POST", path: "/cloud_code/jobs", body: schedule, status: 403},
		{name: "unknown job", method: "POST", path: "/cloud_code/jobs", headers: m, status: 400,
			body: map[string]any{"job_schedule": map[string]any{"jobName": "nope"}}, has: []string{"Cannot Schedule a job that is not deployed"}},
		{name: "bad time", method: "POST", path: "/cloud_code/jobs", headers: m, status: 400,
			body: map[string]any{"job_schedule": map[string]any{"jobName": "nightly", "timeOfDay": "noon"}}, has: []string{`"code":107`}},
		{name: "listed", method: "GET", path: "/cloud_code/jobs", headers: m, status: 200,
			has: []string{`"objectId":"` + id + `"`, `"jobName":"nightly"`, `"timeOfDay":"03:00:00.000Z"`}},
		{name: "in use", method: "GET", path: "/cloud_code/jobs/data", headers: m, status: 200, has: []string{`"in_use":["nightly"]`}},
		{name: "edit", method: "PUT", path: "/cloud_code/jobs/" + id, headers: m, status: 200,
			body: map[string]any{"job_schedule": map[string]any{"description": "changed"}}},
		{name: "edited", method: "GET", path: "/cloud_code/jobs", headers: m, status: 200, has: []string{`"description":"changed"`}},
		{name: "private", method: "GET", path: "/classes/_JobSchedule", status: 400, has: []string{`"code":119`}},
	})
	now := time.Date(2026, 11, 25, 4, 0, 0, 0, time.UTC)
	if started := jobs.New(srv.Service, srv.Requests).RunDueJobs(now); len(started) != 1 {
		t.Fatalf("started %v, want one run", started)
	}
	if p := <-ran; p["x"] != 1.0 {
		t.Fatalf("params %v", p)
	}
	if again := jobs.New(srv.Service, srv.Requests).RunDueJobs(now.Add(time.Hour)); len(again) != 0 {
		t.Fatalf("started %v again the same day", again)
	}
	srv.Service.WaitJobs()
	status := srv.Do(t, "GET", `/classes/_JobStatus?where={"source":"schedule"}`, nil, m)
	if !strings.Contains(string(status.Body), `"status":"succeeded"`) {
		t.Fatalf("job status %s", status.Body)
	}
	if res := srv.Do(t, "DELETE", "/cloud_code/jobs/"+id, nil, m); res.Status != 200 {
		t.Fatalf("delete: %d %s", res.Status, res.Body)
	}
	if started := jobs.New(srv.Service, srv.Requests).RunDueJobs(now.Add(24 * time.Hour)); len(started) != 0 {
		t.Fatalf("a deleted schedule started %v", started)
	}
}
