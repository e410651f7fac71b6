package transport_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/quarrydata/quarry/cloud"
	"github.com/quarrydata/quarry/server/servertest"
)

// TestDashboardRequests: requests Parse Dashboard sends that the SDK tests
// do not (each found by e2e/dashboard). The audience page counts the
// installations an audience reaches with its stored query as the where:
// JSON text inside the JSON body of a POST with _method GET.
func TestDashboardRequests(t *testing.T) {
	srv := servertest.Start(t, nil)
	m := servertest.Master()
	for i, device := range []string{"ios", "ios", "android"} {
		id := fmt.Sprintf("0b5d2a5c-9e0a-4f4e-8c1a-00000000000%d", i)
		res := srv.Do(t, "POST", "/installations", map[string]any{"deviceType": device, "installationId": id}, m)
		if res.Status != 201 {
			t.Fatalf("create installation: %d %s", res.Status, res.Body)
		}
	}
	type M = map[string]any
	runScenarios(t, srv, []scenario{
		{name: "where as JSON text in the body", method: "POST", path: "/classes/_Installation", headers: m,
			body: M{"_method": "GET", "where": `{"deviceType":"ios"}`, "limit": 0, "count": 1}, expectedStatus: 200,
			check: replyIs(`{"results":[],"count":2}`)},
		{name: "blank where text means no constraint", method: "POST", path: "/classes/_Installation", headers: m,
			body: M{"_method": "GET", "where": " ", "limit": 0, "count": 1}, expectedStatus: 200,
			check: replyIs(`{"results":[],"count":3}`)},
		{name: "where text that is not JSON", method: "POST", path: "/classes/_Installation", headers: m,
			body: M{"_method": "GET", "where": `{"deviceType":`}, expectedStatus: 400, check: codeIs(107)},
		{name: "where text that is not an object", method: "POST", path: "/classes/_Installation", headers: m,
			body: M{"_method": "GET", "where": `["ios"]`}, expectedStatus: 400, check: codeIs(107)},
	})
}

// TestDashboardJobSchedules: the Jobs pages keep schedules through
// /cloud_code/jobs, the body wrapped as {"job_schedule": {...}}; only jobs
// cloud code defines may be scheduled, and only with the master key.
func TestDashboardJobSchedules(t *testing.T) {
	reg := cloud.New(nil, 0)
	reg.Job("nightly", func(context.Context, *cloud.JobRequest) error { return nil })
	srv := servertest.StartCloud(t, nil, reg, nil)
	m, app := servertest.Master(), servertest.App()
	type M = map[string]any
	schedule := M{"job_schedule": M{"jobName": "nightly", "description": "every night", "params": "{}",
		"startAfter": "2030-01-01T00:00:00.000Z", "timeOfDay": "02:00:00.000Z", "daysOfWeek": []any{1, 1, 1, 1, 1, 1, 1}}}
	created := srv.Do(t, "POST", "/cloud_code/jobs", schedule, m)
	if created.Status != 201 {
		t.Fatalf("create schedule: %d %s", created.Status, created.Body)
	}
	id := created.Map()["objectId"].(string)
	runScenarios(t, srv, []scenario{
		{name: "listed as a bare array", path: "/cloud_code/jobs?per_page=50", headers: m, expectedStatus: 200,
			expectedContains: []string{`"objectId":"` + id + `"`, `"jobName":"nightly"`, `"timeOfDay":"02:00:00.000Z"`}},
		{name: "the job is in use", path: "/cloud_code/jobs/data", headers: m, expectedStatus: 200,
			check: replyIs(`{"in_use":["nightly"],"jobs":["nightly"]}`)},
		{name: "edited", method: "PUT", path: "/cloud_code/jobs/" + id, headers: m,
			body: M{"job_schedule": M{"description": "nightly, later", "timeOfDay": "04:00:00.000Z"}}, expectedStatus: 200},
		{name: "the edit is kept", path: "/cloud_code/jobs", headers: m, expectedStatus: 200,
			expectedContains: []string{`"description":"nightly, later"`, `"timeOfDay":"04:00:00.000Z"`}},
		{name: "a job that does not exist", method: "POST", path: "/cloud_code/jobs", headers: m,
			body: M{"job_schedule": M{"jobName": "weekly"}}, expectedStatus: 400, check: codeIs(141)},
		{name: "an unwrapped body", method: "POST", path: "/cloud_code/jobs", headers: m,
			body: M{"jobName": "nightly"}, expectedStatus: 400, check: codeIs(107)},
		{name: "not without the master key", method: "POST", path: "/cloud_code/jobs", headers: app, body: schedule, expectedStatus: 403},
		{name: "nor listed without it", path: "/cloud_code/jobs", headers: app, expectedStatus: 403},
		{name: "no back door through /classes", path: "/classes/_JobSchedule", headers: app, expectedStatus: 400, check: codeIs(119)},
		{name: "a schedule without startAfter starts now", method: "POST", path: "/cloud_code/jobs", headers: m,
			body: M{"job_schedule": M{"jobName": "nightly", "params": "{}"}}, expectedStatus: 201},
		{name: "deleted", method: "DELETE", path: "/cloud_code/jobs/" + id, headers: m, expectedStatus: 200},
		{name: "one left", path: "/cloud_code/jobs", headers: m, expectedStatus: 200,
			notExpectedContains: []string{id}, check: func(t testing.TB, res servertest.Response) {
				list, _ := res.JSON().([]any)
				if len(list) != 1 {
					t.Fatalf("schedules: %s", res.Body)
				}
				start, _ := list[0].(map[string]any)["startAfter"].(string)
				if _, err := time.Parse(time.RFC3339, start); err != nil {
					t.Errorf("startAfter %q is not a time: %v", start, err)
				}
			}},
	})
}
