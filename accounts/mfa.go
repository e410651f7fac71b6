package accounts

import (
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/quarrydata/quarry/auth"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
)

// The second factor at login (the auth option's mfa provider): an
// enrolled user's login must carry authData.mfa.token, a current TOTP
// code, an unused recovery code (spent), or the SMS code a challenge sent
// (spent). Enrolling is a _User write, kept by the core's write path.
//
// The limit on wrong codes (auth.MFALimit): every wrong code at login
// counts; MaxAttempts of them within Window lock the user's MFA logins,
// and their challenges, for Duration, even with a right code, so that
// the codes cannot be tried one after another. A right code clears the
// count. The count is kept in internal _User fields, so it holds across
// the server's instances and restarts.

// mfaEnrolled reports whether the user has a second factor.
func mfaEnrolled(user schema.Object) bool {
	return user[schema.KeyMFASecret] != nil || user[schema.KeyMFAMobile] != nil
}

func mfaError(msg string) error { return schema.Errorf(auth.CodeMFAError, "%s", msg) }

// loginFactors is LogIn's check of a second factor (the mfa token in the
// login's authData) before it opens a session.
func (x *Accounts) loginFactors(a service.Auth, user schema.Object) error {
	return x.checkLoginMFA(user, a.LoginAuthData[auth.MFA])
}

// checkLoginMFA lets an enrolled user's login through only with a second
// factor in its authData.mfa.
func (x *Accounts) checkLoginMFA(user schema.Object, mfa any) error {
	opts, on := x.core.AuthProviders().Options(auth.MFA)
	if !mfaEnrolled(user) || !on {
		return nil
	}
	if err := x.checkMFALock(user); err != nil {
		return err
	}
	entry, _ := mfa.(map[string]any)
	token, _ := entry["token"].(string)
	if token == "" {
		return schema.Errorf(auth.CodeMFATokenRequired, "Missing additional authData mfa")
	}
	secret, _ := user[schema.KeyMFASecret].(string)
	if secret == "" {
		return x.checkSMSLogin(user, token)
	}
	if auth.TOTPOf(opts).Valid(token, secret, x.core.Now()) {
		return x.mfaPassed(user)
	}
	hash := auth.HashRecoveryCode(token)
	recovery, _ := user[schema.KeyMFARecovery].([]any)
	if !slices.ContainsFunc(recovery, func(h any) bool { return auth.SameHash(str(h), hash) }) {
		return x.mfaFailed(user)
	}
	// Spent under the user's lock: two logins with one code, one wins.
	err := x.core.EditUser(user["objectId"].(string), nil, func(obj schema.Object) error {
		recovery, _ := obj[schema.KeyMFARecovery].([]any)
		i := slices.IndexFunc(recovery, func(h any) bool { return auth.SameHash(str(h), hash) })
		if i < 0 {
			return mfaError("Invalid MFA token")
		}
		obj[schema.KeyMFARecovery] = slices.Delete(slices.Clone(recovery), i, i+1)
		return nil
	}, false)
	if err != nil {
		return err
	}
	return x.mfaPassed(user)
}

// checkSMSLogin lets a login through with the code the user's challenge
// sent, which is spent.
func (x *Accounts) checkSMSLogin(user schema.Object, token string) error {
	if !x.core.SMSCodeValid(user[schema.KeyMFASMS], str(user[schema.KeyMFAMobile]), token) {
		return x.mfaFailed(user)
	}
	hash := auth.HashRecoveryCode(token)
	err := x.core.EditUser(user["objectId"].(string), nil, func(obj schema.Object) error {
		p, _ := obj[schema.KeyMFASMS].(map[string]any)
		if p == nil || !auth.SameHash(str(p["hash"]), hash) { // used meanwhile
			return mfaError("Invalid MFA token")
		}
		delete(obj, schema.KeyMFASMS)
		return nil
	}, false)
	if err != nil {
		return err
	}
	return x.mfaPassed(user)
}

// challengeSMS sends an SMS-enrolled user a login code.
func (x *Accounts) challengeSMS(user schema.Object) error {
	pending, err := x.core.SendSMSCode(str(user[schema.KeyMFAMobile]))
	if err != nil {
		return err
	}
	return x.core.EditUser(user["objectId"].(string), nil, func(obj schema.Object) error {
		obj[schema.KeyMFASMS] = pending
		return nil
	}, false)
}

// Challenge answers POST /challenge: the caller proves who they are (a
// username or email with the password, or authData) and asks the
// providers named in challengeData for a challenge; a provider with
// nothing to send (TOTP) answers true.
func (x *Accounts) Challenge(a service.Auth, body map[string]any) (map[string]any, error) {
	challenge, ok := body["challengeData"].(map[string]any)
	if !ok || len(challenge) == 0 {
		return nil, schema.Errorf(codeOtherCause, "Nothing to challenge.")
	}
	username, email, password := body["username"], body["email"], body["password"]
	var user schema.Object
	switch ad, hasAuthData := body["authData"].(map[string]any); {
	case username != nil || email != nil:
		shown, err := x.LogIn(a, username, email, password, true)
		if err != nil {
			return nil, err
		}
		user, _ = x.core.UserByID(str(shown["objectId"]))
	case hasAuthData:
		var err error
		if user, err = x.userByAuthData(a, ad); err != nil {
			return nil, err
		}
	default:
		return nil, schema.Errorf(codeOtherCause, "You need to provide username/email or authData to login.")
	}
	out := map[string]any{}
	for _, p := range slices.Sorted(maps.Keys(challenge)) {
		if !x.core.AuthProviders().Enabled(p) {
			return nil, auth.ErrUnsupported
		}
		if p == auth.MFA && mfaEnrolled(user) {
			if err := x.checkMFALock(user); err != nil {
				return nil, err
			}
		}
		if p == auth.MFA && user[schema.KeyMFAMobile] != nil {
			if err := x.challengeSMS(user); err != nil {
				return nil, err
			}
		}
		out[p] = true
	}
	return map[string]any{"challengeData": out}, nil
}

// mfaLimit is the configured limit (MaxAttempts 0: none).
func (x *Accounts) mfaLimit() auth.MFALimit {
	opts, ok := x.core.AuthProviders().Options(auth.MFA)
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
func (x *Accounts) checkMFALock(user schema.Object) error {
	l := x.mfaLimit()
	if l.MaxAttempts <= 0 {
		return nil
	}
	if until, ok := dateField(user, schema.KeyMFALockedUntil); ok && x.core.Now().Before(until) {
		return mfaLockedError(l)
	}
	return nil
}

// mfaFailed counts a wrong code and returns the answer to it: 210 Invalid
// MFA token, and the lock from the next attempt on once the count reaches
// MaxAttempts (as accountLockout does). The count is taken under the
// user's lock, so parallel guesses each count.
func (x *Accounts) mfaFailed(user schema.Object) error {
	wrong := mfaError("Invalid MFA token")
	l := x.mfaLimit()
	if l.MaxAttempts <= 0 {
		return wrong
	}
	var locked bool
	err := x.core.TouchUser(user["objectId"].(string), func(obj schema.Object) error {
		now := x.core.Now()
		if until, ok := dateField(obj, schema.KeyMFALockedUntil); ok && now.Before(until) {
			locked = true
			return nil
		}
		count := intField(obj, schema.KeyMFAFailedCount)
		if since, ok := dateField(obj, schema.KeyMFAFailedSince); !ok || !now.Before(since.Add(l.Window)) {
			count = 0
			obj[schema.KeyMFAFailedSince] = dateValue(now)
		}
		count++
		if count >= l.MaxAttempts {
			obj[schema.KeyMFALockedUntil] = dateValue(now.Add(l.Duration))
			delete(obj, schema.KeyMFAFailedCount)
			delete(obj, schema.KeyMFAFailedSince)
			return nil
		}
		obj[schema.KeyMFAFailedCount] = float64(count)
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
func (x *Accounts) mfaPassed(user schema.Object) error {
	l := x.mfaLimit()
	if l.MaxAttempts <= 0 {
		return nil
	}
	return x.core.TouchUser(user["objectId"].(string), func(obj schema.Object) error {
		if until, ok := dateField(obj, schema.KeyMFALockedUntil); ok && x.core.Now().Before(until) {
			return mfaLockedError(l)
		}
		delete(obj, schema.KeyMFAFailedCount)
		delete(obj, schema.KeyMFAFailedSince)
		delete(obj, schema.KeyMFALockedUntil)
		return nil
	})
}
