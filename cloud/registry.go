// Package cloud runs cloud code: functions, jobs and save/delete/find
// triggers, defined in Go (Registry) or in JavaScript (LoadJS, a pool of
// goja runtimes). The Registry implements service.Hooks; cloud imports
// service and never the front ends (transport, live).
package cloud

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quarrydata/quarry/accounts"
	"github.com/quarrydata/quarry/ratelimit"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
)

// DefaultTimeout bounds one function or trigger run (cloudCodeTimeout).
const DefaultTimeout = 30 * time.Second

// Handler types of the Go API. A returned *schema.Error keeps its code;
// any other error becomes 141 with its text. Validator failures are 142.
type (
	FunctionHandler func(ctx context.Context, req *FunctionRequest) (any, error)
	JobHandler      func(ctx context.Context, req *JobRequest) error
	TriggerHandler  func(ctx context.Context, req *TriggerRequest) error
	FindHandler     func(ctx context.Context, req *FindRequest) error
)

// Caller is who made the request that runs cloud code.
type Caller struct {
	Auth service.Auth
	// User is the caller's _User object (nil without a session).
	User           schema.Object
	Master         bool
	InstallationID string
	Headers        map[string]string
	IP             string
	Context        map[string]any
}

// FunctionRequest is a function call.
type FunctionRequest struct {
	Caller
	Name   string
	Params map[string]any
}

// JobRequest is a job run. Message replaces the job status's message.
type JobRequest struct {
	Caller
	Name    string
	JobID   string
	Params  map[string]any
	Message func(string)
}

// TriggerRequest is a save or delete trigger call. A beforeSave changes
// the object written by changing Object.
type TriggerRequest struct {
	Caller
	Kind     service.TriggerKind
	Class    string
	Object   schema.Object
	Original schema.Object
	// Event and Suppress are an afterLiveQueryEvent's: the event's name,
	// and true to keep it from the subscriber.
	Event    string
	Suppress bool
}

// FindRequest is a find trigger call: beforeFind may change Query (where,
// limit, skip, keys, order, include), afterFind may replace Results.
type FindRequest struct {
	Caller
	Kind    service.TriggerKind
	Class   string
	IsGet   bool
	Query   *service.FindParams
	Results []schema.Object
}

type function struct {
	fn FunctionHandler
	v  *Validator
}

type trigger struct {
	save TriggerHandler
	find FindHandler
	v    *Validator
}

// Registry holds the defined cloud code. Define everything before the
// server starts serving; it is safe for concurrent use after.
type Registry struct {
	mu        sync.RWMutex
	functions map[string]function
	jobs      map[string]JobHandler
	triggers  [service.NumTriggerKinds]map[string]trigger
	hooks     webhooks // defined through /hooks (webhooks.go)

	svc     *service.Service
	acc     *accounts.Accounts // the account operations over svc
	limiter *ratelimit.Limiter // counts SDK calls (includeInternalRequests)
	pusher  Pusher             // Parse.Push.send; nil without a push adapter
	log     *slog.Logger
	timeout time.Duration

	stats struct{ runs, failures, timeouts, memoryStops atomic.Uint64 }
}

// New returns an empty registry. timeout bounds each run (0: DefaultTimeout).
func New(log *slog.Logger, timeout time.Duration) *Registry {
	if log == nil {
		log = slog.Default()
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	r := &Registry{functions: map[string]function{}, jobs: map[string]JobHandler{}, hooks: newWebhooks(), log: log, timeout: timeout}
	for i := range r.triggers {
		r.triggers[i] = map[string]trigger{}
	}
	return r
}

// Attach gives the registry the service it serves (for request.user and
// the in-process SDK). Call it once, before serving.
func (r *Registry) Attach(svc *service.Service) { r.svc, r.acc = svc, accounts.New(svc) }

// Service is the attached service.
func (r *Registry) Service() *service.Service { return r.svc }

// Timeout is the bound of one run.
func (r *Registry) Timeout() time.Duration { return r.timeout }

// Define registers a function; a later definition replaces an earlier one.
func (r *Registry) Define(name string, fn FunctionHandler, v ...Validator) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.functions[name] = function{fn: fn, v: firstValidator(v)}
}

// Job registers a background job (POST /jobs/<name>, master key only).
func (r *Registry) Job(name string, fn JobHandler) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.jobs[name] = fn
}

// BeforeSave registers a trigger run before an object of class is saved.
func (r *Registry) BeforeSave(class string, fn TriggerHandler, v ...Validator) {
	r.setTrigger(service.BeforeSave, class, trigger{save: fn, v: firstValidator(v)})
}

// AfterSave registers a trigger run after an object of class is saved.
func (r *Registry) AfterSave(class string, fn TriggerHandler, v ...Validator) {
	r.setTrigger(service.AfterSave, class, trigger{save: fn, v: firstValidator(v)})
}

// BeforeDelete registers a trigger run before an object of class is deleted.
func (r *Registry) BeforeDelete(class string, fn TriggerHandler, v ...Validator) {
	r.setTrigger(service.BeforeDelete, class, trigger{save: fn, v: firstValidator(v)})
}

// AfterDelete registers a trigger run after an object of class is deleted.
func (r *Registry) AfterDelete(class string, fn TriggerHandler, v ...Validator) {
	r.setTrigger(service.AfterDelete, class, trigger{save: fn, v: firstValidator(v)})
}

// BeforeFind registers a trigger that may rewrite queries on class.
func (r *Registry) BeforeFind(class string, fn FindHandler, v ...Validator) {
	r.setTrigger(service.BeforeFind, class, trigger{find: fn, v: firstValidator(v)})
}

// AfterFind registers a trigger that may replace the results of queries on class.
func (r *Registry) AfterFind(class string, fn FindHandler, v ...Validator) {
	r.setTrigger(service.AfterFind, class, trigger{find: fn, v: firstValidator(v)})
}

// BeforeLogin registers a trigger run before a user logs in (req.Object
// is the user); its error refuses the log-in.
func (r *Registry) BeforeLogin(fn TriggerHandler, v ...Validator) {
	r.setTrigger(service.BeforeLogin, "_User", trigger{save: fn, v: firstValidator(v)})
}

// AfterLogin registers a trigger run after a user logged in (req.Object
// and req.User are the user).
func (r *Registry) AfterLogin(fn TriggerHandler, v ...Validator) {
	r.setTrigger(service.AfterLogin, "_User", trigger{save: fn, v: firstValidator(v)})
}

// AfterLogout registers a trigger run after a log-out (req.Object is the
// deleted _Session).
func (r *Registry) AfterLogout(fn TriggerHandler, v ...Validator) {
	r.setTrigger(service.AfterLogout, "_Session", trigger{save: fn, v: firstValidator(v)})
}

// BeforeSaveFile registers a trigger run before a file is stored:
// req.Object is {"name", "contentType", "size", "metadata", "tags"}; the
// name, metadata and tags it leaves there are stored; its error refuses.
func (r *Registry) BeforeSaveFile(fn TriggerHandler, v ...Validator) {
	r.setTrigger(service.BeforeSaveFile, service.FileClass, trigger{save: fn, v: firstValidator(v)})
}

// AfterSaveFile registers a trigger run after a file is stored (req.Object
// also has "url").
func (r *Registry) AfterSaveFile(fn TriggerHandler, v ...Validator) {
	r.setTrigger(service.AfterSaveFile, service.FileClass, trigger{save: fn, v: firstValidator(v)})
}

// BeforeDeleteFile registers a trigger run before a file is deleted
// (req.Object is {"name", "url"}); its error refuses.
func (r *Registry) BeforeDeleteFile(fn TriggerHandler, v ...Validator) {
	r.setTrigger(service.BeforeDeleteFile, service.FileClass, trigger{save: fn, v: firstValidator(v)})
}

// AfterDeleteFile registers a trigger run after a file is deleted.
func (r *Registry) AfterDeleteFile(fn TriggerHandler, v ...Validator) {
	r.setTrigger(service.AfterDeleteFile, service.FileClass, trigger{save: fn, v: firstValidator(v)})
}

// BeforeConnect registers a trigger run when a LiveQuery client
// connects; req.Object is {"installationId", "clients", "subscriptions"}
// and req.User the session's user. Its error refuses the connection.
func (r *Registry) BeforeConnect(fn TriggerHandler, v ...Validator) {
	r.setTrigger(service.BeforeConnect, service.ConnectClass, trigger{save: fn, v: firstValidator(v)})
}

// BeforeSubscribe registers a trigger run when a LiveQuery client
// subscribes to class: it may change req.Query's where and keys, or
// refuse with an error.
func (r *Registry) BeforeSubscribe(class string, fn FindHandler, v ...Validator) {
	r.setTrigger(service.BeforeSubscribe, class, trigger{find: fn, v: firstValidator(v)})
}

// AfterLiveQueryEvent registers a trigger run before an event on class
// reaches a subscriber (req.User): it may change req.Object, or set
// req.Suppress to keep the event from that subscriber.
func (r *Registry) AfterLiveQueryEvent(class string, fn TriggerHandler, v ...Validator) {
	r.setTrigger(service.AfterLiveQueryEvent, class, trigger{save: fn, v: firstValidator(v)})
}

func (r *Registry) setTrigger(kind service.TriggerKind, class string, t trigger) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.triggers[kind][class] = t
}

func firstValidator(v []Validator) *Validator {
	if len(v) == 0 {
		return nil
	}
	return &v[0]
}

// guard runs fn, turning a panic into an error so that cloud code can
// never take the server down.
func (r *Registry) guard(what string, fn func() error) (err error) {
	r.stats.runs.Add(1)
	defer func() {
		if v := recover(); v != nil {
			err = r.logPanic(what, v)
		} else if err != nil {
			err = r.logFailure(what, err)
		}
		if err != nil {
			r.stats.failures.Add(1)
			if pe, ok := schema.AsError(err); ok && pe.Code == schema.CodeTimeout || errors.Is(err, context.DeadlineExceeded) {
				r.stats.timeouts.Add(1)
			}
		}
	}()
	return fn()
}

// Stats counts the registry's runs of functions, jobs and triggers.
type Stats struct {
	Runs     uint64 // every run, whatever its end
	Failures uint64 // runs that ended in an error (timeouts and panics too)
	Timeouts uint64 // runs interrupted after cloudCodeTimeout (124)
	// MemoryStops counts JavaScript runs stopped past cloudCodeMaxMemory
	// (141); they are Failures too.
	MemoryStops uint64
}

// Stats returns the counters so far.
func (r *Registry) Stats() Stats {
	return Stats{Runs: r.stats.runs.Load(), Failures: r.stats.failures.Load(), Timeouts: r.stats.timeouts.Load(),
		MemoryStops: r.stats.memoryStops.Load()}
}

// asParseError gives err a Parse code: its own, or code.
func asParseError(err error, code int) error {
	if err == nil {
		return nil
	}
	if _, ok := schema.AsError(err); ok {
		return err
	}
	if err == context.DeadlineExceeded {
		return schema.Errorf(schema.CodeTimeout, "Script timed out.")
	}
	return schema.Errorf(code, "%s", err.Error())
}
