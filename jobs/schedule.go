// Package jobs owns Parse Dashboard's job schedules (_JobSchedule,
// /cloud_code/jobs): keeping them, and starting each scheduled run once,
// also when several instances share a store. It works through the narrow
// Core the service offers; the service never imports it.
package jobs

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
)

// ClassJobSchedule holds the job schedules Parse Dashboard manages
// through /cloud_code/jobs (Parse's _JobSchedule).
const ClassJobSchedule = "_JobSchedule"

// Core is what job schedules need of the service: object writes and
// reads as the server itself, request-id claims, and the cloud jobs.
type Core interface {
	Find(auth service.Auth, class string, p service.FindParams) (service.FindResult, error)
	Create(auth service.Auth, class string, body map[string]any) (service.CreateResult, error)
	Update(auth service.Auth, class, id string, body map[string]any) (service.UpdateResult, error)
	Delete(auth service.Auth, class, id string) error
	// HasJob says whether cloud code defines the job name.
	HasJob(name string) bool
	// StartScheduledJob starts a defined job for a schedule and returns
	// its _JobStatus id.
	StartScheduledJob(name string, params map[string]any) (string, error)
	Now() time.Time
	Warn(msg string)
}

// Claims claims a request id for a time, refusing one claimed before
// (package idempotency): a scheduled run starts once.
type Claims interface {
	ClaimRequest(reqID string, ttl time.Duration) error
}

// Schedules keeps the job schedules over a Core.
type Schedules struct {
	core   Core
	claims Claims
}

// New returns the job schedules kept through core, each run claimed
// through claims.
func New(core Core, claims Claims) *Schedules { return &Schedules{core: core, claims: claims} }

func str(v any) string { s, _ := v.(string); return s }

// JobSchedule is one _JobSchedule object: run JobName with Params from
// StartAfter on; with RepeatMinutes every that many minutes, else with
// TimeOfDay once a day at that time (UTC), else once. DaysOfWeek (0 is
// Sunday), when not empty, limits the days it runs.
type JobSchedule struct {
	ID            string
	JobName       string
	Params        map[string]any
	StartAfter    time.Time
	RepeatMinutes int
	TimeOfDay     time.Duration // since midnight UTC; <0: none
	DaysOfWeek    []int
	LastRun       time.Time // zero: never
}

// jobSchedule reads a stored _JobSchedule.
func jobSchedule(o schema.Object) (JobSchedule, error) {
	js := JobSchedule{ID: str(o["objectId"]), JobName: str(o["jobName"]), TimeOfDay: -1}
	if p := str(o["params"]); p != "" {
		if err := json.Unmarshal([]byte(p), &js.Params); err != nil {
			return js, fmt.Errorf("params are not a JSON object")
		}
	}
	var err error
	if s := str(o["startAfter"]); s != "" {
		if js.StartAfter, err = time.Parse(time.RFC3339, s); err != nil {
			return js, fmt.Errorf("startAfter %q is not a date", s)
		}
	}
	if n, ok := o["repeatMinutes"].(float64); ok && n > 0 {
		js.RepeatMinutes = int(n)
	}
	if t := str(o["timeOfDay"]); t != "" {
		if js.TimeOfDay, err = parseTimeOfDay(t); err != nil {
			return js, err
		}
	}
	if days, ok := o["daysOfWeek"].([]any); ok {
		for _, d := range days {
			if n, ok := d.(float64); ok {
				js.DaysOfWeek = append(js.DaysOfWeek, int(n))
			}
		}
	}
	if ms, ok := o["lastRun"].(float64); ok && ms > 0 {
		js.LastRun = time.UnixMilli(int64(ms)).UTC()
	}
	return js, nil
}

// parseTimeOfDay reads "HH:MM", "HH:MM:SS" or "HH:MM:SS.sssZ" (UTC).
func parseTimeOfDay(s string) (time.Duration, error) {
	t := strings.TrimSuffix(s, "Z")
	for _, layout := range []string{"15:04:05.000", "15:04:05", "15:04"} {
		if v, err := time.Parse(layout, t); err == nil {
			return time.Duration(v.Hour())*time.Hour + time.Duration(v.Minute())*time.Minute +
				time.Duration(v.Second())*time.Second + time.Duration(v.Nanosecond()), nil
		}
	}
	return 0, fmt.Errorf("timeOfDay %q is not HH:MM:SS", s)
}

// Due returns the latest time at or before now the schedule should have
// started and has not (after LastRun); ok is false when none.
func (js JobSchedule) Due(now time.Time) (at time.Time, ok bool) {
	now = now.UTC()
	if now.Before(js.StartAfter) {
		return time.Time{}, false
	}
	dayOK := func(t time.Time) bool {
		return len(js.DaysOfWeek) == 0 || slices.Contains(js.DaysOfWeek, int(t.Weekday()))
	}
	switch {
	case js.RepeatMinutes > 0:
		step := time.Duration(js.RepeatMinutes) * time.Minute
		at = js.StartAfter.Add(now.Sub(js.StartAfter) / step * step)
	case js.TimeOfDay >= 0:
		day := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
		at = day.Add(js.TimeOfDay)
		if at.After(now) {
			at = at.AddDate(0, 0, -1)
		}
		if at.Before(js.StartAfter) {
			return time.Time{}, false
		}
	default:
		at = js.StartAfter
	}
	if !dayOK(at) || (!js.LastRun.IsZero() && !js.LastRun.Before(at)) {
		return time.Time{}, false
	}
	return at, true
}

// JobScheduleTick is how often the scheduler looks for due schedules.
const JobScheduleTick = 15 * time.Second

// RunDueJobs starts every scheduled job due at now (see JobSchedule.Due)
// and records its lastRun; it returns the _JobStatus ids started. Several
// instances sharing a store start each run once: a run is claimed first
// (as idempotency claims a request id).
func (s *Schedules) RunDueJobs(now time.Time) []string {
	master := service.InternalAuth()
	res, err := s.core.Find(master, ClassJobSchedule, service.FindParams{Limit: 10000})
	if err != nil {
		return nil
	}
	var started []string
	for _, o := range res.Results {
		js, err := jobSchedule(o)
		if err != nil {
			s.core.Warn(fmt.Sprintf("job schedule %s: %v", js.ID, err))
			continue
		}
		at, ok := js.Due(now)
		if !ok || !s.core.HasJob(js.JobName) {
			continue
		}
		if s.claims.ClaimRequest(fmt.Sprintf("jobschedule:%s:%d", js.ID, at.UnixMilli()), 24*time.Hour) != nil {
			continue // another instance took this run
		}
		if _, err := s.core.Update(master, ClassJobSchedule, js.ID, map[string]any{"lastRun": float64(at.UnixMilli())}); err != nil {
			s.core.Warn(fmt.Sprintf("job schedule %s: %v", js.ID, err))
			continue
		}
		id, err := s.core.StartScheduledJob(js.JobName, js.Params)
		if err != nil {
			s.core.Warn(fmt.Sprintf("job schedule %s: %v", js.ID, err))
			continue
		}
		started = append(started, id)
	}
	return started
}

// JobSchedules lists the schedules (GET /cloud_code/jobs): master key only.
func (s *Schedules) JobSchedules(auth service.Auth) ([]schema.Object, error) {
	if !auth.Master {
		return nil, schema.Errorf(schema.CodeOperationForbidden, "Job schedules are for the master key only.")
	}
	res, err := s.core.Find(service.InternalAuth(), ClassJobSchedule, service.FindParams{Limit: 10000})
	if err != nil {
		return nil, err
	}
	return res.Results, nil
}

// SaveJobSchedule creates (id "") or changes a schedule from Parse
// Dashboard's job_schedule object. The job must be defined.
func (s *Schedules) SaveJobSchedule(auth service.Auth, id string, body map[string]any) (any, error) {
	if !auth.Master || auth.ReadOnly {
		return nil, schema.Errorf(schema.CodeOperationForbidden, "Job schedules are for the master key only.")
	}
	name, _ := body["jobName"].(string)
	if id == "" || body["jobName"] != nil {
		if !s.core.HasJob(name) {
			// Parse Server answers code 1 (a 500); a client naming a missing job
			// is a client error, so the cloud-code code 141 with its message.
			return nil, schema.Errorf(schema.CodeScriptFailed, "Cannot Schedule a job that is not deployed")
		}
	}
	fields := map[string]any{}
	for _, k := range []string{"jobName", "description", "params", "startAfter", "daysOfWeek", "timeOfDay", "repeatMinutes"} {
		if v, ok := body[k]; ok {
			fields[k] = v
		}
	}
	if id == "" && fields["startAfter"] == nil {
		fields["startAfter"] = schema.FormatTime(s.core.Now())
	}
	probe := schema.Object{"objectId": id}
	for k, v := range fields {
		probe[k] = v
	}
	if _, err := jobSchedule(probe); err != nil {
		return nil, schema.Errorf(schema.CodeInvalidJSON, "job_schedule: %v", err)
	}
	master := service.InternalAuth()
	if id == "" {
		fields["ACL"] = map[string]any{}
		res, err := s.core.Create(master, ClassJobSchedule, fields)
		if err != nil {
			return nil, err
		}
		return map[string]any{"objectId": res.ObjectID, "createdAt": res.CreatedAt}, nil
	}
	if _, err := s.core.Update(master, ClassJobSchedule, id, fields); err != nil {
		return nil, err
	}
	return map[string]any{}, nil
}

// DeleteJobSchedule removes a schedule: master key only.
func (s *Schedules) DeleteJobSchedule(auth service.Auth, id string) error {
	if !auth.Master || auth.ReadOnly {
		return schema.Errorf(schema.CodeOperationForbidden, "Job schedules are for the master key only.")
	}
	return s.core.Delete(service.InternalAuth(), ClassJobSchedule, id)
}
