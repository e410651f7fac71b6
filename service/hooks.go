package service

import (
	"reflect"

	"github.com/quarrydata/quarry/schema"
)

// Hooks is the seam where cloud code runs (package cloud implements it;
// service never imports cloud). Has is asked first on every write and
// query, so a class without triggers costs one map lookup. Handlers may
// be slow: the service never calls them while it holds a lock.
type Hooks interface {
	// Has reports whether a trigger of kind is registered for class.
	Has(kind TriggerKind, class string) bool
	// Trigger runs a save or delete trigger. BeforeSave may change
	// req.Object; an error from a before* trigger refuses the write.
	Trigger(req *TriggerRequest) error
	// Find runs a find trigger: BeforeFind may change req.Params,
	// AfterFind may replace req.Results.
	Find(req *FindRequest) error
	// RunFunction runs the cloud function name; unknown names fail with 141.
	RunFunction(auth Auth, name string, params map[string]any) (any, error)
	// HasJob reports whether a job called name is defined.
	HasJob(name string) bool
	// JobNames lists the defined jobs, sorted.
	JobNames() []string
	// RunJob runs a job to its end (in the caller's goroutine).
	RunJob(req *JobRequest) error
}

// NoResult is the result of a function that returned nothing (undefined
// in JavaScript): the reply is then {} rather than {"result": null}.
var NoResult any = noResult{}

type noResult struct{}

// TriggerKind names a trigger.
type TriggerKind int

// Trigger kinds, with Parse's names (TriggerKind.String).
const (
	BeforeSave TriggerKind = iota
	AfterSave
	BeforeDelete
	AfterDelete
	BeforeFind
	AfterFind
	// Log-in and log-out triggers (logins.go): class _User, and _Session
	// for AfterLogout.
	BeforeLogin
	AfterLogin
	AfterLogout
	// File triggers (files.go): class FileClass.
	BeforeSaveFile
	AfterSaveFile
	BeforeDeleteFile
	AfterDeleteFile
	// LiveQuery triggers: BeforeConnect has class ConnectClass.
	BeforeConnect
	BeforeSubscribe
	AfterLiveQueryEvent
	// NumTriggerKinds counts the kinds above.
	NumTriggerKinds
)

// FileClass and ConnectClass are the class names under which the file
// triggers and beforeConnect are registered (they have no class).
const (
	FileClass    = "@File"
	ConnectClass = "@Connect"
)

var triggerNames = [...]string{"beforeSave", "afterSave", "beforeDelete", "afterDelete", "beforeFind", "afterFind",
	"beforeLogin", "afterLogin", "afterLogout", "beforeSaveFile", "afterSaveFile", "beforeDeleteFile", "afterDeleteFile",
	"beforeConnect", "beforeSubscribe", "afterLiveQueryEvent"}

func (k TriggerKind) String() string {
	if int(k) < len(triggerNames) {
		return triggerNames[k]
	}
	return "unknown"
}

// RequestInfo is what the front end knows of a request beyond its
// credentials; cloud code sees it as request.headers, ip and context.
type RequestInfo struct {
	Headers map[string]string
	IP      string
	// Context is the X-Parse-Cloud-Context header (or the JS SDK's
	// _context body field), decoded.
	Context map[string]any
}

// TriggerRequest is one save or delete trigger call.
type TriggerRequest struct {
	Kind  TriggerKind
	Class string
	// Object is the object as it will be (save) or as it was (delete),
	// internal fields removed. A beforeSave may change it.
	Object schema.Object
	// Original is the stored object an update or delete starts from; nil
	// for a create.
	Original schema.Object
	Auth     Auth
	// Event is an afterLiveQueryEvent's event (create, enter, update,
	// leave, delete); the trigger sets Suppress to keep it from the client.
	Event    string
	Suppress bool
}

// FindRequest is one find trigger call.
type FindRequest struct {
	Kind    TriggerKind
	Class   string
	Auth    Auth
	IsGet   bool
	Params  *FindParams     // beforeFind may change it
	Results []schema.Object // afterFind may replace them
}

// JobRequest is one job run.
type JobRequest struct {
	ID     string // the _JobStatus objectId
	Name   string
	Params map[string]any
	Auth   Auth
	// Message replaces the job status's message.
	Message func(string)
}

// preparedTrigger is what the before-phase learned about one op: whether
// after triggers run and which fields a beforeSave changed.
type preparedTrigger struct {
	after   bool
	changed map[string]any
}

// beforeTriggers runs beforeSave and beforeDelete for ops, before any
// lock is taken: a trigger may be slow and may write through the service
// itself. A beforeSave's changes are folded into the op's body as plain
// sets (or deletes), so the locked write validates them like any input and
// operators the trigger left alone (Increment) stay atomic.
func (s *Service) beforeTriggers(auth Auth, ops []WriteOp) ([]preparedTrigger, error) {
	h := s.opts.Hooks
	if h == nil {
		return nil, nil
	}
	var out []preparedTrigger
	for i := range ops {
		op := &ops[i]
		if op.quiet {
			continue
		}
		afterKind, beforeKind := AfterSave, BeforeSave
		if op.Method == MethodDelete {
			afterKind, beforeKind = AfterDelete, BeforeDelete
		}
		hasAfter, hasBefore := h.Has(afterKind, op.Class), h.Has(beforeKind, op.Class)
		if !hasAfter && !hasBefore {
			continue
		}
		if out == nil {
			out = make([]preparedTrigger, len(ops))
		}
		out[i].after = hasAfter
		if !hasBefore {
			continue
		}
		changed, err := s.runBeforeTrigger(auth, op, beforeKind)
		if err != nil {
			if len(ops) > 1 {
				return nil, annotate(err, i)
			}
			return nil, err
		}
		out[i].changed = changed
	}
	return out, nil
}

func (s *Service) runBeforeTrigger(auth Auth, op *WriteOp, kind TriggerKind) (map[string]any, error) {
	var cur schema.Object
	if op.Method != MethodCreate {
		cur, _ = s.storedObject(op.Class, op.ID)
		if cur == nil {
			return nil, schema.ErrObjectNotFound
		}
	}
	req := &TriggerRequest{Kind: kind, Class: op.Class, Original: hookView(cur), Auth: auth}
	if op.Method == MethodDelete {
		req.Object = hookView(cur)
		return nil, s.opts.Hooks.Trigger(req)
	}
	d := newDraft(op.Class, op.ID, cur)
	if err := d.apply(op.Body, op.Method == MethodCreate); err != nil {
		return nil, err
	}
	before := hookView(d.obj)
	req.Object = hookView(d.obj)
	if err := s.opts.Hooks.Trigger(req); err != nil {
		return nil, err
	}
	return foldChanges(op, before, req.Object), nil
}

// foldChanges writes into op's body what a beforeSave changed between
// before and after, and returns the changed fields for the reply.
func foldChanges(op *WriteOp, before, after schema.Object) map[string]any {
	changed := map[string]any{}
	if op.Body == nil {
		op.Body = map[string]any{}
	}
	for k, v := range after {
		if systemKeys[k] {
			continue
		}
		if old, ok := before[k]; ok && reflect.DeepEqual(old, v) {
			continue
		}
		op.Body[k] = v
		changed[k] = v
	}
	for k := range before {
		if _, kept := after[k]; kept || systemKeys[k] {
			continue
		}
		if op.Method == MethodCreate {
			delete(op.Body, k)
		} else {
			op.Body[k] = map[string]any{"__op": "Delete"}
		}
	}
	return changed
}

// systemKeys are never changed by a trigger's edits.
var systemKeys = map[string]bool{"objectId": true, "createdAt": true, "updatedAt": true, "password": true}

// hookView copies an object for a trigger, without internal fields.
func hookView(obj schema.Object) schema.Object {
	if obj == nil {
		return nil
	}
	out := make(schema.Object, len(obj))
	for k, v := range obj {
		if k != "" && k[0] != '_' && k != "password" {
			out[k] = v
		}
	}
	return out
}

// afterTriggers runs afterSave and afterDelete once the writes are
// durable and the locks released. Their errors are logged, never returned:
// the write has happened.
func (s *Service) afterTriggers(auth Auth, prepared []preparedTrigger, ops []WriteOp, results []WriteResult, drafts []*draft) {
	for i := range prepared {
		r := &results[i]
		if c := prepared[i].changed; len(c) > 0 {
			switch ops[i].Method {
			case MethodCreate:
				if r.Create.Echo == nil {
					r.Create.Echo = map[string]any{}
				}
				for k, v := range c {
					if _, set := r.Create.Echo[k]; !set {
						r.Create.Echo[k] = v
					}
				}
			case MethodUpdate:
				for k, v := range c {
					if !r.Update.has(k) {
						if r.Update.Echo == nil {
							r.Update.Echo = map[string]any{}
						}
						r.Update.Echo[k] = v
					}
				}
			}
		}
		if !prepared[i].after {
			continue
		}
		d := drafts[i]
		req := &TriggerRequest{Kind: AfterSave, Class: d.class, Object: hookView(d.obj), Original: hookView(d.original), Auth: auth}
		if d.obj == nil {
			req.Kind, req.Object = AfterDelete, hookView(d.original)
		}
		if err := s.opts.Hooks.Trigger(req); err != nil && s.opts.Warn != nil {
			s.opts.Warn(req.Kind.String() + " trigger of " + req.Class + " failed: " + err.Error())
		}
	}
}

// beforeFind lets a beforeFind trigger rewrite a query's parameters.
func (s *Service) beforeFind(auth Auth, class string, p *FindParams) error {
	h := s.opts.Hooks
	if h == nil || auth.internal || !h.Has(BeforeFind, class) {
		return nil
	}
	return h.Find(&FindRequest{Kind: BeforeFind, Class: class, Auth: auth, IsGet: p.op == opGet, Params: p})
}

// afterFind lets an afterFind trigger replace a query's results.
func (s *Service) afterFind(auth Auth, class string, p *FindParams, out *FindResult) error {
	h := s.opts.Hooks
	if h == nil || auth.internal || !h.Has(AfterFind, class) {
		return nil
	}
	req := &FindRequest{Kind: AfterFind, Class: class, Auth: auth, IsGet: p.op == opGet, Params: p, Results: out.Results}
	if err := h.Find(req); err != nil {
		return err
	}
	out.Results = req.Results
	return nil
}
