package accounts

import (
	"strings"

	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
)

// The email flows: a new verification link, following it, a password
// reset link, and setting the new password through it. The tokens live in
// internal _User fields (schema.KeyEmailVerifyToken, KeyPerishableToken);
// the core's write path makes a new verification token when an email is
// set and voids a reset link when the email or password changes.

// ErrInvalidLink is the answer to a verification or reset link whose token
// is unknown, used or expired.
var ErrInvalidLink = &schema.Error{Code: codeOtherCause, Message: "The link is invalid or has expired."}

// validToken reports whether obj holds a token under key that has not
// expired (no expiry field: valid until used).
func (x *Accounts) validToken(obj schema.Object, key, expiresKey string) (string, bool) {
	tok, _ := obj[key].(string)
	if tok == "" {
		return "", false
	}
	if exp, ok := dateField(obj, expiresKey); ok && !x.core.Now().Before(exp) {
		return tok, false
	}
	return tok, true
}

// emailParam checks the email of the two request endpoints.
func emailParam(v any) (string, error) {
	if v == nil || v == "" {
		return "", schema.Errorf(codeEmailMissing, "you must provide an email")
	}
	e, ok := v.(string)
	if !ok {
		return "", schema.Errorf(codeInvalidEmail, "you must provide a valid email string")
	}
	return e, nil
}

// RequestVerificationEmail is POST /verificationEmailRequest: a user whose
// email is not verified gets a new link. By default an unknown or already
// verified address gets the same empty success, with no email sent.
func (x *Accounts) RequestVerificationEmail(emailAddr any) error {
	acc := x.core.AccountOptions()
	if acc.Mailer == nil {
		return schema.Errorf(codeInternal, "An emailAdapter is required to send verification emails (docs/email.md).")
	}
	e, err := emailParam(emailAddr)
	if err != nil {
		return err
	}
	user, ok := x.core.FindUser(schema.KeyEmailLC, strings.ToLower(e))
	switch {
	case !ok && acc.RevealUnknownEmail:
		return schema.Errorf(codeEmailNotFound, "No user found with email %s", e)
	case !ok:
		return nil
	case user["emailVerified"] == true && acc.RevealUnknownEmail:
		return schema.Errorf(codeOtherCause, "Email %s is already verified.", e)
	case user["emailVerified"] == true:
		return nil
	}
	if tok, valid := x.validToken(user, schema.KeyEmailVerifyToken, schema.KeyEmailVerifyTokenExpiresAt); valid && acc.VerifyTokenReuse {
		x.core.MailLink(user, "verify_email", tok, false)
		return nil
	}
	// The new token's email goes out from the core's write path, or here
	// when sendUserEmailVerification keeps that one quiet: this is a
	// request.
	tok := service.NewLinkToken()
	err = x.core.EditUser(user["objectId"].(string), nil, func(obj schema.Object) error {
		if obj["emailVerified"] == nil {
			obj["emailVerified"] = false
		}
		x.core.SetVerifyToken(obj, tok)
		return nil
	}, false)
	if err == nil && acc.SkipVerificationEmail {
		x.core.MailLink(user, "verify_email", tok, false)
	}
	return err
}

// VerifyEmail follows a verification link: the token's user becomes
// verified and the token is spent. It returns the username.
func (x *Accounts) VerifyEmail(token string) (string, error) {
	if token == "" {
		return "", ErrInvalidLink
	}
	user, ok := x.core.FindUser(schema.KeyEmailVerifyToken, token)
	if !ok {
		return "", ErrInvalidLink
	}
	if _, valid := x.validToken(user, schema.KeyEmailVerifyToken, schema.KeyEmailVerifyTokenExpiresAt); !valid {
		return "", ErrInvalidLink
	}
	err := x.core.EditUser(user["objectId"].(string), map[string]any{"emailVerified": true}, func(obj schema.Object) error {
		if obj[schema.KeyEmailVerifyToken] != token { // spent by a concurrent click
			return ErrInvalidLink
		}
		delete(obj, schema.KeyEmailVerifyToken)
		delete(obj, schema.KeyEmailVerifyTokenExpiresAt)
		return nil
	}, false)
	return str(user["username"]), err
}

// RequestPasswordReset is POST /requestPasswordReset. The answer is the
// same whether or not an account has the address, so it cannot be used to
// find out which addresses have accounts.
func (x *Accounts) RequestPasswordReset(emailAddr any) error {
	acc := x.core.AccountOptions()
	if acc.Mailer == nil {
		return schema.Errorf(codeInternal, "An emailAdapter is required for password reset emails (docs/email.md).")
	}
	e, err := emailParam(emailAddr)
	if err != nil {
		return err
	}
	user, ok := x.core.FindUser(schema.KeyEmailLC, strings.ToLower(e))
	if !ok {
		if acc.RevealUnknownResetEmail {
			return schema.Errorf(codeEmailNotFound, "No user found with email %s.", e)
		}
		return nil
	}
	if tok, valid := x.validToken(user, schema.KeyPerishableToken, schema.KeyPerishableTokenExpiresAt); valid && acc.ResetTokenReuse {
		x.core.MailLink(user, "request_password_reset", tok, true)
		return nil
	}
	tok := service.NewLinkToken()
	err = x.core.TouchUser(user["objectId"].(string), func(obj schema.Object) error {
		obj[schema.KeyPerishableToken] = tok
		if v := acc.ResetTokenValidity; v > 0 {
			obj[schema.KeyPerishableTokenExpiresAt] = dateValue(x.core.Now().Add(v))
		} else {
			delete(obj, schema.KeyPerishableTokenExpiresAt)
		}
		return nil
	})
	if err != nil {
		return err
	}
	x.core.MailLink(user, "request_password_reset", tok, true)
	return nil
}

// ResetTokenUser checks a reset link and returns its user's username.
func (x *Accounts) ResetTokenUser(token string) (string, error) {
	if token == "" {
		return "", ErrInvalidLink
	}
	user, ok := x.core.FindUser(schema.KeyPerishableToken, token)
	if !ok {
		return "", ErrInvalidLink
	}
	if _, valid := x.validToken(user, schema.KeyPerishableToken, schema.KeyPerishableTokenExpiresAt); !valid {
		return "", ErrInvalidLink
	}
	return str(user["username"]), nil
}

// ResetPassword sets the password of a reset link's user, spending the
// link. The password policy applies (142); the user's sessions end unless
// revokeSessionOnPasswordReset is off; accountLockout.unlockOnPasswordReset
// lifts a lock. It returns the username.
func (x *Accounts) ResetPassword(token, password string) (string, error) {
	username, err := x.ResetTokenUser(token)
	if err != nil {
		return "", err
	}
	if password == "" {
		return username, schema.Errorf(codePasswordMissing, "password is required")
	}
	user, _ := x.core.FindUser(schema.KeyPerishableToken, token)
	acc := x.core.AccountOptions()
	err = x.core.EditUser(user["objectId"].(string), map[string]any{"password": password}, func(obj schema.Object) error {
		if obj[schema.KeyPerishableToken] != token {
			return ErrInvalidLink
		}
		if acc.UnlockOnPasswordReset {
			delete(obj, schema.KeyFailedLoginCount)
			delete(obj, schema.KeyAccountLockoutExpiresAt)
		}
		return nil
	}, acc.KeepSessionsOnPasswordReset)
	return username, err
}
