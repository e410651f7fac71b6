package cloud

import (
	"encoding/base64"
	"encoding/json"
	"io"

	"github.com/quarrydata/quarry/aggregate"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
)

// maxFileRead bounds what Parse.File's getData reads into a runtime.
const maxFileRead = 32 << 20

// codeFileRead is Parse.Error.FILE_READ_ERROR.
const codeFileRead = 601

// sdkOps are the SDK calls beyond objects and queries (Parse.Config,
// Parse.Schema, aggregate, jobs, files, user e-mails and sessions), each
// given its arguments as a JSON array and the call's auth. The natives
// map holds one entry for all of them (native.sdk(op, args, options)).
var sdkOps = map[string]func(s *Scripts, a service.Auth, args []json.RawMessage) (any, error){
	"configGet": func(s *Scripts, a service.Auth, _ []json.RawMessage) (any, error) { return s.reg.svc.Config(a), nil },
	"configSave": func(s *Scripts, a service.Auth, args []json.RawMessage) (any, error) {
		if err := needMaster(a); err != nil {
			return nil, err
		}
		var body map[string]any
		if err := arg(args, 0, &body); err != nil {
			return nil, err
		}
		if err := s.reg.svc.UpdateConfig(a, body); err != nil {
			return nil, err
		}
		return s.reg.svc.Config(a), nil
	},
	"aggregate": sdkAggregate,
	"startJob":  func(s *Scripts, a service.Auth, args []json.RawMessage) (any, error) { return sdkStartJob(s, a, args) },
	"schemaAll": func(s *Scripts, a service.Auth, _ []json.RawMessage) (any, error) {
		return masterOnly(a, func() (any, error) { return s.reg.svc.Schemas(), nil })
	},
	"schemaGet": func(s *Scripts, a service.Auth, args []json.RawMessage) (any, error) {
		return classCall(a, args, s.reg.svc.Schema)
	},
	"schemaSave": func(s *Scripts, a service.Auth, args []json.RawMessage) (any, error) {
		return schemaWrite(a, args, s.reg.svc.CreateSchema)
	},
	"schemaUpdate": func(s *Scripts, a service.Auth, args []json.RawMessage) (any, error) {
		return schemaWrite(a, args, s.reg.svc.UpdateSchema)
	},
	"schemaDelete": func(s *Scripts, a service.Auth, args []json.RawMessage) (any, error) {
		return classCall(a, args, func(c string) (any, error) { return map[string]any{}, s.reg.svc.DeleteSchema(a, c) })
	},
	"schemaPurge": func(s *Scripts, a service.Auth, args []json.RawMessage) (any, error) {
		return classCall(a, args, func(c string) (any, error) { return map[string]any{}, s.reg.svc.Purge(a, c) })
	},
	"track": func(s *Scripts, a service.Auth, args []json.RawMessage) (any, error) {
		var name string
		var dims map[string]any
		if err := arg(args, 0, &name); err != nil {
			return nil, err
		}
		_ = arg(args, 1, &dims)
		body := map[string]any{}
		if dims != nil {
			body["dimensions"] = dims
		}
		return map[string]any{}, s.reg.svc.TrackEvent(a, name, body)
	},
	"passwordReset": func(s *Scripts, _ service.Auth, args []json.RawMessage) (any, error) {
		var email string
		if err := arg(args, 0, &email); err != nil {
			return nil, err
		}
		return map[string]any{}, s.reg.acc.RequestPasswordReset(email)
	},
	"verificationEmail": func(s *Scripts, _ service.Auth, args []json.RawMessage) (any, error) {
		var email string
		if err := arg(args, 0, &email); err != nil {
			return nil, err
		}
		return map[string]any{}, s.reg.acc.RequestVerificationEmail(email)
	},
	"verifyPassword": func(s *Scripts, a service.Auth, args []json.RawMessage) (any, error) {
		var username, password string
		if err := arg(args, 0, &username); err != nil {
			return nil, err
		}
		if err := arg(args, 1, &password); err != nil {
			return nil, err
		}
		return s.reg.acc.LogIn(a, username, nil, password, true)
	},
	"logOut": func(s *Scripts, a service.Auth, _ []json.RawMessage) (any, error) {
		return map[string]any{}, s.reg.acc.LogOut(a)
	},
	"loginAs": func(s *Scripts, a service.Auth, args []json.RawMessage) (any, error) {
		var id string
		if err := arg(args, 0, &id); err != nil {
			return nil, err
		}
		return s.reg.acc.LogInAs(a, id)
	},
	"logInWith": sdkLogInWith,
	"jobsData": func(s *Scripts, a service.Auth, _ []json.RawMessage) (any, error) {
		names, err := s.reg.svc.JobNames(a)
		if err != nil {
			return nil, err
		}
		return map[string]any{"jobs": names, "in_use": []string{}}, nil
	},
	"hooks":    sdkHooks,
	"push":     sdkPush,
	"fileSave": sdkFileSave,
	"fileGet":  sdkFileGet,
	"fileDelete": func(s *Scripts, a service.Auth, args []json.RawMessage) (any, error) {
		var name string
		if err := arg(args, 0, &name); err != nil {
			return nil, err
		}
		return map[string]any{}, s.reg.svc.DeleteFile(a, name)
	},
}

// Pusher sends a push as POST /push does (push.Sender): it records a
// _PushStatus and returns its id.
type Pusher interface {
	Send(auth service.Auth, body map[string]any) (string, error)
}

// SetPusher lets Parse.Push.send reach the push adapter. Call it before
// serving.
func (r *Registry) SetPusher(p Pusher) {
	r.mu.Lock()
	r.pusher = p
	r.mu.Unlock()
}

func sdkPush(s *Scripts, a service.Auth, args []json.RawMessage) (any, error) {
	if err := needMaster(a); err != nil {
		return nil, err
	}
	var body map[string]any
	if err := arg(args, 0, &body); err != nil {
		return nil, err
	}
	s.reg.mu.RLock()
	p := s.reg.pusher
	s.reg.mu.RUnlock()
	if p == nil {
		return nil, schema.Errorf(schema.CodePushMisconfigured, "Push controller is not set: configure push.adapter (see docs/push.md).")
	}
	return p.Send(a, body)
}

// sdk runs one of sdkOps.
func (s *Scripts) sdk(op, args, opts string) (any, error) {
	fn, ok := sdkOps[op]
	if !ok {
		return nil, schema.Errorf(schema.CodeCommandUnavailable, "cloud code: unknown SDK call %s", op)
	}
	a, err := s.auth(opts)
	if err != nil {
		return nil, err
	}
	var list []json.RawMessage
	if err := json.Unmarshal([]byte(args), &list); err != nil {
		return nil, schema.Errorf(schema.CodeInvalidJSON, "invalid arguments")
	}
	return fn(s, a, list)
}

func arg(args []json.RawMessage, i int, into any) error {
	if i >= len(args) {
		return schema.Errorf(schema.CodeInvalidJSON, "missing argument %d", i+1)
	}
	if err := json.Unmarshal(args[i], into); err != nil {
		return schema.Errorf(schema.CodeInvalidJSON, "invalid argument %d", i+1)
	}
	return nil
}

func needMaster(a service.Auth) error {
	if !a.Master {
		return schema.Errorf(schema.CodeOperationForbidden, "unauthorized: master key is required")
	}
	return nil
}

func masterOnly(a service.Auth, fn func() (any, error)) (any, error) {
	if err := needMaster(a); err != nil {
		return nil, err
	}
	return fn()
}

func classCall[T any](a service.Auth, args []json.RawMessage, fn func(string) (T, error)) (any, error) {
	if err := needMaster(a); err != nil {
		return nil, err
	}
	var class string
	if err := arg(args, 0, &class); err != nil {
		return nil, err
	}
	return fn(class)
}

func schemaWrite(a service.Auth, args []json.RawMessage, fn func(service.Auth, string, map[string]any) (map[string]any, error)) (any, error) {
	if err := needMaster(a); err != nil {
		return nil, err
	}
	var class string
	var body map[string]any
	if err := arg(args, 0, &class); err != nil {
		return nil, err
	}
	if err := arg(args, 1, &body); err != nil {
		return nil, err
	}
	return fn(a, class, body)
}

// sdkAggregate is query.aggregate and query.distinct: args are the
// class, the where, the distinct field ("" for a pipeline) and the
// pipeline as [name, spec, sort keys in order] triples, so that the
// order of a $sort's keys survives JSON.
func sdkAggregate(s *Scripts, a service.Auth, args []json.RawMessage) (any, error) {
	var class, distinct string
	var where map[string]any
	var stages [][]json.RawMessage
	if err := arg(args, 0, &class); err != nil {
		return nil, err
	}
	_ = arg(args, 1, &where)
	_ = arg(args, 2, &distinct)
	_ = arg(args, 3, &stages)
	p := service.AggregateParams{Distinct: distinct, Where: where}
	for _, st := range stages {
		var stage aggregate.Stage
		if err := arg(st, 0, &stage.Name); err != nil {
			return nil, err
		}
		if err := arg(st, 1, &stage.Spec); err != nil {
			return nil, err
		}
		_ = arg(st, 2, &stage.Keys)
		p.Stages = append(p.Stages, stage)
	}
	if err := s.reg.limitInternal("GET", class, ""); err != nil {
		return nil, err
	}
	res, err := s.reg.svc.Aggregate(a, class, p)
	if err != nil {
		return nil, err
	}
	b, err := res.AppendResults(nil)
	if err != nil {
		return nil, err
	}
	return json.RawMessage(b), nil
}

func sdkStartJob(s *Scripts, a service.Auth, args []json.RawMessage) (any, error) {
	var name string
	var params map[string]any
	if err := arg(args, 0, &name); err != nil {
		return nil, err
	}
	_ = arg(args, 1, &params)
	if params == nil {
		params = map[string]any{}
	}
	return s.reg.svc.StartJob(a, name, params)
}

// sdkLogInWith is Parse.User.logInWith(provider, {authData}): the user
// the auth data signs up or logs in, with a session token.
func sdkLogInWith(s *Scripts, a service.Auth, args []json.RawMessage) (any, error) {
	var provider string
	var data map[string]any
	if err := arg(args, 0, &provider); err != nil {
		return nil, err
	}
	if err := arg(args, 1, &data); err != nil {
		return nil, err
	}
	if err := s.reg.limitOperation("POST", "/users"); err != nil {
		return nil, err
	}
	res, err := s.reg.acc.SignUpWithAuthData(a, map[string]any{"authData": map[string]any{provider: data}})
	if err != nil {
		return nil, err
	}
	return s.sdkBecome(res.SessionToken)
}

func sdkFileSave(s *Scripts, a service.Auth, args []json.RawMessage) (any, error) {
	var name, data, contentType string
	var metadata, tags map[string]string
	if err := arg(args, 0, &name); err != nil {
		return nil, err
	}
	if err := arg(args, 1, &data); err != nil {
		return nil, err
	}
	_ = arg(args, 2, &contentType)
	_ = arg(args, 3, &metadata)
	_ = arg(args, 4, &tags)
	raw, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		return nil, schema.Errorf(schema.CodeFileSaveError, "Cannot create a Parse.File: the data is not base64.")
	}
	if !s.reg.svc.FilesEnabled() {
		return nil, schema.Errorf(schema.CodeFileSaveError, "No files adapter is configured.")
	}
	return s.reg.svc.SaveFile(a, service.FileUpload{Name: name, ContentType: contentType, Data: raw, Metadata: metadata, Tags: tags})
}

// sdkFileGet is Parse.File's getData: the stored bytes, base64.
func sdkFileGet(s *Scripts, _ service.Auth, args []json.RawMessage) (any, error) {
	var name string
	if err := arg(args, 0, &name); err != nil {
		return nil, err
	}
	if !s.reg.svc.FilesEnabled() {
		return nil, schema.Errorf(codeFileRead, "No files adapter is configured.")
	}
	f, _, err := s.reg.svc.OpenFile(name)
	if err != nil {
		return nil, schema.Errorf(schema.CodeObjectNotFound, "File not found.")
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxFileRead+1))
	if err != nil || len(b) > maxFileRead {
		return nil, schema.Errorf(codeFileRead, "Could not read the file.")
	}
	return base64.StdEncoding.EncodeToString(b), nil
}

// sdkHooks is Parse.Hooks: args are the action (list, get, create,
// update, remove), whether triggers (not functions) are meant, and the
// webhook {functionName | className+triggerName, url}.
func sdkHooks(s *Scripts, a service.Auth, args []json.RawMessage) (any, error) {
	var action string
	var triggers bool
	var w struct {
		FunctionName string `json:"functionName"`
		ClassName    string `json:"className"`
		TriggerName  string `json:"triggerName"`
		URL          string `json:"url"`
	}
	if err := arg(args, 0, &action); err != nil {
		return nil, err
	}
	_ = arg(args, 1, &triggers)
	_ = arg(args, 2, &w)
	hook := service.Webhook{FunctionName: w.FunctionName, ClassName: w.ClassName, TriggerName: w.TriggerName, URL: w.URL}
	var out service.Webhook
	var err error
	switch action {
	case "list":
		list, err := s.reg.svc.Webhooks(a, triggers)
		if err != nil {
			return nil, err
		}
		res := make([]any, len(list))
		for i, h := range list {
			res[i] = hookJSON(h)
		}
		return res, nil
	case "get":
		out, err = s.reg.svc.Webhook(a, hook)
	case "create":
		out, err = s.reg.svc.CreateWebhook(a, hook)
	case "update":
		out, err = s.reg.svc.UpdateWebhook(a, hook)
	case "remove":
		return map[string]any{}, s.reg.svc.DeleteWebhook(a, hook)
	default:
		return nil, schema.Errorf(schema.CodeCommandUnavailable, "unknown hooks action %s", action)
	}
	if err != nil {
		return nil, err
	}
	return hookJSON(out), nil
}

func hookJSON(h service.Webhook) map[string]any {
	if h.IsFunction() {
		return map[string]any{"functionName": h.FunctionName, "url": h.URL}
	}
	return map[string]any{"className": h.ClassName, "triggerName": h.TriggerName, "url": h.URL}
}
