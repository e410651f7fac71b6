package service

import (
	"golang.org/x/crypto/bcrypt"

	"github.com/quarrydata/quarry/auth"
	"github.com/quarrydata/quarry/schema"
)

// What the accounts component (package accounts) asks of the core: users
// and sessions as stored (internal fields included), writes made as the
// server, and the account settings. The rules every _User and _Session
// write obeys (password hashing and policy, unique usernames and emails,
// authData linking, verification tokens) stay in the core's write path,
// so that any write, whichever front end makes it, keeps them.

// UserByID returns the stored _User id, internal fields included.
func (s *Service) UserByID(id string) (schema.Object, bool) { return s.userByID(id) }

// FindUser returns the stored _User whose indexed field equals value:
// username, schema.KeyUsernameLC, schema.KeyEmailLC, a link token
// (schema.KeyEmailVerifyToken, schema.KeyPerishableToken), or
// "authData.<provider>.id".
func (s *Service) FindUser(field string, value any) (schema.Object, bool) {
	return s.findOne(classUser, field, value)
}

// SessionByToken returns the stored _Session with the token, expired or not.
func (s *Service) SessionByToken(token string) (schema.Object, bool) {
	return s.sessionByToken(token)
}

// CreateSession opens a session for a user; another session of the same
// user and installation is replaced. extra holds further fields.
func (s *Service) CreateSession(userID, installationID string, createdWith, extra map[string]any) (schema.Object, error) {
	return s.createSession(userID, installationID, createdWith, extra)
}

// DeleteSession deletes a session as the server.
func (s *Service) DeleteSession(id string) error {
	_, err := s.write(InternalAuth(), []WriteOp{{Method: MethodDelete, Class: classSession, ID: id}}, true)
	return err
}

// EditUser updates a user as the server, as any update (triggers run):
// body holds public fields, edit changes the stored object (internal
// fields included) under the object's lock, and its error refuses the
// write. keepSessions spares the user's sessions when body sets a new
// password.
func (s *Service) EditUser(id string, body map[string]any, edit func(schema.Object) error, keepSessions bool) error {
	return s.updateUser(id, body, edit, keepSessions)
}

// TouchUser changes only a user's internal fields (link tokens, lockout
// counts) under the object's lock: no trigger runs and updatedAt stays.
func (s *Service) TouchUser(id string, edit func(schema.Object) error) error {
	return s.touchUser(id, edit)
}

// Present returns a stored object as a reply shows it to its owner.
func (s *Service) Present(class string, obj schema.Object) schema.Object {
	return s.present(class, obj, ReadOptions{}, nil)
}

// CatchUpForRequest is CatchUp for a request: bounded, and never failing
// it (current.go).
func (s *Service) CatchUpForRequest() { s.catchUp() }

// PasswordMatches reports whether password is the one hash was made of.
func PasswordMatches(hash, password string) bool {
	return hash != "" && bcrypt.CompareHashAndPassword([]byte(hash), bcryptInput(password)) == nil
}

// AccountOptions are the configured email flows and account policies
// (Options.Accounts); read-only.
func (s *Service) AccountOptions() *AccountOptions { return &s.opts.Accounts }

// AuthProviders are the third-party sign-in providers (Options.Auth).
func (s *Service) AuthProviders() *auth.Registry { return s.opts.Auth }

// LowercaseUsernames says whether usernames are stored lower-cased.
func (s *Service) LowercaseUsernames() bool { return s.opts.LowercaseUsernames }

// AllowExpiredAuthDataToken is Options.AllowExpiredAuthDataToken.
func (s *Service) AllowExpiredAuthDataToken() bool { return s.opts.AllowExpiredAuthDataToken }

// MailLink sends a user a link email (verification, or a password reset
// when reset) in the background: a reply never waits for the relay, and
// never tells by its timing whether an address is known.
func (s *Service) MailLink(user schema.Object, page, token string, reset bool) {
	s.mailLink(user, page, token, reset)
}
