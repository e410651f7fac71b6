package accounts

import (
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
)

// LogInAs opens a session for the user userID on the master key's word
// (POST /loginAs): no password, no triggers, no lockout, as Parse Server
// does for support and testing tools. The session says it was made with
// the master key.
func (x *Accounts) LogInAs(a service.Auth, userID any) (schema.Object, error) {
	if !a.Master || a.ReadOnly {
		return nil, schema.Errorf(schema.CodeOperationForbidden, "master key is required")
	}
	id, _ := userID.(string)
	if id == "" {
		return nil, schema.Errorf(codeInvalidValue, "userId must not be empty, null, or undefined")
	}
	user, ok := x.core.UserByID(id)
	if !ok {
		return nil, schema.Errorf(schema.CodeObjectNotFound, "user not found")
	}
	sess, err := x.core.CreateSession(id, a.InstallationID, map[string]any{"action": "login", "authProvider": "masterkey"}, nil)
	if err != nil {
		return nil, err
	}
	out := x.core.Present(classUser, user)
	out["sessionToken"] = sess["sessionToken"]
	return out, nil
}
