package service

import (
	"strings"

	"github.com/quarrydata/quarry/schema"
)

// accountRules keeps a _User write's verification and reset state: a new
// or changed email address is unverified (with a new verification token)
// when verifyUserEmails is on, and a new email or password voids a
// pending reset link. Called by userRules with the draft.
func (s *Service) accountRules(a Auth, d *draft, body map[string]any) error {
	acc := &s.opts.Accounts
	if e, ok := body["email"].(string); ok && !strings.EqualFold(e, str(d.original["email"])) {
		delete(d.obj, fieldResetToken)
		delete(d.obj, fieldResetTokenExpires)
		_, setByMaster := body["emailVerified"]
		if acc.VerifyUserEmails && acc.Mailer != nil && !(setByMaster && (a.Master || a.internal)) {
			if err := d.set("emailVerified", false); err != nil {
				return err
			}
			s.setVerifyToken(d.obj, newLinkToken())
		}
	}
	if d.passwordChanged {
		delete(d.obj, fieldResetToken)
		delete(d.obj, fieldResetTokenExpires)
		s.rememberPassword(d)
	}
	return nil
}

func (s *Service) setVerifyToken(obj schema.Object, token string) {
	obj[fieldVerifyToken] = token
	if v := s.opts.Accounts.VerifyTokenValidity; v > 0 {
		obj[fieldVerifyTokenExpires] = dateValue(s.opts.Now().Add(v))
	} else {
		delete(obj, fieldVerifyTokenExpires)
	}
}

// mailAfterWrite sends the verification email of each committed _User
// write that made a new verification token (sign-up, email change, a
// request for a new link).
func (s *Service) mailAfterWrite(drafts []*draft) {
	if s.opts.Accounts.SkipVerificationEmail {
		return
	}
	for _, d := range drafts {
		if d.class != classUser || d.obj == nil {
			continue
		}
		if tok, _ := d.obj[fieldVerifyToken].(string); tok != "" && tok != str(d.original[fieldVerifyToken]) {
			s.mailLink(d.obj, "verify_email", tok, false)
		}
	}
}

// signUpGetsSession reports whether a new user receives a session token,
// with verifyUserEmails on: not unless verified when login needs a
// verified email (preventLoginWithUnverifiedEmail, as login then would
// refuse them), not with an unverified email under
// preventSignupWithUnverifiedEmail.
func (s *Service) signUpGetsSession(userID string) bool {
	acc := &s.opts.Accounts
	if !acc.VerifyUserEmails || !acc.PreventSignupWithUnverifiedEmail && !acc.PreventLoginWithUnverifiedEmail {
		return true
	}
	user, ok := s.userByID(userID)
	if !ok {
		return true
	}
	if acc.PreventLoginWithUnverifiedEmail {
		return user["emailVerified"] == true
	}
	return user["emailVerified"] != false
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
func (s *Service) RequestVerificationEmail(emailAddr any) error {
	acc := &s.opts.Accounts
	if acc.Mailer == nil {
		return schema.Errorf(codeInternal, "An emailAdapter is required to send verification emails (docs/email.md).")
	}
	e, err := emailParam(emailAddr)
	if err != nil {
		return err
	}
	user, ok := s.findOne(classUser, schema.KeyEmailLC, strings.ToLower(e))
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
	if tok, valid := s.validToken(user, fieldVerifyToken, fieldVerifyTokenExpires); valid && acc.VerifyTokenReuse {
		s.mailLink(user, "verify_email", tok, false)
		return nil
	}
	// The new token's email goes out from mailAfterWrite, or here when
	// sendUserEmailVerification keeps that one quiet: this is a request.
	tok := newLinkToken()
	err = s.updateUser(user["objectId"].(string), nil, func(obj schema.Object) error {
		if obj["emailVerified"] == nil {
			obj["emailVerified"] = false
		}
		s.setVerifyToken(obj, tok)
		return nil
	}, false)
	if err == nil && acc.SkipVerificationEmail {
		s.mailLink(user, "verify_email", tok, false)
	}
	return err
}

// VerifyEmail follows a verification link: the token's user becomes
// verified and the token is spent. It returns the username.
func (s *Service) VerifyEmail(token string) (string, error) {
	if token == "" {
		return "", ErrInvalidLink
	}
	user, ok := s.findOne(classUser, fieldVerifyToken, token)
	if !ok {
		return "", ErrInvalidLink
	}
	if _, valid := s.validToken(user, fieldVerifyToken, fieldVerifyTokenExpires); !valid {
		return "", ErrInvalidLink
	}
	err := s.updateUser(user["objectId"].(string), map[string]any{"emailVerified": true}, func(obj schema.Object) error {
		if obj[fieldVerifyToken] != token { // spent by a concurrent click
			return ErrInvalidLink
		}
		delete(obj, fieldVerifyToken)
		delete(obj, fieldVerifyTokenExpires)
		return nil
	}, false)
	return str(user["username"]), err
}

// RequestPasswordReset is POST /requestPasswordReset. The answer is the
// same whether or not an account has the address, so it cannot be used to
// find out which addresses have accounts.
func (s *Service) RequestPasswordReset(emailAddr any) error {
	acc := &s.opts.Accounts
	if acc.Mailer == nil {
		return schema.Errorf(codeInternal, "An emailAdapter is required for password reset emails (docs/email.md).")
	}
	e, err := emailParam(emailAddr)
	if err != nil {
		return err
	}
	user, ok := s.findOne(classUser, schema.KeyEmailLC, strings.ToLower(e))
	if !ok {
		if acc.RevealUnknownResetEmail {
			return schema.Errorf(codeEmailNotFound, "No user found with email %s.", e)
		}
		return nil
	}
	if tok, valid := s.validToken(user, fieldResetToken, fieldResetTokenExpires); valid && acc.ResetTokenReuse {
		s.mailLink(user, "request_password_reset", tok, true)
		return nil
	}
	tok := newLinkToken()
	err = s.touchUser(user["objectId"].(string), func(obj schema.Object) error {
		obj[fieldResetToken] = tok
		if v := acc.ResetTokenValidity; v > 0 {
			obj[fieldResetTokenExpires] = dateValue(s.opts.Now().Add(v))
		} else {
			delete(obj, fieldResetTokenExpires)
		}
		return nil
	})
	if err != nil {
		return err
	}
	s.mailLink(user, "request_password_reset", tok, true)
	return nil
}

// ResetTokenUser checks a reset link and returns its user's username.
func (s *Service) ResetTokenUser(token string) (string, error) {
	if token == "" {
		return "", ErrInvalidLink
	}
	user, ok := s.findOne(classUser, fieldResetToken, token)
	if !ok {
		return "", ErrInvalidLink
	}
	if _, valid := s.validToken(user, fieldResetToken, fieldResetTokenExpires); !valid {
		return "", ErrInvalidLink
	}
	return str(user["username"]), nil
}

// ResetPassword sets the password of a reset link's user, spending the
// link. The password policy applies (142); the user's sessions end unless
// revokeSessionOnPasswordReset is off; accountLockout.unlockOnPasswordReset
// lifts a lock. It returns the username.
func (s *Service) ResetPassword(token, password string) (string, error) {
	username, err := s.ResetTokenUser(token)
	if err != nil {
		return "", err
	}
	if password == "" {
		return username, schema.Errorf(codePasswordMissing, "password is required")
	}
	user, _ := s.findOne(classUser, fieldResetToken, token)
	acc := &s.opts.Accounts
	err = s.updateUser(user["objectId"].(string), map[string]any{"password": password}, func(obj schema.Object) error {
		if obj[fieldResetToken] != token {
			return ErrInvalidLink
		}
		if acc.UnlockOnPasswordReset {
			delete(obj, fieldFailedLogins)
			delete(obj, fieldLockoutExpires)
		}
		return nil
	}, acc.KeepSessionsOnPasswordReset)
	return username, err
}
