package service

import (
	"time"

	"github.com/quarrydata/quarry/schema"
)

// The hooks through which the accounts component (package accounts) takes
// part in the core's own work; the server registers them before serving.

// PasswordPolicy judges the password a _User write sets (passwordPolicy),
// before the write takes any lock: it may compare bcrypt hashes and run a
// cloud function. userID is "" for a new user; body is the write's.
type PasswordPolicy interface {
	CheckNewPassword(userID string, body map[string]any, password string) error
}

// SetPasswordPolicy registers the password policy; nil judges none.
func (s *Service) SetPasswordPolicy(p PasswordPolicy) { s.passwordPolicy = p }

// OnSessionUse registers fn to be told of each session Authenticate
// resolves, with its expiry as stored, before the request goes on: the
// accounts component's extendSessionOnUse. Call it before serving.
func (s *Service) OnSessionUse(fn func(session schema.Object, expiresISO string)) { s.sessionUse = fn }

// SessionLength is the lifetime of new sessions (Options.SessionLength).
func (s *Service) SessionLength() time.Duration {
	if s.opts.SessionLength <= 0 {
		return SessionLength
	}
	return s.opts.SessionLength
}

// SetSessionExpiry moves a session's expiry, as the server's bookkeeping:
// no triggers run and updatedAt stays.
func (s *Service) SetSessionExpiry(id string, at time.Time) error {
	_, err := s.write(InternalAuth(),
		[]WriteOp{{Method: MethodUpdate, Class: classSession, ID: id, Body: map[string]any{"expiresAt": dateValue(at)}, quiet: true}}, true)
	return err
}
