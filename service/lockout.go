package service

import (
	"fmt"
	"time"

	"github.com/quarrydata/quarry/schema"
)

// lockedError is Parse's answer to a login on a locked account.
func (s *Service) lockedError() error {
	return schema.Errorf(schema.CodeObjectNotFound,
		"Your account is locked due to multiple failed login attempts. Please try again after %d minute(s)", s.opts.Accounts.LockoutMinutes)
}

// isLocked reports whether user is locked out now.
func (s *Service) isLocked(user schema.Object) bool {
	acc := &s.opts.Accounts
	exp, ok := dateField(user, fieldLockoutExpires)
	return ok && s.opts.Now().Before(exp) && intField(user, fieldFailedLogins) >= acc.LockoutThreshold
}

func intField(obj schema.Object, key string) int {
	switch v := obj[key].(type) {
	case float64:
		return int(v)
	case int:
		return v
	case int64:
		return int(v)
	}
	return 0
}

// loginPolicy runs after a login's password check (found: the user
// exists; match: the password is right) and before its answer: account
// lockout counts the attempt, then a right password may still be refused
// for an unverified email (205) or an expired password (101). A nil error
// with match false leaves the caller its "Invalid username/password."
func (s *Service) loginPolicy(a Auth, user schema.Object, found, match bool) error {
	if !found {
		return nil
	}
	acc := &s.opts.Accounts
	if acc.LockoutThreshold > 0 {
		if err := s.countLogin(user, match); err != nil {
			return err
		}
	}
	if !match || a.Master {
		return nil
	}
	// As in Parse Server, a user without emailVerified (no email, or one
	// from before verification was on) counts as unverified.
	if acc.VerifyUserEmails && acc.PreventLoginWithUnverifiedEmail && user["emailVerified"] != true {
		return schema.Errorf(codeEmailNotFound, "User email is not verified.")
	}
	if s.passwordExpired(user) {
		return schema.Errorf(schema.CodeObjectNotFound, "Your password has expired. Please reset your password.")
	}
	return nil
}

// countLogin keeps accountLockout's count: a locked account refuses every
// attempt; a success clears the count; a failure after an expired lock
// starts over, and the failure past the threshold locks the account.
func (s *Service) countLogin(user schema.Object, match bool) error {
	if s.isLocked(user) {
		return s.lockedError()
	}
	acc := &s.opts.Accounts
	id := user["objectId"].(string)
	if match {
		if intField(user, fieldFailedLogins) == 0 {
			return nil
		}
		return s.touchUser(id, func(obj schema.Object) error {
			obj[fieldFailedLogins] = float64(0)
			return nil
		})
	}
	var count int
	err := s.touchUser(id, func(obj schema.Object) error {
		now := s.opts.Now()
		if exp, ok := dateField(obj, fieldLockoutExpires); ok && !now.Before(exp) {
			obj[fieldFailedLogins] = float64(0)
			delete(obj, fieldLockoutExpires)
		}
		count = intField(obj, fieldFailedLogins) + 1
		obj[fieldFailedLogins] = float64(count)
		if count >= acc.LockoutThreshold {
			obj[fieldLockoutExpires] = dateValue(now.Add(lockoutDuration(acc.LockoutMinutes)))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("counting a failed login: %w", err)
	}
	if count > acc.LockoutThreshold {
		return s.lockedError()
	}
	return nil
}

func lockoutDuration(minutes int) time.Duration { return time.Duration(minutes) * time.Minute }
