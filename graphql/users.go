package graphql

import (
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
)

// viewer is the caller's user and session token.
func (e *executor) viewer(a service.Auth) (any, error) {
	u, err := e.h.acc.Me(a)
	if err != nil {
		return nil, err
	}
	token := str(u["sessionToken"])
	delete(u, "sessionToken")
	cm := e.m.classes["_User"]
	return map[string]any{"sessionToken": token, "user": &objectValue{cm, u}}, nil
}

// viewerFor is the viewer of a session just opened.
func (e *executor) viewerFor(token string) (any, error) {
	a, err := e.h.svc.Authenticate(service.Auth{SessionToken: token, InstallationID: e.auth.InstallationID, Request: e.auth.Request})
	if err != nil {
		return nil, err
	}
	return e.viewer(a)
}

func (e *executor) signUp(input map[string]any) (map[string]any, error) {
	body, _, err := e.fieldsIn(e.m.classes["_User"], input["fields"], false)
	if err != nil {
		return nil, err
	}
	_, token, err := e.h.acc.SignUp(e.auth, body)
	if err != nil {
		return nil, err
	}
	v, err := e.viewerFor(token)
	if err != nil {
		return nil, err
	}
	return map[string]any{"viewer": v}, nil
}

func (e *executor) logIn(input map[string]any) (map[string]any, error) {
	u, err := e.h.acc.LogIn(e.auth, input["username"], nil, input["password"], false)
	if err != nil {
		return nil, err
	}
	token, _ := u["sessionToken"].(string)
	if token == "" {
		return nil, schema.Errorf(schema.CodeInternalServerError, "Internal server error.")
	}
	v, err := e.viewerFor(token)
	if err != nil {
		return nil, err
	}
	return map[string]any{"viewer": v}, nil
}

// logInWith signs up or logs in with third-party authData, through the
// service call REST's POST /users with authData makes.
func (e *executor) logInWith(input map[string]any) (map[string]any, error) {
	body, _, err := e.fieldsIn(e.m.classes["_User"], input["fields"], false)
	if err != nil {
		return nil, err
	}
	delete(body, "username")
	delete(body, "password")
	body["authData"] = input["authData"]
	r, err := e.h.acc.SignUpWithAuthData(e.auth, body)
	if err != nil {
		return nil, err
	}
	token := r.SessionToken
	if !r.Created {
		token, _ = r.User["sessionToken"].(string)
	}
	if token == "" {
		return nil, schema.Errorf(schema.CodeInternalServerError, "Internal server error.")
	}
	v, err := e.viewerFor(token)
	if err != nil {
		return nil, err
	}
	if m, ok := v.(map[string]any); ok && r.Response != nil {
		if u, ok := m["user"].(*objectValue); ok {
			u.obj["authDataResponse"] = r.Response
		}
	}
	return map[string]any{"viewer": v}, nil
}
