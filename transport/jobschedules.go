package transport

import (
	"slices"
	"time"

	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
)

// jobScheduleRoutes serve Parse Dashboard's Jobs pages: the jobs cloud code
// defines, and the schedules kept for them in _JobSchedule (master key
// only). A schedule's body arrives wrapped as {"job_schedule": {...}}.
// Schedules are stored, not run: an outside scheduler starts the jobs.
func jobScheduleRoutes() []route {
	return []route{
		{method: "GET", pattern: "/cloud_code/jobs/data", fn: masterOnly(jobsData)},
		{method: "GET", pattern: "/cloud_code/jobs", fn: masterOnly(listJobSchedules)},
		{method: "POST", pattern: "/cloud_code/jobs", fn: masterOnly(jobScheduleBody(startsNow(classCreate(service.ClassJobSchedule, "/cloud_code/jobs/"))))},
		{method: "PUT", pattern: "/cloud_code/jobs/{objectId}", fn: masterOnly(jobScheduleBody(classUpdate(service.ClassJobSchedule)))},
		{method: "DELETE", pattern: "/cloud_code/jobs/{objectId}", fn: masterOnly(classDelete(service.ClassJobSchedule))},
	}
}

// jobsData lists the defined jobs and those some schedule names.
func jobsData(s *Server, c *call) (any, error) {
	names, err := s.svc.JobNames(c.auth)
	if err != nil {
		return nil, err
	}
	res, err := s.svc.Find(c.auth, service.ClassJobSchedule, service.FindParams{Limit: -1})
	if err != nil {
		return nil, err
	}
	inUse := []string{}
	for _, o := range res.Results {
		if n, ok := o["jobName"].(string); ok && !slices.Contains(inUse, n) {
			inUse = append(inUse, n)
		}
	}
	return map[string]any{"in_use": inUse, "jobs": names}, nil
}

// listJobSchedules answers the schedules as a bare array, as Parse does.
func listJobSchedules(s *Server, c *call) (any, error) {
	res, err := s.svc.Find(c.auth, service.ClassJobSchedule, service.FindParams{Limit: -1})
	if err != nil {
		return nil, err
	}
	return res.Results, nil
}

// startsNow gives a new schedule without startAfter ("start immediately"
// in the dashboard) the current time, which the dashboard then shows.
func startsNow(next endpoint) endpoint {
	return func(s *Server, c *call) (any, error) {
		if _, ok := c.body["startAfter"]; !ok {
			c.body["startAfter"] = schema.FormatTime(time.Now())
		}
		return next(s, c)
	}
}

// jobScheduleBody unwraps {"job_schedule": {...}} into the call's body and
// refuses a schedule for a job cloud code does not define.
func jobScheduleBody(next endpoint) endpoint {
	return func(s *Server, c *call) (any, error) {
		body, ok := c.body["job_schedule"].(map[string]any)
		if !ok {
			return nil, schema.Errorf(schema.CodeInvalidJSON, "A job schedule must be sent as {\"job_schedule\": {...}}.")
		}
		if name, ok := body["jobName"]; ok {
			names, err := s.svc.JobNames(c.auth)
			if err != nil {
				return nil, err
			}
			if n, _ := name.(string); !slices.Contains(names, n) {
				return nil, schema.Errorf(schema.CodeScriptFailed, "Cannot schedule %v: no job of that name is defined.", name)
			}
		}
		c.body = body
		return next(s, c)
	}
}
