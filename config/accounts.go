package config

import (
	"errors"
	"fmt"
	"regexp"
	"time"
)

// EmailAdapterSMTP is the one emailAdapter.module Quarry runs.
const EmailAdapterSMTP = "smtp"

// Limits of the account policies (Parse Server's).
const (
	MaxPasswordHistory    = 20
	MaxLockoutThreshold   = 999
	MaxLockoutDurationMin = 99999
)

// AccountOptions are the email flows and account policies: email
// verification, password reset, password policy, account lockout and
// session expiry (docs/email.md).
type AccountOptions struct {
	// AppName is appName: the application's name in emails and pages.
	AppName string
	// VerifyUserEmails is verifyUserEmails: new and changed email
	// addresses get emailVerified false and a verification email.
	VerifyUserEmails bool
	// SendUserEmailVerification is sendUserEmailVerification: with
	// verifyUserEmails, whether sign-up and email changes send the email
	// (false: the address is still unverified, and the app sends the link
	// itself through verificationEmailRequest). Default true.
	SendUserEmailVerification bool
	// PreventLoginWithUnverifiedEmail is preventLoginWithUnverifiedEmail:
	// login fails with 205 while emailVerified is false.
	PreventLoginWithUnverifiedEmail bool
	// PreventSignupWithUnverifiedEmail is preventSignupWithUnverifiedEmail:
	// a sign-up with an unverified email gets no session token.
	PreventSignupWithUnverifiedEmail bool
	// EmailVerifyTokenValidityDuration is emailVerifyTokenValidityDuration
	// (seconds); 0 means verification links never expire.
	EmailVerifyTokenValidityDuration time.Duration
	// EmailVerifyTokenReuseIfValid is emailVerifyTokenReuseIfValid: a new
	// verification email repeats a still valid token.
	EmailVerifyTokenReuseIfValid bool
	// EmailVerifySuccessOnInvalidEmail is emailVerifySuccessOnInvalidEmail:
	// POST /verificationEmailRequest answers success for an unknown
	// address, so that it cannot tell which addresses have accounts.
	EmailVerifySuccessOnInvalidEmail bool
	// EmailAdapter is emailAdapter.
	EmailAdapter EmailAdapterOptions
	// CustomPages is customPages: URLs of the operator's own pages.
	CustomPages CustomPages
	// PasswordPolicy is passwordPolicy.
	PasswordPolicy PasswordPolicy
	// AccountLockout is accountLockout.
	AccountLockout AccountLockout
	// ExpireInactiveSessions is expireInactiveSessions: when false, new
	// sessions never expire (sessionLength is ignored).
	ExpireInactiveSessions bool
	// RevokeSessionOnPasswordReset is revokeSessionOnPasswordReset: a
	// password reset through the emailed link ends the user's sessions.
	RevokeSessionOnPasswordReset bool
}

// EmailAdapterOptions is emailAdapter: {"module": "smtp", "options": {...}}.
type EmailAdapterOptions struct {
	// Module is emailAdapter.module: EmailAdapterSMTP, or "" for none.
	Module string
	// Options is emailAdapter.options.
	Options SMTPOptions
}

// SMTPOptions is emailAdapter.options of the smtp module.
type SMTPOptions struct {
	Host        string
	Port        int
	Username    string
	Password    string
	FromAddress string
	// Secure speaks TLS from the start (port 465); otherwise STARTTLS is
	// used whenever the relay offers it.
	Secure bool
	// VerificationEmailTemplate and PasswordResetEmailTemplate are paths
	// of text/template files that replace the built-in texts.
	VerificationEmailTemplate  string
	PasswordResetEmailTemplate string
	// QueueSize bounds the emails waiting for the relay in the retry
	// queue (0: email.DefaultQueueSize).
	QueueSize int
	// MaxAttempts bounds the tries of one email (0: email.DefaultMaxAttempts).
	MaxAttempts int
	// FirstRetry is the wait before an email's second try (0:
	// email.DefaultFirstRetry); for tests and embedders, no option sets it.
	FirstRetry time.Duration
}

// CustomPages is customPages: when a URL is set, the flow redirects there
// instead of showing Quarry's own page.
type CustomPages struct {
	InvalidLink             string
	InvalidVerificationLink string
	LinkSendSuccess         string
	LinkSendFail            string
	ChoosePassword          string
	PasswordResetSuccess    string
	VerifyEmailSuccess      string
}

// PasswordPolicy is passwordPolicy.
type PasswordPolicy struct {
	// ValidatorPattern is a regular expression (Go syntax) a new password
	// must match.
	ValidatorPattern string
	// ValidatorCallback names a cloud function that judges a new password
	// (params {password, username}); it must return true to accept it.
	ValidatorCallback string
	// ValidationError replaces the message of a refused password.
	ValidationError string
	// DoNotAllowUsername refuses passwords that contain the username.
	DoNotAllowUsername bool
	// MaxPasswordAge is the number of days after which login fails until
	// the password is reset; 0 means passwords never expire.
	MaxPasswordAge int
	// MaxPasswordHistory refuses a new password equal to any of the last
	// so many (0 to 20).
	MaxPasswordHistory int
	// ResetTokenValidityDuration (seconds) bounds a reset link's life; 0
	// means it lasts until used.
	ResetTokenValidityDuration time.Duration
	// ResetTokenReuseIfValid repeats a still valid reset token.
	ResetTokenReuseIfValid bool
	// ResetPasswordSuccessOnInvalidEmail answers a reset request for an
	// address no user has as if it had been sent (Parse's default, true);
	// false answers 205.
	ResetPasswordSuccessOnInvalidEmail bool
}

// AccountLockout is accountLockout; a zero Threshold turns it off.
type AccountLockout struct {
	// Duration is accountLockout.duration, in minutes.
	Duration int
	// Threshold is accountLockout.threshold: failed logins before the lock.
	Threshold int
	// UnlockOnPasswordReset lifts the lock when the password is reset.
	UnlockOnPasswordReset bool
}

// DefaultAccounts are Parse Server's defaults.
func DefaultAccounts() AccountOptions {
	return AccountOptions{EmailVerifySuccessOnInvalidEmail: true, ExpireInactiveSessions: true, RevokeSessionOnPasswordReset: true,
		SendUserEmailVerification: true,
		PasswordPolicy:            PasswordPolicy{ResetPasswordSuccessOnInvalidEmail: true}}
}

const groupAccounts = "Email and account policies"

var accountOptions = []*option{
	{name: "appName", group: groupAccounts, env: []string{"PARSE_SERVER_APP_NAME"}, def: "appId",
		usage: "name of the application in emails and pages",
		field: func(o *Options) any { return &o.Accounts.AppName }},
	{name: "verifyUserEmails", group: groupAccounts, env: []string{"PARSE_SERVER_VERIFY_USER_EMAILS"},
		usage: "send a verification email on sign-up and email change (needs emailAdapter)",
		field: func(o *Options) any { return &o.Accounts.VerifyUserEmails }},
	{name: "sendUserEmailVerification", group: groupAccounts, env: []string{"PARSE_SERVER_SEND_USER_EMAIL_VERIFICATION"}, def: "true",
		usage: "with verifyUserEmails, send the email on sign-up and email change (false: only on request)",
		field: func(o *Options) any { return &o.Accounts.SendUserEmailVerification }},
	{name: "preventLoginWithUnverifiedEmail", group: groupAccounts, env: []string{"PARSE_SERVER_PREVENT_LOGIN_WITH_UNVERIFIED_EMAIL"},
		usage: "login fails with 205 until the email is verified",
		field: func(o *Options) any { return &o.Accounts.PreventLoginWithUnverifiedEmail }},
	{name: "preventSignupWithUnverifiedEmail", group: groupAccounts, env: []string{"PARSE_SERVER_PREVENT_SIGNUP_WITH_UNVERIFIED_EMAIL"},
		usage: "a sign-up with an unverified email gets no session token",
		field: func(o *Options) any { return &o.Accounts.PreventSignupWithUnverifiedEmail }},
	{name: "emailVerifyTokenValidityDuration", group: groupAccounts, env: []string{"PARSE_SERVER_EMAIL_VERIFY_TOKEN_VALIDITY_DURATION"},
		def:   "0 (links never expire)",
		usage: "seconds a verification link stays valid",
		field: func(o *Options) any { return &o.Accounts.EmailVerifyTokenValidityDuration }},
	{name: "emailVerifyTokenReuseIfValid", group: groupAccounts, env: []string{"PARSE_SERVER_EMAIL_VERIFY_TOKEN_REUSE_IF_VALID"},
		usage: "a new verification email repeats a still valid token",
		field: func(o *Options) any { return &o.Accounts.EmailVerifyTokenReuseIfValid }},
	{name: "emailVerifySuccessOnInvalidEmail", group: groupAccounts, env: []string{"PARSE_SERVER_EMAIL_VERIFY_SUCCESS_ON_INVALID_EMAIL"},
		usage: "POST /verificationEmailRequest answers success for unknown addresses (no user enumeration)",
		field: func(o *Options) any { return &o.Accounts.EmailVerifySuccessOnInvalidEmail }},
	{name: "emailAdapter", group: groupAccounts, env: []string{"PARSE_SERVER_EMAIL_ADAPTER"}, def: "none",
		usage: `object {"module": "smtp", "options": {...}}: how emails are sent (see docs/email.md)`},
	{name: "emailAdapter.module", group: groupAccounts,
		usage: `"smtp" (the only module)`,
		field: func(o *Options) any { return &o.Accounts.EmailAdapter.Module }},
	{name: "emailAdapter.options", group: groupAccounts, def: "none",
		usage: "object: the SMTP relay and the templates"},
	{name: "emailAdapter.options.host", group: groupAccounts,
		usage: "SMTP relay host name",
		field: func(o *Options) any { return &o.Accounts.EmailAdapter.Options.Host }},
	{name: "emailAdapter.options.port", group: groupAccounts, def: "587, or 465 when secure",
		usage: "SMTP relay port",
		field: func(o *Options) any { return &o.Accounts.EmailAdapter.Options.Port }},
	{name: "emailAdapter.options.username", group: groupAccounts,
		usage: "SMTP user (AUTH PLAIN, sent only over TLS or to localhost)",
		field: func(o *Options) any { return &o.Accounts.EmailAdapter.Options.Username }},
	{name: "emailAdapter.options.password", group: groupAccounts,
		usage: "SMTP password",
		field: func(o *Options) any { return &o.Accounts.EmailAdapter.Options.Password }},
	{name: "emailAdapter.options.fromAddress", group: groupAccounts,
		usage: `sender, e.g. "My App <no-reply@example.com>"`,
		field: func(o *Options) any { return &o.Accounts.EmailAdapter.Options.FromAddress }},
	{name: "emailAdapter.options.secure", group: groupAccounts,
		usage: "TLS from the first byte (SMTPS); otherwise STARTTLS whenever the relay offers it",
		field: func(o *Options) any { return &o.Accounts.EmailAdapter.Options.Secure }},
	{name: "emailAdapter.options.verificationEmailTemplate", group: groupAccounts, def: "built in",
		usage: "text/template file of the verification email (first line: Subject: ...)",
		field: func(o *Options) any { return &o.Accounts.EmailAdapter.Options.VerificationEmailTemplate }},
	{name: "emailAdapter.options.passwordResetEmailTemplate", group: groupAccounts, def: "built in",
		usage: "text/template file of the password reset email",
		field: func(o *Options) any { return &o.Accounts.EmailAdapter.Options.PasswordResetEmailTemplate }},
	{name: "emailAdapter.options.queueSize", group: groupAccounts, def: "1000",
		usage: "emails that may wait for the relay in the retry queue; more are dropped",
		field: func(o *Options) any { return &o.Accounts.EmailAdapter.Options.QueueSize }},
	{name: "emailAdapter.options.maxAttempts", group: groupAccounts, def: "12 (about an hour)",
		usage: "tries of one email while the relay is down or answers 4xx",
		field: func(o *Options) any { return &o.Accounts.EmailAdapter.Options.MaxAttempts }},
	{name: "customPages", group: groupAccounts, env: []string{"PARSE_SERVER_CUSTOM_PAGES"}, def: "Quarry's pages",
		usage: "object: URLs of your own pages for the email links (the keys below)"},
	{name: "customPages.invalidLink", group: groupAccounts, usage: "an invalid or expired password reset link",
		field: func(o *Options) any { return &o.Accounts.CustomPages.InvalidLink }},
	{name: "customPages.invalidVerificationLink", group: groupAccounts, usage: "an invalid or expired verification link",
		field: func(o *Options) any { return &o.Accounts.CustomPages.InvalidVerificationLink }},
	{name: "customPages.linkSendSuccess", group: groupAccounts, usage: "a new verification link was sent",
		field: func(o *Options) any { return &o.Accounts.CustomPages.LinkSendSuccess }},
	{name: "customPages.linkSendFail", group: groupAccounts, usage: "a new verification link could not be sent",
		field: func(o *Options) any { return &o.Accounts.CustomPages.LinkSendFail }},
	{name: "customPages.choosePassword", group: groupAccounts, usage: "the form choosing a new password",
		field: func(o *Options) any { return &o.Accounts.CustomPages.ChoosePassword }},
	{name: "customPages.passwordResetSuccess", group: groupAccounts, usage: "the password was changed",
		field: func(o *Options) any { return &o.Accounts.CustomPages.PasswordResetSuccess }},
	{name: "customPages.verifyEmailSuccess", group: groupAccounts, usage: "the email address was verified",
		field: func(o *Options) any { return &o.Accounts.CustomPages.VerifyEmailSuccess }},
	{name: "passwordPolicy", group: groupAccounts, env: []string{"PARSE_SERVER_PASSWORD_POLICY"}, def: "none",
		usage: "object: rules for new passwords and reset links (the keys below)"},
	{name: "passwordPolicy.validatorPattern", group: groupAccounts,
		usage: "regular expression (Go syntax) a new password must match",
		field: func(o *Options) any { return &o.Accounts.PasswordPolicy.ValidatorPattern }},
	{name: "passwordPolicy.validatorCallback", group: groupAccounts,
		usage: "name of a cloud function judging a new password ({password, username}; true accepts)",
		field: func(o *Options) any { return &o.Accounts.PasswordPolicy.ValidatorCallback }},
	{name: "passwordPolicy.validationError", group: groupAccounts,
		usage: "message of error 142 for a password the policy refuses",
		field: func(o *Options) any { return &o.Accounts.PasswordPolicy.ValidationError }},
	{name: "passwordPolicy.doNotAllowUsername", group: groupAccounts,
		usage: "refuse passwords that contain the username",
		field: func(o *Options) any { return &o.Accounts.PasswordPolicy.DoNotAllowUsername }},
	{name: "passwordPolicy.maxPasswordAge", group: groupAccounts, def: "0 (never expire)",
		usage: "days after which login fails until the password is reset",
		field: func(o *Options) any { return &o.Accounts.PasswordPolicy.MaxPasswordAge }},
	{name: "passwordPolicy.maxPasswordHistory", group: groupAccounts,
		usage: "refuse a new password equal to one of the last so many (0 to 20)",
		field: func(o *Options) any { return &o.Accounts.PasswordPolicy.MaxPasswordHistory }},
	{name: "passwordPolicy.resetTokenValidityDuration", group: groupAccounts, def: "0 (until used)",
		usage: "seconds a password reset link stays valid",
		field: func(o *Options) any { return &o.Accounts.PasswordPolicy.ResetTokenValidityDuration }},
	{name: "passwordPolicy.resetTokenReuseIfValid", group: groupAccounts,
		usage: "a new reset email repeats a still valid token",
		field: func(o *Options) any { return &o.Accounts.PasswordPolicy.ResetTokenReuseIfValid }},
	{name: "passwordPolicy.resetPasswordSuccessOnInvalidEmail", group: groupAccounts, def: "true",
		usage: "answer a reset request for an unknown address as if sent (false: 205)",
		field: func(o *Options) any { return &o.Accounts.PasswordPolicy.ResetPasswordSuccessOnInvalidEmail }},
	{name: "accountLockout", group: groupAccounts, env: []string{"PARSE_SERVER_ACCOUNT_LOCKOUT"}, def: "off",
		usage: `object {"duration": minutes, "threshold": n, "unlockOnPasswordReset": bool}`},
	{name: "accountLockout.duration", group: groupAccounts,
		usage: "minutes an account stays locked (1 to 99999)",
		field: func(o *Options) any { return &o.Accounts.AccountLockout.Duration }},
	{name: "accountLockout.threshold", group: groupAccounts,
		usage: "failed logins that lock the account (1 to 999)",
		field: func(o *Options) any { return &o.Accounts.AccountLockout.Threshold }},
	{name: "accountLockout.unlockOnPasswordReset", group: groupAccounts,
		usage: "a password reset lifts the lock",
		field: func(o *Options) any { return &o.Accounts.AccountLockout.UnlockOnPasswordReset }},
	{name: "expireInactiveSessions", group: groupSession, env: []string{"PARSE_SERVER_EXPIRE_INACTIVE_SESSIONS"},
		usage: "sessions expire after sessionLength; false: new sessions never expire",
		field: func(o *Options) any { return &o.Accounts.ExpireInactiveSessions }},
	{name: "revokeSessionOnPasswordReset", group: groupSession, env: []string{"PARSE_SERVER_REVOKE_SESSION_ON_PASSWORD_RESET"},
		usage: "a password reset through the emailed link ends the user's sessions",
		field: func(o *Options) any { return &o.Accounts.RevokeSessionOnPasswordReset }},
}

// checkAccounts validates the email and account options.
func checkAccounts(o *Options, check func(string, error), warn func(string, ...any)) {
	a := &o.Accounts
	ad := &a.EmailAdapter
	switch ad.Module {
	case "":
		if a.VerifyUserEmails {
			check("verifyUserEmails", errors.New(`needs an email adapter: set emailAdapter {"module": "smtp", ...} (docs/email.md)`))
		}
	case EmailAdapterSMTP:
		if ad.Options.Host == "" {
			check("emailAdapter.options.host", errors.New(`is required with emailAdapter.module "smtp"`))
		}
		if ad.Options.FromAddress == "" {
			check("emailAdapter.options.fromAddress", errors.New(`is required with emailAdapter.module "smtp"`))
		}
		if ad.Options.QueueSize < 0 {
			check("emailAdapter.options.queueSize", fmt.Errorf("must be 0 (the default) or more, got %d", ad.Options.QueueSize))
		}
		if ad.Options.MaxAttempts < 0 {
			check("emailAdapter.options.maxAttempts", fmt.Errorf("must be 0 (the default) or more, got %d", ad.Options.MaxAttempts))
		}
		if ad.Options.Port < 0 || ad.Options.Port > 65535 {
			check("emailAdapter.options.port", fmt.Errorf("must be between 1 and 65535 (0: the default), got %d", ad.Options.Port))
		}
		if o.PublicServerURL == "" {
			warn("emailAdapter: publicServerURL is not set: links in emails point at serverURL, which users may not reach")
		}
	default:
		check("emailAdapter.module", fmt.Errorf("want %q (a Parse Server adapter module cannot run in Quarry), got %q", EmailAdapterSMTP, ad.Module))
	}
	for _, p := range []struct{ name, url string }{
		{"customPages.invalidLink", a.CustomPages.InvalidLink},
		{"customPages.invalidVerificationLink", a.CustomPages.InvalidVerificationLink},
		{"customPages.linkSendSuccess", a.CustomPages.LinkSendSuccess},
		{"customPages.linkSendFail", a.CustomPages.LinkSendFail},
		{"customPages.choosePassword", a.CustomPages.ChoosePassword},
		{"customPages.passwordResetSuccess", a.CustomPages.PasswordResetSuccess},
		{"customPages.verifyEmailSuccess", a.CustomPages.VerifyEmailSuccess},
	} {
		check(p.name, checkHTTPURL(p.url))
	}
	pp := &a.PasswordPolicy
	if pp.ValidatorPattern != "" {
		if _, err := regexp.Compile(pp.ValidatorPattern); err != nil {
			check("passwordPolicy.validatorPattern", fmt.Errorf("not a regular expression (Go syntax): %v", err))
		}
	}
	if pp.MaxPasswordAge < 0 {
		check("passwordPolicy.maxPasswordAge", fmt.Errorf("must be 0 days or more, got %d", pp.MaxPasswordAge))
	}
	if pp.MaxPasswordHistory < 0 || pp.MaxPasswordHistory > MaxPasswordHistory {
		check("passwordPolicy.maxPasswordHistory", fmt.Errorf("must be between 0 and %d, got %d", MaxPasswordHistory, pp.MaxPasswordHistory))
	}
	al := &a.AccountLockout
	if al.Threshold != 0 || al.Duration != 0 || al.UnlockOnPasswordReset {
		if al.Threshold < 1 || al.Threshold > MaxLockoutThreshold {
			check("accountLockout.threshold", fmt.Errorf("must be between 1 and %d, got %d", MaxLockoutThreshold, al.Threshold))
		}
		if al.Duration < 1 || al.Duration > MaxLockoutDurationMin {
			check("accountLockout.duration", fmt.Errorf("must be between 1 and %d minutes, got %d", MaxLockoutDurationMin, al.Duration))
		}
	}
}
