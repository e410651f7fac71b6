package service

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
	"time"

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
	length := s.SessionLength()
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
