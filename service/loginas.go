package service

import (
	"github.com/quarrydata/quarry/schema"
)

// LogInAs opens a session for the user userID on the master key's word
// (POST /loginAs): no password, no triggers, no lockout, as Parse Server
// does for support and testing tools. The session says it was made with
// the master key.
func (s *Service) LogInAs(a Auth, userID any) (schema.Object, error) {
	if !a.Master || a.ReadOnly {
		return nil, schema.Errorf(schema.CodeOperationForbidden, "master key is required")
	}
	id, _ := userID.(string)
	if id == "" {
		return nil, schema.Errorf(codeInvalidValue, "userId must not be empty, null, or undefined")
	}
	user, ok := s.userByID(id)
	if !ok {
		return nil, schema.Errorf(schema.CodeObjectNotFound, "user not found")
	}
	sess, err := s.createSession(id, a.InstallationID, map[string]any{"action": "login", "authProvider": "masterkey"}, nil)
	if err != nil {
		return nil, err
	}
	out := s.present(classUser, user, ReadOptions{}, nil)
	out["sessionToken"] = sess["sessionToken"]
	return out, nil
}

// codeInvalidValue is Parse's INVALID_VALUE.
const codeInvalidValue = 162
