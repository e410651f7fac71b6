package accounts

import (
	"fmt"
	"time"

	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
)

// Account lockout (accountLockout) and the login side of the password
// policy (maxPasswordAge, verified emails). The counts live in internal
// _User fields, so they hold across the server's instances and restarts.

// lockedError is Parse's answer to a login on a locked account.
func (x *Accounts) lockedError() error {
	return schema.Errorf(schema.CodeObjectNotFound,
		"Your account is locked due to multiple failed login attempts. Please try again after %d minute(s)", x.core.AccountOptions().LockoutMinutes)
}

// isLocked reports whether user is locked out now.
func (x *Accounts) isLocked(user schema.Object) bool {
	exp, ok := dateField(user, schema.KeyAccountLockoutExpiresAt)
	return ok && x.core.Now().Before(exp) && intField(user, schema.KeyFailedLoginCount) >= x.core.AccountOptions().LockoutThreshold
}

// loginPolicy runs after a login's password check (found: the user
// exists; match: the password is right) and before its answer: account
// lockout counts the attempt, then a right password may still be refused
// for an unverified email (205) or an expired password (101). A nil error
// with match false leaves the caller its "Invalid username/password."
func (x *Accounts) loginPolicy(a service.Auth, user schema.Object, found, match bool) error {
	if !found {
		return nil
	}
	acc := x.core.AccountOptions()
	if acc.LockoutThreshold > 0 {
		if err := x.countLogin(user, match); err != nil {
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
	if x.passwordExpired(user) {
		return schema.Errorf(schema.CodeObjectNotFound, "Your password has expired. Please reset your password.")
	}
	return nil
}

// countLogin keeps accountLockout's count: a locked account refuses every
// attempt; a success clears the count; a failure after an expired lock
// starts over, and the failure past the threshold locks the account.
func (x *Accounts) countLogin(user schema.Object, match bool) error {
	if x.isLocked(user) {
		return x.lockedError()
	}
	acc := x.core.AccountOptions()
	id := user["objectId"].(string)
	if match {
		if intField(user, schema.KeyFailedLoginCount) == 0 {
			return nil
		}
		return x.core.TouchUser(id, func(obj schema.Object) error {
			obj[schema.KeyFailedLoginCount] = float64(0)
			return nil
		})
	}
	var count int
	err := x.core.TouchUser(id, func(obj schema.Object) error {
		now := x.core.Now()
		if exp, ok := dateField(obj, schema.KeyAccountLockoutExpiresAt); ok && !now.Before(exp) {
			obj[schema.KeyFailedLoginCount] = float64(0)
			delete(obj, schema.KeyAccountLockoutExpiresAt)
		}
		count = intField(obj, schema.KeyFailedLoginCount) + 1
		obj[schema.KeyFailedLoginCount] = float64(count)
		if count >= acc.LockoutThreshold {
			obj[schema.KeyAccountLockoutExpiresAt] = dateValue(now.Add(time.Duration(acc.LockoutMinutes) * time.Minute))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("counting a failed login: %w", err)
	}
	if count > acc.LockoutThreshold {
		return x.lockedError()
	}
	return nil
}

// passwordExpired reports whether maxPasswordAge has passed since the
// user's password was set. A user without the record (the password
// predates the policy) has not expired.
func (x *Accounts) passwordExpired(user schema.Object) bool {
	age := x.core.AccountOptions().MaxPasswordAge
	if age <= 0 {
		return false
	}
	changed, ok := dateField(user, schema.KeyPasswordChangedAt)
	return ok && !x.core.Now().Before(changed.Add(age))
}
