package service

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"regexp"
	"strings"
	"time"

	"github.com/quarrydata/quarry/email"
	"github.com/quarrydata/quarry/schema"
)

// AccountOptions configure email verification, password reset and the
// account policies. The zero value is Parse Server's default: no emails,
// no policies, sessions expire and end with a password reset.
type AccountOptions struct {
	// Mailer sends the verification and reset emails; nil sends none
	// (the two email endpoints then answer code 1).
	Mailer email.Adapter
	// AppID and AppName appear in the links and emails.
	AppID, AppName string
	// PublicURL returns publicServerURL (mount path included), the base
	// of the links in emails.
	PublicURL func() string
	// Warn logs a failed delivery.
	Warn func(msg string)

	VerifyUserEmails bool
	// SkipVerificationEmail is sendUserEmailVerification false.
	SkipVerificationEmail            bool
	PreventLoginWithUnverifiedEmail  bool
	PreventSignupWithUnverifiedEmail bool
	// VerifyTokenValidity bounds a verification link's life (0: no bound).
	VerifyTokenValidity time.Duration
	// VerifyTokenReuse repeats a still valid verification token.
	VerifyTokenReuse bool
	// RevealUnknownEmail is emailVerifySuccessOnInvalidEmail false:
	// verification requests for unknown or verified addresses get Parse's
	// errors (205, -1) instead of the same success as everyone else.
	RevealUnknownEmail bool

	// ResetTokenValidity bounds a reset link's life (0: until used).
	ResetTokenValidity time.Duration
	// ResetTokenReuse repeats a still valid reset token.
	ResetTokenReuse bool
	// RevealUnknownResetEmail is passwordPolicy.
	// resetPasswordSuccessOnInvalidEmail false: a reset request for an
	// address no user has answers 205.
	RevealUnknownResetEmail bool

	// PasswordPattern, when set, must match every new password;
	// PasswordPatternError replaces the message of a refusal.
	PasswordPattern      *regexp.Regexp
	PasswordPatternError string
	// PasswordValidator names a cloud function that judges every new
	// password (params {password, username}): anything but true, or an
	// error, refuses it with PasswordPatternError (passwordPolicy's
	// validatorCallback).
	PasswordValidator string
	// DoNotAllowUsername refuses passwords that contain the username.
	DoNotAllowUsername bool
	// MaxPasswordAge makes login fail once a password is older (0: never).
	MaxPasswordAge time.Duration
	// MaxPasswordHistory refuses a new password equal to one of the last
	// so many.
	MaxPasswordHistory int

	// LockoutThreshold failed logins lock an account for LockoutMinutes
	// (threshold 0: no lockout).
	LockoutThreshold int
	LockoutMinutes   int
	// UnlockOnPasswordReset lifts a lock when the password is reset.
	UnlockOnPasswordReset bool

	// SessionsNeverExpire is expireInactiveSessions false: new sessions
	// get no expiresAt.
	SessionsNeverExpire bool
	// KeepSessionsOnPasswordReset is revokeSessionOnPasswordReset false.
	KeepSessionsOnPasswordReset bool
}

// The _User fields of the flows. They start with "_", so no reply shows them.
const (
	fieldVerifyToken        = schema.KeyEmailVerifyToken
	fieldVerifyTokenExpires = schema.KeyEmailVerifyTokenExpiresAt
	fieldResetToken         = schema.KeyPerishableToken
	fieldResetTokenExpires  = schema.KeyPerishableTokenExpiresAt
	fieldFailedLogins       = schema.KeyFailedLoginCount
	fieldLockoutExpires     = schema.KeyAccountLockoutExpiresAt
	fieldPasswordChangedAt  = schema.KeyPasswordChangedAt
	fieldPasswordHistory    = schema.KeyPasswordHistory
)

// mailDeliveryDeadline bounds one email's delivery in the background.
const mailDeliveryDeadline = 2 * time.Minute

// NewLinkToken is 32 hex characters from crypto/rand: the token of a
// verification or reset link.
func NewLinkToken() string {
	var raw [16]byte
	if _, err := rand.Read(raw[:]); err != nil {
		panic("crypto/rand failed: " + err.Error())
	}
	return hex.EncodeToString(raw[:])
}

func dateValue(t time.Time) map[string]any { return schema.Date(schema.FormatTime(t)) }

// link builds a page URL under publicServerURL.
func (s *Service) link(page, token string) string {
	base := ""
	if s.opts.Accounts.PublicURL != nil {
		base = strings.TrimSuffix(s.opts.Accounts.PublicURL(), "/")
	}
	return base + "/apps/" + s.opts.Accounts.AppID + "/" + page + "?token=" + token
}

func (s *Service) appName() string {
	if s.opts.Accounts.AppName != "" {
		return s.opts.Accounts.AppName
	}
	return s.opts.Accounts.AppID
}

// mailLink sends a link email in the background: a reply never waits for
// the relay, and never tells by its timing whether an address is known.
func (s *Service) mailLink(user schema.Object, page, token string, reset bool) {
	m := s.opts.Accounts.Mailer
	addr, _ := user["email"].(string)
	if m == nil || addr == "" {
		return
	}
	l := email.Link{AppName: s.appName(), Username: str(user["username"]), Email: addr, URL: s.link(page, token)}
	s.mails.Add(1)
	go func() {
		defer s.mails.Done()
		ctx, cancel := context.WithTimeout(context.Background(), mailDeliveryDeadline)
		defer cancel()
		var err error
		if reset {
			err = m.SendPasswordResetEmail(ctx, l)
		} else {
			err = m.SendVerificationEmail(ctx, l)
		}
		if err != nil && s.opts.Accounts.Warn != nil {
			s.opts.Accounts.Warn("sending an email failed: " + err.Error())
		}
	}()
}

// WaitMail waits for the emails under way (server shutdown).
func (s *Service) WaitMail() { s.mails.Wait() }

// updateUser writes to one user as the server, as any update (triggers
// run): body holds public fields, edit changes the stored object (internal
// fields included) under the object's lock.
func (s *Service) updateUser(id string, body map[string]any, edit func(schema.Object) error, keepSessions bool) error {
	if body == nil {
		body = map[string]any{}
	}
	_, err := s.write(Auth{Master: true, internal: true},
		[]WriteOp{{Method: MethodUpdate, Class: classUser, ID: id, Body: body, edit: edit, keepSessions: keepSessions}}, true)
	return err
}

// touchUser changes only a user's internal fields (link tokens, lockout
// counts): no trigger runs and updatedAt stays, as these are the server's
// bookkeeping rather than a change of the user.
func (s *Service) touchUser(id string, edit func(schema.Object) error) error {
	_, err := s.write(Auth{Master: true, internal: true},
		[]WriteOp{{Method: MethodUpdate, Class: classUser, ID: id, Body: map[string]any{}, edit: edit, quiet: true}}, true)
	return err
}
