package service

import (
	"fmt"
	"math"

	"github.com/quarrydata/quarry/auth"
	"github.com/quarrydata/quarry/schema"
)

// The limit on wrong second factors (auth.MFALimit): every wrong TOTP,
// recovery or SMS code at login counts; MaxAttempts of them within Window
// lock the user's MFA logins, and their challenges, for Duration, even
// with a right code, so that the codes cannot be tried one after another.
// A right code clears the count. The count is kept in internal _User
// fields, so it holds across the server's instances and restarts.

// Internal _User fields of the limit.
const (
	fieldMFAFailures    = "_mfa_failed_count"
	fieldMFAFailedSince = "_mfa_failed_since"
	fieldMFALockedUntil = "_mfa_locked_until"
)

// mfaLimit is the configured limit (MaxAttempts 0: none).
func (s *Service) mfaLimit() auth.MFALimit {
	opts, ok := s.opts.Auth.Options(auth.MFA)
	if !ok {
		return auth.MFALimit{}
	}
	return auth.MFALimitOf(opts)
}

// mfaLockedError is the answer while a user's MFA logins are locked.
func mfaLockedError(l auth.MFALimit) error {
	return schema.Errorf(auth.CodeMFAError,
		"Too many failed MFA attempts. Please try again after %d minute(s).", int(math.Ceil(l.Duration.Minutes())))
}

// checkMFALock refuses a second factor while the user is locked.
func (s *Service) checkMFALock(user schema.Object) error {
	l := s.mfaLimit()
	if l.MaxAttempts <= 0 {
		return nil
	}
	if until, ok := dateField(user, fieldMFALockedUntil); ok && s.opts.Now().Before(until) {
		return mfaLockedError(l)
	}
	return nil
}

// mfaFailed counts a wrong code and returns the answer to it: 210 Invalid
// MFA token, and the lock from the next attempt on once the count reaches
// MaxAttempts (as accountLockout does). The count is taken under the
// user's lock, so parallel guesses each count.
func (s *Service) mfaFailed(user schema.Object) error {
	wrong := mfaError("Invalid MFA token")
	l := s.mfaLimit()
	if l.MaxAttempts <= 0 {
		return wrong
	}
	var locked bool
	err := s.touchUser(user["objectId"].(string), func(obj schema.Object) error {
		now := s.opts.Now()
		if until, ok := dateField(obj, fieldMFALockedUntil); ok && now.Before(until) {
			locked = true
			return nil
		}
		count := intField(obj, fieldMFAFailures)
		if since, ok := dateField(obj, fieldMFAFailedSince); !ok || !now.Before(since.Add(l.Window)) {
			count = 0
			obj[fieldMFAFailedSince] = dateValue(now)
		}
		count++
		if count >= l.MaxAttempts {
			obj[fieldMFALockedUntil] = dateValue(now.Add(l.Duration))
			delete(obj, fieldMFAFailures)
			delete(obj, fieldMFAFailedSince)
			return nil
		}
		obj[fieldMFAFailures] = float64(count)
		return nil
	})
	switch {
	case err != nil:
		return fmt.Errorf("counting a wrong MFA code: %w", err)
	case locked:
		return mfaLockedError(l)
	}
	return wrong
}

// mfaPassed lets a right code through unless a lock was set meanwhile
// (by parallel wrong guesses that the check before the code did not see
// yet), and clears the count. It runs under the user's lock, so a burst
// of guesses cannot slip a right one past the lock.
func (s *Service) mfaPassed(user schema.Object) error {
	l := s.mfaLimit()
	if l.MaxAttempts <= 0 {
		return nil
	}
	return s.touchUser(user["objectId"].(string), func(obj schema.Object) error {
		if until, ok := dateField(obj, fieldMFALockedUntil); ok && s.opts.Now().Before(until) {
			return mfaLockedError(l)
		}
		clearMFALimit(obj)
		return nil
	})
}

// clearMFALimit forgets the count and the lock (MFA turned off or
// set up anew).
func clearMFALimit(obj schema.Object) {
	delete(obj, fieldMFAFailures)
	delete(obj, fieldMFAFailedSince)
	delete(obj, fieldMFALockedUntil)
}
