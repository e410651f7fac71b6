package service

import (
	"fmt"
	"sync"

	"github.com/quarrydata/quarry/schema"
)

// ClassJobStatus holds one object per job run (Parse's _JobStatus).
const ClassJobStatus = "_JobStatus"

// Job statuses, as Parse writes them.
const (
	JobRunning   = "running"
	JobSucceeded = "succeeded"
	JobFailed    = "failed"
)

// RunFunction runs the cloud function name with params and returns its
// result; an unknown name fails with 141, as Parse answers.
func (s *Service) RunFunction(auth Auth, name string, params map[string]any) (any, error) {
	if s.opts.Hooks == nil {
		return nil, schema.Errorf(schema.CodeScriptFailed, "Invalid function: %q", name)
	}
	return s.opts.Hooks.RunFunction(auth, name, params)
}

// StartJob records a _JobStatus (status running) and runs the job name in
// the background; the status turns succeeded or failed when it ends. The
// caller must hold the master key. It returns the status's objectId.
func (s *Service) StartJob(auth Auth, name string, params map[string]any) (string, error) {
	if !auth.Master || auth.ReadOnly {
		return "", schema.Errorf(schema.CodeOperationForbidden, "Jobs may be started with the master key only.")
	}
	h := s.opts.Hooks
	if h == nil || !h.HasJob(name) {
		return "", schema.Errorf(schema.CodeScriptFailed, "Invalid job.")
	}
	return s.startJob(auth, name, params, "api")
}

// HasJob says whether cloud code defines the job name.
func (s *Service) HasJob(name string) bool {
	return s.opts.Hooks != nil && s.opts.Hooks.HasJob(name)
}

// StartScheduledJob starts the defined job name for a job schedule (its
// _JobStatus source is "schedule") and returns the status's objectId.
func (s *Service) StartScheduledJob(name string, params map[string]any) (string, error) {
	return s.startJob(Auth{Master: true}, name, params, "schedule")
}

// startJob runs a defined job for StartJob or a schedule (source).
func (s *Service) startJob(auth Auth, name string, params map[string]any, source string) (string, error) {
	h := s.opts.Hooks
	if params == nil {
		params = map[string]any{}
	}
	internal := Auth{Master: true, internal: true}
	res, err := s.Create(internal, ClassJobStatus, map[string]any{
		"jobName": name, "source": source, "status": JobRunning, "params": params, "ACL": map[string]any{},
	})
	if err != nil {
		return "", err
	}
	id := res.ObjectID
	s.jobs.Add(1)
	s.running.add(id)
	go func() {
		defer s.jobs.Done()
		err := s.runJob(h, &JobRequest{ID: id, Name: name, Params: params, Auth: auth, Message: func(msg string) {
			if s.running.has(id) {
				s.setJobStatus(id, map[string]any{"message": msg})
			}
		}})
		if !s.running.remove(id) {
			return // AbandonJobs marked it failed already
		}
		end := map[string]any{"status": JobSucceeded, "finishedAt": schema.Date(schema.FormatTime(s.opts.Now()))}
		if err != nil {
			msg := err.Error()
			if pe, ok := schema.AsError(err); ok {
				msg = pe.Message
			}
			end["status"], end["message"] = JobFailed, msg
		}
		s.setJobStatus(id, end)
	}()
	return id, nil
}

// runJob runs a job, turning a panic into its failure.
func (s *Service) runJob(h Hooks, req *JobRequest) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("job %s panicked: %v", req.Name, v)
		}
	}()
	return h.RunJob(req)
}

func (s *Service) setJobStatus(id string, body map[string]any) {
	if _, err := s.Update(Auth{Master: true, internal: true}, ClassJobStatus, id, body); err != nil && s.opts.Warn != nil {
		s.opts.Warn(fmt.Sprintf("job status %s: %v", id, err))
	}
}

// JobNames lists the defined jobs (Parse Dashboard's Jobs page).
func (s *Service) JobNames(auth Auth) ([]string, error) {
	if !auth.Master {
		return nil, schema.Errorf(schema.CodeOperationForbidden, "Jobs may be listed with the master key only.")
	}
	if s.opts.Hooks == nil {
		return []string{}, nil
	}
	return s.opts.Hooks.JobNames(), nil
}

// WaitJobs waits for the jobs under way to end (tests, shutdown).
func (s *Service) WaitJobs() { s.jobs.Wait() }

// JobAbandoned is the message of a job the server stopped under.
const JobAbandoned = "The server stopped before the job ended."

// AbandonJobs marks every job still under way failed (JobAbandoned), so
// that none stays "running" once the server stops; call it at shutdown,
// before the store closes. A job that ends later leaves its status alone.
func (s *Service) AbandonJobs() {
	for _, id := range s.running.takeAll() {
		s.setJobStatus(id, map[string]any{"status": JobFailed, "message": JobAbandoned,
			"finishedAt": schema.Date(schema.FormatTime(s.opts.Now()))})
	}
}

// runningJobs is the set of jobs under way.
type runningJobs struct {
	mu  sync.Mutex
	ids map[string]bool
}

func (r *runningJobs) add(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ids == nil {
		r.ids = map[string]bool{}
	}
	r.ids[id] = true
}

func (r *runningJobs) has(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ids[id]
}

// remove reports whether id was still under way.
func (r *runningJobs) remove(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	ok := r.ids[id]
	delete(r.ids, id)
	return ok
}

func (r *runningJobs) takeAll() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.ids))
	for id := range r.ids {
		out = append(out, id)
	}
	r.ids = nil
	return out
}
