package graphql

import (
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/quarrydata/quarry/ratelimit"
)

// internalIP is the address of in-process requests (Execute): rate limits
// count them as cloud code's internal requests.
const internalIP = "internal"

// limit counts one operation against the rateLimit rules as the REST
// request method path would be counted: a rule on POST /login covers the
// logIn mutation too.
func (e *executor) limit(method, path string) error {
	l := e.h.opts.RateLimit
	if l == nil {
		return nil
	}
	return l.Check(ratelimit.Request{Method: method, Path: path, IP: e.ip, Master: e.auth.Master, Internal: e.ip == internalIP})
}

// limitRoot counts a root query or mutation field as its REST twin.
// Fields with no REST twin (health, introspection) count nothing.
func (e *executor) limitRoot(typ *ast.Definition, f *ast.Field, args map[string]any) error {
	if e.h.opts.RateLimit == nil {
		return nil
	}
	method, path := e.restTwin(typ, f, args)
	if path == "" {
		return nil
	}
	return e.limit(method, path)
}

// mutationTwins are the REST requests of the fixed mutations.
var mutationTwins = map[string][2]string{
	"signUp":                {"POST", "/users"},
	"logIn":                 {"POST", "/login"},
	"logInWith":             {"POST", "/users"},
	"logOut":                {"POST", "/logout"},
	"resetPassword":         {"POST", "/requestPasswordReset"},
	"sendVerificationEmail": {"POST", "/verificationEmailRequest"},
	"challenge":             {"POST", "/challenge"},
	"createFile":            {"POST", "/files/upload"},
}

// restTwin is the REST method and path below the mount path of a root
// field; "" when it has none.
func (e *executor) restTwin(typ *ast.Definition, f *ast.Field, args map[string]any) (method, path string) {
	input, _ := args["input"].(map[string]any)
	if typ.Name == e.m.schema.Mutation.Name {
		if t, ok := mutationTwins[f.Name]; ok {
			return t[0], t[1]
		}
		switch f.Name {
		case "callCloudCode":
			return "POST", "/functions/" + str(input["functionName"])
		case "createClass":
			return "POST", "/schemas/" + str(input["name"])
		case "updateClass":
			return "PUT", "/schemas/" + str(input["name"])
		case "deleteClass":
			return "DELETE", "/schemas/" + str(input["name"])
		}
		rf, ok := e.m.mutation[f.Name]
		if !ok {
			return "", ""
		}
		switch rf.kind {
		case rootCreate:
			return "POST", "/classes/" + rf.class.class
		case rootUpdate:
			return "PUT", "/classes/" + rf.class.class + "/" + idOf(rf.class.class, str(input["id"]))
		case rootDelete:
			return "DELETE", "/classes/" + rf.class.class + "/" + idOf(rf.class.class, str(input["id"]))
		}
		return "", ""
	}
	switch f.Name {
	case "viewer":
		return "GET", "/users/me"
	case "class", "classes":
		return "GET", "/schemas"
	}
	rf, ok := e.m.query[f.Name]
	if !ok {
		return "", ""
	}
	if rf.kind == rootGet {
		return "GET", "/classes/" + rf.class.class + "/" + idOf(rf.class.class, str(args["id"]))
	}
	return "GET", "/classes/" + rf.class.class
}
