package cloud

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/dop251/goja"

	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
)

// natives are the Go functions the prelude calls (global __quarry). The
// SDK ones answer a JSON string, {"ok": value} or {"error": {code,
// message}}, so that a Go failure becomes a Parse.Error in the script.
func (s *Scripts) natives(rt *jsRuntime, vm *goja.Runtime, register bool) map[string]any {
	return map[string]any{
		"define": func(kind, name string, fn goja.Value, validator goja.Value) {
			rt.handlers[kind+":"+name] = fn
			if !register {
				return
			}
			var v *Validator
			if text, ok := validator.Export().(string); ok {
				v = parseValidator(text)
			}
			s.define(kind, name, v)
		},
		"log": func(level, msg string) {
			switch level {
			case "error":
				s.log.Error(msg, "source", "cloud")
			case "warn":
				s.log.Warn(msg, "source", "cloud")
			default:
				s.log.Info(msg, "source", "cloud")
			}
		},
		"find":        func(class, params, opts string) string { return answer(s.sdkFind(class, params, opts)) },
		"save":        func(class, id, body, opts string) string { return answer(s.sdkSave(class, id, body, opts)) },
		"destroy":     func(class, id, opts string) string { return answer(nil, s.sdkDestroy(class, id, opts)) },
		"run":         func(name, params, opts string) string { return answer(s.sdkRun(name, params, opts)) },
		"httpRequest": func(opts string) *goja.Promise { return s.httpRequest(rt, vm, opts) },
		"signUp":      func(body, opts string) string { return answer(s.sdkSignUp(body, opts)) },
		"logIn":       func(username, password, opts string) string { return answer(s.sdkLogIn(username, password, opts)) },
		"timers": func(c goja.FunctionCall) goja.Value {
			rt.timers += int(c.Argument(0).ToInteger())
			return goja.Undefined()
		},
		"become":  func(token string) string { return answer(s.sdkBecome(token)) },
		"sdk":     func(op, args, opts string) string { return answer(s.sdk(op, args, opts)) },
		"session": func(token string) string { return answer(s.sdkSession(token)) },
	}
}

func answer(v any, err error) string {
	var out any = map[string]any{"ok": v}
	if err != nil {
		pe, ok := schema.AsError(err)
		if !ok {
			pe = &schema.Error{Code: schema.CodeInternalServerError, Message: "Internal server error."}
		}
		out = map[string]any{"error": map[string]any{"code": pe.Code, "message": pe.Message}}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return `{"error":{"code":1,"message":"the reply could not be encoded"}}`
	}
	return string(b)
}

// sdkOptions are a call's useMasterKey, sessionToken and context.
type sdkOptions struct {
	UseMasterKey bool           `json:"useMasterKey"`
	SessionToken string         `json:"sessionToken"`
	Context      map[string]any `json:"context"`
}

func (s *Scripts) auth(opts string) (service.Auth, error) {
	var o sdkOptions
	if err := json.Unmarshal([]byte(opts), &o); err != nil {
		return service.Auth{}, schema.Errorf(schema.CodeInvalidJSON, "invalid options")
	}
	a := service.Auth{Master: o.UseMasterKey, SessionToken: o.SessionToken}
	if o.Context != nil {
		a.Request = &service.RequestInfo{Context: o.Context}
	}
	if s.reg.svc == nil {
		return a, schema.Errorf(schema.CodeInternalServerError, "cloud code is not attached to a service")
	}
	return s.reg.svc.Authenticate(a)
}

// sdkQuery is a Parse.Query as the prelude sends it.
type sdkQuery struct {
	Where   map[string]any `json:"where"`
	Limit   *int           `json:"limit"`
	Skip    int            `json:"skip"`
	Order   string         `json:"order"`
	Keys    string         `json:"keys"`
	Include string         `json:"include"`
	Exclude string         `json:"excludeKeys"`
	All     bool           `json:"includeAll"`
	Count   int            `json:"count"`
	Get     bool           `json:"get"`
}

func (s *Scripts) sdkFind(class, params, opts string) (any, error) {
	auth, err := s.auth(opts)
	if err != nil {
		return nil, err
	}
	var q sdkQuery
	if err := json.Unmarshal([]byte(params), &q); err != nil {
		return nil, schema.Errorf(schema.CodeInvalidJSON, "invalid query")
	}
	id := ""
	if q.Get {
		id, _ = q.Where["objectId"].(string)
	}
	if err := s.reg.limitInternal("GET", class, id); err != nil {
		return nil, err
	}
	read := service.ReadOptions{Keys: splitList(q.Keys), Include: splitList(q.Include), ExcludeKeys: splitList(q.Exclude), IncludeAll: q.All}
	if q.Get {
		id, _ := q.Where["objectId"].(string)
		obj, err := s.reg.svc.Get(auth, class, id, read)
		if err != nil {
			if pe, ok := schema.AsError(err); ok && pe.Code == schema.CodeObjectNotFound {
				return map[string]any{"results": []any{}}, nil
			}
			return nil, err
		}
		return map[string]any{"results": []any{obj}}, nil
	}
	p, err := findParams(q)
	if err != nil {
		return nil, err
	}
	p.Read = read
	res, err := s.reg.svc.Find(auth, class, p)
	if err != nil {
		return nil, err
	}
	return map[string]any{"results": res.Results, "count": res.Count}, nil
}

func findParams(q sdkQuery) (service.FindParams, error) {
	p := service.FindParams{Where: q.Where, Limit: -1, Skip: q.Skip, Count: q.Count != 0}
	if q.Limit != nil {
		p.Limit = *q.Limit
	}
	order, err := service.ParseOrder(q.Order)
	if err != nil {
		return p, err
	}
	p.Order = order
	return p, nil
}

func (s *Scripts) sdkSave(class, id, body, opts string) (any, error) {
	auth, err := s.auth(opts)
	if err != nil {
		return nil, err
	}
	var b map[string]any
	if err := json.Unmarshal([]byte(body), &b); err != nil {
		return nil, schema.Errorf(schema.CodeInvalidJSON, "invalid object")
	}
	method := "PUT"
	if id == "" {
		method = "POST"
	}
	if err := s.reg.limitInternal(method, class, id); err != nil {
		return nil, err
	}
	if id == "" {
		res, err := s.reg.svc.Create(auth, class, b)
		if err != nil {
			return nil, err
		}
		out := map[string]any{"objectId": res.ObjectID, "createdAt": res.CreatedAt, "updatedAt": res.CreatedAt}
		for k, v := range res.Echo {
			out[k] = v
		}
		return out, nil
	}
	res, err := s.reg.svc.Update(auth, class, id, b)
	if err != nil {
		return nil, err
	}
	return res.Reply(), nil
}

func (s *Scripts) sdkDestroy(class, id, opts string) error {
	auth, err := s.auth(opts)
	if err != nil {
		return err
	}
	if err := s.reg.limitInternal("DELETE", class, id); err != nil {
		return err
	}
	return s.reg.svc.Delete(auth, class, id)
}

func (s *Scripts) sdkRun(name, params, opts string) (any, error) {
	auth, err := s.auth(opts)
	if err != nil {
		return nil, err
	}
	var p map[string]any
	if err := json.Unmarshal([]byte(params), &p); err != nil {
		return nil, schema.Errorf(schema.CodeInvalidJSON, "invalid params")
	}
	if err := s.reg.limitOperation("POST", "/functions/"+name); err != nil {
		return nil, err
	}
	return s.reg.svc.RunFunction(auth, name, p)
}

// sdkSignUp is Parse.User's signUp: the new user's fields and token.
func (s *Scripts) sdkSignUp(body, opts string) (any, error) {
	auth, err := s.auth(opts)
	if err != nil {
		return nil, err
	}
	var b map[string]any
	if err := json.Unmarshal([]byte(body), &b); err != nil {
		return nil, schema.Errorf(schema.CodeInvalidJSON, "invalid user")
	}
	if err := s.reg.limitOperation("POST", "/users"); err != nil {
		return nil, err
	}
	res, token, err := s.reg.acc.SignUp(auth, b)
	if err != nil {
		return nil, err
	}
	out := map[string]any{"objectId": res.ObjectID, "createdAt": res.CreatedAt, "updatedAt": res.CreatedAt, "sessionToken": token}
	for k, v := range res.Echo {
		out[k] = v
	}
	return out, nil
}

// sdkLogIn is Parse.User.logIn: the user with its new session token.
func (s *Scripts) sdkLogIn(username, password, opts string) (any, error) {
	auth, err := s.auth(opts)
	if err != nil {
		return nil, err
	}
	if err := s.reg.limitOperation("POST", "/login"); err != nil {
		return nil, err
	}
	return s.reg.acc.LogIn(auth, username, nil, password, false)
}

// sdkBecome is Parse.User.become: the session's user with its token, as
// GET /users/me answers it.
func (s *Scripts) sdkBecome(token string) (any, error) {
	auth, err := s.tokenAuth(token)
	if err != nil {
		return nil, err
	}
	return s.reg.acc.Me(auth)
}

// sdkSession is Parse.Session.current with a sessionToken: the _Session
// object, as GET /sessions/me answers it.
func (s *Scripts) sdkSession(token string) (any, error) {
	auth, err := s.tokenAuth(token)
	if err != nil {
		return nil, err
	}
	return s.reg.acc.SessionMe(auth)
}

// tokenAuth is the identity a session token gives (209 without one).
func (s *Scripts) tokenAuth(token string) (service.Auth, error) {
	if token == "" {
		return service.Auth{}, schema.Errorf(schema.CodeInvalidSessionToken, "Invalid session token")
	}
	if s.reg.svc == nil {
		return service.Auth{}, schema.Errorf(schema.CodeInternalServerError, "cloud code is not attached to a service")
	}
	return s.reg.svc.Authenticate(service.Auth{SessionToken: token})
}

func splitList(s string) []string {
	if s == "" {
		return nil
	}
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// validatorJSON is a validator object as the prelude encodes it.
type validatorJSON struct {
	RequireUser       bool `json:"requireUser"`
	RequireMaster     bool `json:"requireMaster"`
	SkipWithMasterKey bool `json:"skipWithMasterKey"`
	ValidateMasterKey bool `json:"validateMasterKey"`
	RateLimit         *struct {
		RequestTimeWindow       float64 `json:"requestTimeWindow"`
		RequestCount            float64 `json:"requestCount"`
		ErrorResponseMessage    string  `json:"errorResponseMessage"`
		IncludeMasterKey        bool    `json:"includeMasterKey"`
		IncludeInternalRequests bool    `json:"includeInternalRequests"`
		RedisURL                string  `json:"redisUrl"`
	} `json:"rateLimit"`
	Fields map[string]struct {
		Type     string `json:"type"`
		Required bool   `json:"required"`
		Default  any    `json:"default"`
		Options  []any  `json:"options"`
	} `json:"fields"`
}

func parseValidator(s string) *Validator {
	var vj validatorJSON
	if json.Unmarshal([]byte(s), &vj) != nil {
		return nil
	}
	v := &Validator{RequireUser: vj.RequireUser, RequireMaster: vj.RequireMaster, SkipWithMasterKey: vj.SkipWithMasterKey,
		ValidateMasterKey: vj.ValidateMasterKey}
	if rl := vj.RateLimit; rl != nil {
		v.RateLimit = &RateLimit{Window: time.Duration(rl.RequestTimeWindow * float64(time.Millisecond)), Count: int(rl.RequestCount),
			Message: rl.ErrorResponseMessage, IncludeMaster: rl.IncludeMasterKey, IncludeInternal: rl.IncludeInternalRequests, RedisURL: rl.RedisURL}
	}
	if len(vj.Fields) > 0 {
		v.Fields = map[string]Field{}
		for k, f := range vj.Fields {
			v.Fields[k] = Field{Type: f.Type, Required: f.Required, Default: f.Default, Options: f.Options}
		}
	}
	return v
}
