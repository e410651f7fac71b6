package accounts

import (
	"strings"

	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
)

// SignUp creates a user and a session for them. The reply carries the
// session token ("" when email verification withholds it).
func (x *Accounts) SignUp(a service.Auth, body map[string]any) (service.CreateResult, string, error) {
	res, err := x.core.Create(a, classUser, body)
	if err != nil {
		return service.CreateResult{}, "", err
	}
	if !x.signUpGetsSession(res.ObjectID) {
		return res, "", nil
	}
	sess, err := x.core.CreateSession(res.ObjectID, a.InstallationID,
		map[string]any{"action": "signup", "authProvider": "password"}, nil)
	if err != nil {
		return service.CreateResult{}, "", err
	}
	return res, sess["sessionToken"].(string), nil
}

// signUpGetsSession reports whether a new user receives a session token,
// with verifyUserEmails on: not unless verified when login needs a
// verified email (preventLoginWithUnverifiedEmail, as login then would
// refuse them), not with an unverified email under
// preventSignupWithUnverifiedEmail.
func (x *Accounts) signUpGetsSession(userID string) bool {
	acc := x.core.AccountOptions()
	if !acc.VerifyUserEmails || !acc.PreventSignupWithUnverifiedEmail && !acc.PreventLoginWithUnverifiedEmail {
		return true
	}
	user, ok := x.core.UserByID(userID)
	if !ok {
		return true
	}
	if acc.PreventLoginWithUnverifiedEmail {
		return user["emailVerified"] == true
	}
	return user["emailVerified"] != false
}

// LogIn checks a username (or email) and password and opens a session.
// It returns the user as the login reply shows it, with sessionToken;
// verifyOnly checks without opening a session (GET /verifyPassword).
func (x *Accounts) LogIn(a service.Auth, username, email, password any, verifyOnly bool) (schema.Object, error) {
	u, _ := username.(string)
	e, _ := email.(string)
	p, pIsStr := password.(string)
	if u == "" && e == "" {
		if username == nil && email == nil {
			return nil, schema.Errorf(codeUsernameMissing, "username/email is required.")
		}
		return nil, schema.Errorf(schema.CodeObjectNotFound, "Invalid username/password.")
	}
	if password == nil {
		return nil, schema.Errorf(codePasswordMissing, "password is required.")
	}
	if !pIsStr {
		return nil, schema.Errorf(schema.CodeObjectNotFound, "Invalid username/password.")
	}
	if x.core.LowercaseUsernames() {
		u = strings.ToLower(u)
	}
	user, ok := x.userByLogin(u, e)
	match := ok && service.PasswordMatches(str(user[schema.KeyHashedPassword]), p)
	if err := x.loginPolicy(a, user, ok, match); err != nil { // lockout.go
		return nil, err
	}
	if !match {
		return nil, schema.Errorf(schema.CodeObjectNotFound, "Invalid username/password.")
	}
	if acl, isMap := user["ACL"].(map[string]any); isMap && len(acl) == 0 && !a.Master {
		// A user whose ACL is {} is locked out.
		return nil, schema.Errorf(schema.CodeObjectNotFound, "Invalid username/password.")
	}
	uid := user["objectId"].(string)
	out := x.core.Present(classUser, user)
	if verifyOnly {
		return out, nil
	}
	if err := x.loginFactors(a, user); err != nil { // mfa.go
		return nil, err
	}
	if err := x.core.BeforeLogin(a, out); err != nil {
		return nil, err
	}
	sess, err := x.core.CreateSession(uid, a.InstallationID, map[string]any{"action": "login", "authProvider": "password"}, nil)
	if err != nil {
		return nil, err
	}
	out["sessionToken"] = sess["sessionToken"]
	x.core.AfterLogin(a, out, str(sess["sessionToken"]))
	return out, nil
}

// userByLogin finds the user a login names: by username and email
// together, by username (or, failing that, by an email given as the
// username), or by email.
func (x *Accounts) userByLogin(username, email string) (schema.Object, bool) {
	switch {
	case username != "" && email != "":
		user, ok := x.core.FindUser("username", username)
		return user, ok && strings.EqualFold(str(user["email"]), email)
	case username != "":
		if user, ok := x.core.FindUser("username", username); ok {
			return user, true
		}
		return x.core.FindUser(schema.KeyEmailLC, strings.ToLower(username))
	default:
		return x.core.FindUser(schema.KeyEmailLC, strings.ToLower(email))
	}
}

// LogOut deletes the caller's session.
func (x *Accounts) LogOut(a service.Auth) error {
	if a.SessionToken == "" {
		return nil
	}
	sess, ok := x.core.SessionByToken(a.SessionToken)
	if !ok {
		return schema.Errorf(schema.CodeInvalidSessionToken, "Invalid session token")
	}
	err := x.core.DeleteSession(sess["objectId"].(string))
	if err == nil {
		x.core.AfterLogout(a, sess)
	}
	return err
}

// Me returns the caller's own user with their session token.
func (x *Accounts) Me(a service.Auth) (schema.Object, error) {
	if a.UserID == "" {
		return nil, schema.Errorf(schema.CodeInvalidSessionToken, "invalid session token")
	}
	x.core.CatchUpForRequest() // the user as another instance last wrote it
	user, ok := x.core.UserByID(a.UserID)
	if !ok {
		return nil, schema.Errorf(schema.CodeInvalidSessionToken, "invalid session token")
	}
	out := x.core.Present(classUser, user)
	out["sessionToken"] = a.SessionToken
	return out, nil
}

// SessionMe returns the caller's session object, looked up by token even
// when the token has expired (clients use it to inspect their session).
func (x *Accounts) SessionMe(a service.Auth) (schema.Object, error) {
	if a.SessionToken == "" {
		return nil, schema.Errorf(schema.CodeInvalidSessionToken, "Session token required.")
	}
	sess, ok := x.core.SessionByToken(a.SessionToken)
	if !ok {
		return nil, schema.Errorf(schema.CodeInvalidSessionToken, "Session token not found.")
	}
	return x.core.Present(classSession, sess), nil
}

// PairSession attaches an installation id to the caller's session (the
// specification's PUT /sessions/me).
func (x *Accounts) PairSession(a service.Auth, body map[string]any) (map[string]any, error) {
	if a.UserID == "" {
		return nil, schema.Errorf(schema.CodeInvalidSessionToken, "Session token required.")
	}
	sess, ok := x.core.SessionByToken(a.SessionToken)
	if !ok {
		return nil, schema.Errorf(schema.CodeInvalidSessionToken, "Invalid session token")
	}
	inst, _ := body["installationId"].(string)
	if inst == "" {
		inst = a.InstallationID
	}
	if inst == "" {
		return nil, schema.Errorf(codeMissingInstallationID, "installationId is required to pair a session with an installation")
	}
	res, err := x.core.Update(service.InternalAuth(), classSession, sess["objectId"].(string),
		map[string]any{"installationId": inst})
	if err != nil {
		return nil, err
	}
	return res.Reply(), nil
}

// CreateRestrictedSession is POST /sessions: a logged-in caller opens
// another session for themselves; body keys (other than objectId and user)
// are copied into it.
func (x *Accounts) CreateRestrictedSession(a service.Auth, body map[string]any) (schema.Object, error) {
	if a.ReadOnly {
		return nil, schema.Errorf(schema.CodeOperationForbidden, "read-only masterKey isn't allowed to perform the create operation.")
	}
	userID := a.UserID
	if a.Master {
		if p, ok := body["user"].(map[string]any); ok {
			userID, _ = p["objectId"].(string)
		}
	}
	if userID == "" {
		return nil, schema.Errorf(schema.CodeInvalidSessionToken, "Session token required.")
	}
	if _, ok := x.core.UserByID(userID); !ok {
		return nil, schema.ErrObjectNotFound
	}
	extra := map[string]any{}
	for k, v := range body {
		switch k {
		case "objectId", "user", "sessionToken", "createdWith", "expiresAt", "restricted", "ACL":
			continue
		}
		if !schema.ValidKeyName(k) {
			return nil, schema.Errorf(schema.CodeInvalidKeyName, "Invalid field name: %s.", k)
		}
		extra[k] = v
	}
	inst, _ := extra["installationId"].(string)
	delete(extra, "installationId")
	if inst == "" {
		inst = a.InstallationID
	}
	sess, err := x.core.CreateSession(userID, inst, map[string]any{"action": "create"}, extra)
	if err != nil {
		return nil, err
	}
	return x.core.Present(classSession, sess), nil
}
