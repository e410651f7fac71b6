package transport

import (
	"github.com/valyala/fasthttp"

	"github.com/quarrydata/quarry/schema"
)

// sessionExempt are paths that read the session token themselves (or
// ignore it) instead of having it resolved by the envelope.
var sessionExempt = map[string]bool{"/login": true, "/challenge": true, "/sessions/me": true, "/upgradeToRevocableSession": true, "/users/me": true}

func userRoutes() []route {
	return []route{
		{method: "POST", pattern: "/users", fn: signUp, batchable: true},
		{method: "GET", pattern: "/users", fn: classFind("_User"), batchable: true},
		{method: "GET", pattern: "/users/me", fn: me},
		{method: "GET", pattern: "/users/{objectId}", fn: getUser, batchable: true},
		{method: "PUT", pattern: "/users/{objectId}", fn: withClass("_User", updateObject), batchable: true},
		{method: "DELETE", pattern: "/users/{objectId}", fn: classDelete("_User"), batchable: true},
		{method: "POST", pattern: "/login", fn: logIn},
		{method: "GET", pattern: "/login", fn: logIn},
		{method: "POST", pattern: "/logout", fn: logOut},
		{method: "POST", pattern: "/verifyPassword", fn: verifyPassword},
		{method: "GET", pattern: "/verifyPassword", fn: verifyPassword},
		{method: "POST", pattern: "/upgradeToRevocableSession", fn: upgradeSession},
		{method: "POST", pattern: "/challenge", fn: challenge},
		{method: "POST", pattern: "/loginAs", fn: logInAs},
	}
}

func sessionRoutes() []route {
	return []route{
		{method: "GET", pattern: "/sessions", fn: classFind("_Session"), batchable: true},
		{method: "POST", pattern: "/sessions", fn: createSession, batchable: true},
		{method: "GET", pattern: "/sessions/me", fn: sessionMe},
		{method: "PUT", pattern: "/sessions/me", fn: pairSession},
		{method: "GET", pattern: "/sessions/{objectId}", fn: classGet("_Session"), batchable: true},
		{method: "PUT", pattern: "/sessions/{objectId}", fn: classUpdate("_Session"), batchable: true},
		{method: "DELETE", pattern: "/sessions/{objectId}", fn: classDelete("_Session"), batchable: true},
	}
}

func roleRoutes() []route {
	return []route{
		{method: "GET", pattern: "/roles", fn: classFind("_Role"), batchable: true},
		{method: "POST", pattern: "/roles", fn: classCreate("_Role", "/roles/"), batchable: true},
		{method: "GET", pattern: "/roles/{objectId}", fn: classGet("_Role"), batchable: true},
		{method: "PUT", pattern: "/roles/{objectId}", fn: classUpdate("_Role"), batchable: true},
		{method: "DELETE", pattern: "/roles/{objectId}", fn: classDelete("_Role"), batchable: true},
	}
}

// The class* adapters bind a built-in class to the generic object
// endpoints, so /users, /roles and /sessions share one code path with
// /classes/_User, /classes/_Role and /classes/_Session.
func withClass(class string, fn endpoint) endpoint {
	return func(s *Server, c *call) (any, error) {
		c.params.set("className", class)
		return fn(s, c)
	}
}

func classFind(class string) endpoint   { return withClass(class, findObjects) }
func classGet(class string) endpoint    { return withClass(class, getObject) }
func classUpdate(class string) endpoint { return withClass(class, updateObject) }
func classDelete(class string) endpoint { return withClass(class, deleteObject) }

func classCreate(class, locationPath string) endpoint {
	return withClass(class, func(s *Server, c *call) (any, error) {
		out, err := createObject(s, c)
		if err == nil {
			c.location = c.base + locationPath + out.(map[string]any)["objectId"].(string)
		}
		return out, err
	})
}

func signUp(s *Server, c *call) (any, error) {
	if _, ok := c.body["authData"]; ok {
		return signUpWithAuthData(s, c) // authdata.go
	}
	res, token, err := s.accounts.SignUp(c.auth, c.body)
	if err != nil {
		return nil, err
	}
	c.status = fasthttp.StatusCreated
	c.location = c.base + "/users/" + res.ObjectID
	out := map[string]any{"objectId": res.ObjectID, "createdAt": res.CreatedAt, "sessionToken": token}
	if token == "" { // the email must be verified first (accounts.SignUp)
		delete(out, "sessionToken")
	}
	for k, v := range res.Echo { // operator results and a beforeSave's changes
		if _, set := out[k]; !set {
			out[k] = v
		}
	}
	return out, nil
}

// me answers GET /users/me; a bad token is the specification's 209
// "invalid session token".
func me(s *Server, c *call) (any, error) {
	a, err := s.svc.Authenticate(c.auth)
	if err != nil || a.UserID == "" {
		return nil, schema.Errorf(schema.CodeInvalidSessionToken, "invalid session token")
	}
	return s.accounts.Me(a)
}

func getUser(s *Server, c *call) (any, error) {
	c.params.set("className", "_User")
	if c.auth.UserID == "" || c.params.get("objectId") != c.auth.UserID {
		return getObject(s, c)
	}
	// A user reading themselves gets their session token too.
	ro, err := getOptions(c)
	if err != nil {
		return nil, err
	}
	obj, err := s.svc.Get(c.auth, "_User", c.params.get("objectId"), ro)
	if err != nil {
		return nil, err
	}
	obj["sessionToken"] = c.auth.SessionToken // Get returns a copy
	return obj, nil
}

func loginParams(c *call) (username, email, password any) {
	p := c.allParams()
	for _, kv := range c.raw.query {
		// URL parameters are text: the password 12345 is not a number.
		switch kv[0] {
		case "username", "email", "password":
			p[kv[0]] = kv[1]
		}
	}
	return p["username"], p["email"], p["password"]
}

func logIn(s *Server, c *call) (any, error) {
	u, e, p := loginParams(c)
	a := c.auth
	a.LoginAuthData, _ = c.allParams()["authData"].(map[string]any) // the mfa token
	return s.accounts.LogIn(a, u, e, p, false)
}

// logInAs takes userId from the body or, as Parse Server allows, the URL.
func logInAs(s *Server, c *call) (any, error) {
	id, _ := c.param("userId")
	return s.accounts.LogInAs(c.auth, id)
}

func verifyPassword(s *Server, c *call) (any, error) {
	u, e, p := loginParams(c)
	return s.accounts.LogIn(c.auth, u, e, p, true)
}

func logOut(s *Server, c *call) (any, error) {
	return map[string]any{}, s.accounts.LogOut(c.auth)
}

func upgradeSession(s *Server, c *call) (any, error) {
	if c.auth.SessionToken == "" {
		return nil, schema.Errorf(schema.CodeObjectNotFound, "invalid session")
	}
	// Every token Quarry issues is already revocable; there are no legacy
	// tokens to upgrade.
	return nil, schema.Errorf(schema.CodeInvalidSessionToken, "invalid legacy session token")
}

func sessionMe(s *Server, c *call) (any, error) { return s.accounts.SessionMe(c.auth) }

func pairSession(s *Server, c *call) (any, error) {
	a, err := s.svc.Authenticate(c.auth)
	if err != nil {
		return nil, err
	}
	return s.accounts.PairSession(a, c.body)
}

func createSession(s *Server, c *call) (any, error) {
	out, err := s.accounts.CreateRestrictedSession(c.auth, c.body)
	if err != nil {
		return nil, err
	}
	c.status = fasthttp.StatusCreated
	c.location = c.base + "/sessions/" + out["objectId"].(string)
	return out, nil
}
