package service

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/quarrydata/quarry/index"
	"github.com/quarrydata/quarry/schema"
)

var (
	emailPattern    = regexp.MustCompile(`^.+@.+$`)
	roleNamePattern = regexp.MustCompile(`^[0-9a-zA-Z\-_ ]+$`)
)

// Parse error codes of the user flows.
const (
	codeUsernameMissing  = 200
	codePasswordMissing  = 201
	codeUsernameTaken    = 202
	codeEmailTaken       = 203
	codeSessionMissing   = 206
	codeInvalidEmail     = 125
	codeInvalidRoleName  = 139
	codeChangedImmutable = 136
)

// classRules applies the built-in classes' rules to a prepared write:
// password hashing, unique usernames and emails, role names, and the
// fields of sessions that never change.
func (s *Service) classRules(a Auth, d *draft, body map[string]any) error {
	switch d.class {
	case classUser:
		return s.userRules(a, d, body)
	case classRole:
		return s.roleRules(d)
	case classSession:
		if a.internal || a.Master && d.original == nil {
			return nil
		}
		if _, ok := body["ACL"]; ok {
			return schema.Errorf(schema.CodeInvalidKeyName, "Cannot set ACL on a Session.")
		}
		if d.original != nil {
			for k := range body {
				root, _, _ := strings.Cut(k, ".")
				if sessionOwned[root] == ownedAlways || sessionOwned[root] == ownedUnlessMaster && !a.Master {
					return schema.Errorf(schema.CodeInvalidKeyName, "Cannot change %s of a session.", root)
				}
			}
		} else if !a.Master {
			return schema.Errorf(schema.CodeOperationForbidden, "Sessions are created through /sessions or login.")
		}
	}
	return nil
}

// Who may change which server-owned field of an existing session. The
// expiry is the server's (sessionLength): a client that could move it
// would keep a stolen or old token alive for ever.
const (
	ownedUnlessMaster = 1 // the master key may change it
	ownedAlways       = 2 // nobody may
)

var sessionOwned = map[string]int{
	"sessionToken": ownedAlways, "installationId": ownedAlways,
	"user": ownedUnlessMaster, "expiresAt": ownedUnlessMaster, "createdWith": ownedUnlessMaster,
	"restricted": ownedUnlessMaster,
}

func (s *Service) userRules(a Auth, d *draft, body map[string]any) error {
	if !a.internal {
		for k := range body {
			// A user's sessionToken is the reply's, never a stored field: a
			// stored one would be public and shadow the real token.
			if root, _, _ := strings.Cut(k, "."); root == "sessionToken" {
				return schema.Errorf(schema.CodeInvalidKeyName, "Invalid field name: %s.", root)
			}
		}
	}
	if _, ok := body["emailVerified"]; ok && !a.Master && !a.internal {
		return schema.Errorf(schema.CodeOperationForbidden, "Clients aren't allowed to manually update email verification.")
	}
	creating := d.original == nil
	if _, hasAuthData := body["authData"]; creating && !hasAuthData {
		if u, ok := d.obj["username"].(string); !ok || u == "" {
			return schema.Errorf(codeUsernameMissing, "bad or missing username")
		}
		if p, ok := body["password"].(string); !ok || p == "" {
			return schema.Errorf(codePasswordMissing, "password is required")
		}
	}
	if v, ok := body["username"]; ok {
		u, isStr := v.(string)
		if !isStr || u == "" {
			return schema.Errorf(codeUsernameMissing, "bad or missing username")
		}
		lc := strings.ToLower(u)
		if s.opts.LowercaseUsernames {
			d.obj["username"] = lc
		}
		if other, taken := s.findOne(classUser, schema.KeyUsernameLC, lc); taken && other["objectId"] != d.id {
			return schema.Errorf(codeUsernameTaken, "Account already exists for this username.")
		}
		d.obj[schema.KeyUsernameLC] = lc
	}
	if v, ok := body["email"]; ok {
		switch e := v.(type) {
		case nil:
			delete(d.obj, schema.KeyEmailLC)
		case string:
			if !emailPattern.MatchString(e) {
				return schema.Errorf(codeInvalidEmail, "Email address format is invalid.")
			}
			lc := strings.ToLower(e)
			if s.opts.LowercaseEmails {
				d.obj["email"] = lc
			}
			if other, taken := s.findOne(classUser, schema.KeyEmailLC, lc); taken && other["objectId"] != d.id {
				return schema.Errorf(codeEmailTaken, "Account already exists for this email address.")
			}
			d.obj[schema.KeyEmailLC] = lc
		default:
			if _, isOp := v.(map[string]any); !isOp {
				return schema.Errorf(codeInvalidEmail, "Email address format is invalid.")
			}
			delete(d.obj, schema.KeyEmailLC)
		}
	}
	if v, ok := body["password"]; ok {
		p, isStr := v.(string)
		if !isStr || p == "" {
			return schema.Errorf(codePasswordMissing, "password is required")
		}
		hash := d.hashedPassword // hashed by write, before any lock
		if hash == "" {
			return fmt.Errorf("service: the password of %s/%s was not hashed before the write", d.class, d.id)
		}
		d.obj[schema.KeyHashedPassword] = hash
		delete(d.obj, "password")
		delete(d.fields, "password")
		d.passwordChanged = true
	}
	if err := s.authDataRules(d, d.authPlan, body); err != nil {
		return err
	}
	if acl, given := d.obj["ACL"].(map[string]any); given && !a.Master && !a.internal {
		if _, inBody := body["ACL"]; inBody {
			// A client never locks a user out of its own object: its own
			// read and write come back whatever ACL it sends (locking a
			// user out, ACL {}, takes the master key).
			acl[d.id] = map[string]any{"read": true, "write": true}
		}
	}
	if creating {
		if _, ok := body["ACL"]; !ok {
			acl := map[string]any{d.id: map[string]any{"read": true, "write": true}}
			if !s.opts.PrivateUsers {
				acl["*"] = map[string]any{"read": true}
			}
			d.obj["ACL"] = acl
		}
	}
	return s.accountRules(a, d, body) // email_flows.go
}

func (s *Service) roleRules(d *draft) error {
	name, hasName := d.obj["name"].(string)
	if d.original == nil {
		if !hasName {
			return schema.Errorf(schema.CodeIncorrectType, "name is required.")
		}
		if _, ok := d.obj["ACL"]; !ok {
			return schema.Errorf(schema.CodeIncorrectType, "ACL is required.")
		}
		if !roleNamePattern.MatchString(name) {
			return schema.Errorf(codeInvalidRoleName, "Role names can only contain alphanumeric characters, _, -, and spaces.")
		}
		if _, taken := s.findOne(classRole, "name", name); taken {
			return schema.Errorf(schema.CodeDuplicateValue, "A role with the name %s already exists.", name)
		}
		return nil
	}
	if old, _ := d.original["name"].(string); name != old {
		return schema.Errorf(codeChangedImmutable, "A role's name can only be set before it has been saved.")
	}
	return nil
}

// SessionLength is the default lifetime of a session.
const SessionLength = 365 * 24 * time.Hour

// newSessionToken is "r:" and 32 hex characters from crypto/rand.
func newSessionToken() string {
	var raw [16]byte
	if _, err := rand.Read(raw[:]); err != nil {
		panic("crypto/rand failed: " + err.Error())
	}
	return "r:" + hex.EncodeToString(raw[:])
}

// createSession stores a session for a user and returns it. Another
// session of the same user and installation is replaced.
func (s *Service) createSession(userID, installationID string, createdWith map[string]any, extra map[string]any) (schema.Object, error) {
	length := s.opts.SessionLength
	if length <= 0 {
		length = SessionLength
	}
	body := map[string]any{}
	for k, v := range extra {
		body[k] = v
	}
	body["sessionToken"] = newSessionToken()
	body["user"] = schema.Pointer(classUser, userID)
	body["createdWith"] = createdWith
	if !s.opts.Accounts.SessionsNeverExpire {
		body["expiresAt"] = schema.Date(schema.FormatTime(s.opts.Now().Add(length)))
	}
	if installationID != "" {
		body["installationId"] = installationID
	}
	internal := Auth{Master: true, internal: true}
	var ops []WriteOp
	if installationID != "" {
		for _, old := range s.sessionsOf(userID) {
			if old["installationId"] == installationID {
				ops = append(ops, WriteOp{Method: MethodDelete, Class: classSession, ID: old["objectId"].(string)})
			}
		}
	}
	ops = append(ops, WriteOp{Method: MethodCreate, Class: classSession, Body: body})
	res, err := s.write(internal, ops, true)
	if err != nil {
		return nil, err
	}
	id := res[len(res)-1].Create.ObjectID
	sess, _ := s.data.Collection(classSession, false).Get(id)
	return sess, nil
}

// sessionsOf lists a user's sessions through the session index on user.
func (s *Service) sessionsOf(userID string) []schema.Object {
	c := s.data.Collection(classSession, false)
	if c == nil {
		return nil
	}
	var out []schema.Object
	_ = c.ScanRange("user", pointRange(schema.Pointer(classUser, userID)), false, time.Time{}, func(ref index.Ref) bool {
		out = append(out, ref.Object())
		return true
	})
	return out
}

// revokeSessions deletes a user's sessions except the one kept ("" keeps none).
func (s *Service) revokeSessions(userID, keep string) error {
	var ops []WriteOp
	for _, sess := range s.sessionsOf(userID) {
		if id := sess["objectId"].(string); id != keep {
			ops = append(ops, WriteOp{Method: MethodDelete, Class: classSession, ID: id})
		}
	}
	if len(ops) == 0 {
		return nil
	}
	_, err := s.write(Auth{Master: true, internal: true}, ops, true)
	return err
}

// SignUp creates a user and a session for them. The reply carries the
// session token.
func (s *Service) SignUp(a Auth, body map[string]any) (CreateResult, string, error) {
	res, err := s.Create(a, classUser, body)
	if err != nil {
		return CreateResult{}, "", err
	}
	if !s.signUpGetsSession(res.ObjectID) { // email_flows.go
		return res, "", nil
	}
	sess, err := s.createSession(res.ObjectID, a.InstallationID,
		map[string]any{"action": "signup", "authProvider": "password"}, nil)
	if err != nil {
		return CreateResult{}, "", err
	}
	return res, sess["sessionToken"].(string), nil
}

// LogIn checks a username (or email) and password and opens a session.
// It returns the user as the login reply shows it, with sessionToken.
func (s *Service) LogIn(a Auth, username, email, password any, verifyOnly bool) (schema.Object, error) {
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
	if s.opts.LowercaseUsernames {
		u = strings.ToLower(u)
	}
	var user schema.Object
	var ok bool
	switch {
	case u != "" && e != "":
		user, ok = s.findOne(classUser, "username", u)
		ok = ok && strings.EqualFold(str(user["email"]), e)
	case u != "":
		if user, ok = s.findOne(classUser, "username", u); !ok {
			user, ok = s.findOne(classUser, schema.KeyEmailLC, strings.ToLower(u))
		}
	default:
		user, ok = s.findOne(classUser, schema.KeyEmailLC, strings.ToLower(e))
	}
	hash, _ := user[schema.KeyHashedPassword].(string)
	match := ok && hash != "" && bcrypt.CompareHashAndPassword([]byte(hash), bcryptInput(p)) == nil
	if err := s.loginPolicy(a, user, ok, match); err != nil { // lockout.go
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
	out := s.present(classUser, user, ReadOptions{}, nil)
	if verifyOnly {
		return out, nil
	}
	if err := s.loginFactors(a, user); err != nil { // mfa.go
		return nil, err
	}
	if err := s.BeforeLogin(a, out); err != nil {
		return nil, err
	}
	sess, err := s.createSession(uid, a.InstallationID, map[string]any{"action": "login", "authProvider": "password"}, nil)
	if err != nil {
		return nil, err
	}
	out["sessionToken"] = sess["sessionToken"]
	s.AfterLogin(a, out, str(sess["sessionToken"]))
	return out, nil
}

func str(v any) string { s, _ := v.(string); return s }

// bcryptMaxBytes is the most of a password bcrypt reads.
const bcryptMaxBytes = 72

// bcryptInput is the part of a password bcrypt hashes: its first 72 bytes,
// as Parse Server's bcrypt does (Go's refuses longer input instead of
// ignoring the rest, which would fail sign-ups with long passphrases).
func bcryptInput(p string) []byte {
	if len(p) > bcryptMaxBytes {
		p = p[:bcryptMaxBytes]
	}
	return []byte(p)
}

// LogOut deletes the caller's session.
func (s *Service) LogOut(a Auth) error {
	if a.SessionToken == "" {
		return nil
	}
	sess, ok := s.sessionByToken(a.SessionToken)
	if !ok {
		return schema.Errorf(schema.CodeInvalidSessionToken, "Invalid session token")
	}
	_, err := s.write(Auth{Master: true, internal: true},
		[]WriteOp{{Method: MethodDelete, Class: classSession, ID: sess["objectId"].(string)}}, true)
	if err == nil {
		s.afterLogout(a, sess)
	}
	return err
}

// Me returns the caller's own user with their session token.
func (s *Service) Me(a Auth) (schema.Object, error) {
	if a.UserID == "" {
		return nil, schema.Errorf(schema.CodeInvalidSessionToken, "invalid session token")
	}
	s.catchUp() // current.go: the user as another instance last wrote it
	user, ok := s.userByID(a.UserID)
	if !ok {
		return nil, schema.Errorf(schema.CodeInvalidSessionToken, "invalid session token")
	}
	out := s.present(classUser, user, ReadOptions{}, nil)
	out["sessionToken"] = a.SessionToken
	return out, nil
}

// SessionMe returns the caller's session object, looked up by token even
// when the token has expired (clients use it to inspect their session).
func (s *Service) SessionMe(a Auth) (schema.Object, error) {
	if a.SessionToken == "" {
		return nil, schema.Errorf(schema.CodeInvalidSessionToken, "Session token required.")
	}
	sess, ok := s.sessionByToken(a.SessionToken)
	if !ok {
		return nil, schema.Errorf(schema.CodeInvalidSessionToken, "Session token not found.")
	}
	return s.present(classSession, sess, ReadOptions{}, nil), nil
}

// PairSession attaches an installation id to the caller's session (the
// specification's PUT /sessions/me).
func (s *Service) PairSession(a Auth, body map[string]any) (map[string]any, error) {
	if a.UserID == "" {
		return nil, schema.Errorf(schema.CodeInvalidSessionToken, "Session token required.")
	}
	sess, ok := s.sessionByToken(a.SessionToken)
	if !ok {
		return nil, schema.Errorf(schema.CodeInvalidSessionToken, "Invalid session token")
	}
	inst, _ := body["installationId"].(string)
	if inst == "" {
		inst = a.InstallationID
	}
	if inst == "" {
		return nil, schema.Errorf(135, "installationId is required to pair a session with an installation")
	}
	res, err := s.Update(Auth{Master: true, internal: true}, classSession, sess["objectId"].(string),
		map[string]any{"installationId": inst})
	if err != nil {
		return nil, err
	}
	return res.Reply(), nil
}

// CreateRestrictedSession is POST /sessions: a logged-in caller opens
// another session for themselves; body keys (other than objectId and user)
// are copied into it.
func (s *Service) CreateRestrictedSession(a Auth, body map[string]any) (schema.Object, error) {
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
	if _, ok := s.userByID(userID); !ok {
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
	sess, err := s.createSession(userID, inst, map[string]any{"action": "create"}, extra)
	if err != nil {
		return nil, err
	}
	return s.present(classSession, sess, ReadOptions{}, nil), nil
}
