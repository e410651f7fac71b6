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
			s.SetVerifyToken(d.obj, NewLinkToken())
		}
	}
	if d.passwordChanged {
		delete(d.obj, fieldResetToken)
		delete(d.obj, fieldResetTokenExpires)
		s.rememberPassword(d)
	}
	return nil
}

// SetVerifyToken gives a user being written a new verification token,
// with its expiry when verification links have a bounded life.
func (s *Service) SetVerifyToken(obj schema.Object, token string) {
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
