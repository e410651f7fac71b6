package server

import (
	"log/slog"
	"net"
	"regexp"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/email"
	"github.com/quarrydata/quarry/service"
	"github.com/quarrydata/quarry/transport"
)

// openMailer builds the emailAdapter, nil when none is configured.
func openMailer(opts *config.Options) (email.Adapter, error) {
	ad := opts.Accounts.EmailAdapter
	if ad.Module != config.EmailAdapterSMTP {
		return nil, nil
	}
	o := ad.Options
	tpl, err := email.LoadTemplates(o.VerificationEmailTemplate, o.PasswordResetEmailTemplate)
	if err != nil {
		return nil, err
	}
	return email.NewSMTP(email.SMTPOptions{Host: o.Host, Port: o.Port, Username: o.Username, Password: o.Password,
		FromAddress: o.FromAddress, Secure: o.Secure}, tpl)
}

// linkBase is the base of the links in emails: publicServerURL, else
// serverURL, else the listener's address once bound.
type linkBase struct {
	opts *config.Options
	addr atomic.Pointer[net.Addr]
}

func (b *linkBase) url() string {
	if b.opts.PublicServerURL != "" {
		return b.opts.PublicServerURL
	}
	if b.opts.ServerURL != "" {
		return b.opts.ServerURL
	}
	hostPort := net.JoinHostPort("localhost", strconv.Itoa(b.opts.Port))
	if a := b.addr.Load(); a != nil {
		hostPort = bannerHost(b.opts.Host, *a)
	}
	return "http://" + hostPort + b.opts.MountPath
}

// accountOptions turns the configuration into the service's.
func accountOptions(opts *config.Options, mailer email.Adapter, base *linkBase, log *slog.Logger) service.AccountOptions {
	a := opts.Accounts
	pp := a.PasswordPolicy
	out := service.AccountOptions{
		Mailer: mailer, AppID: opts.AppID, AppName: a.AppName, PublicURL: base.url,
		Warn:                             func(msg string) { log.Warn(msg) },
		VerifyUserEmails:                 a.VerifyUserEmails,
		PreventLoginWithUnverifiedEmail:  a.PreventLoginWithUnverifiedEmail,
		PreventSignupWithUnverifiedEmail: a.PreventSignupWithUnverifiedEmail,
		VerifyTokenValidity:              a.EmailVerifyTokenValidityDuration,
		VerifyTokenReuse:                 a.EmailVerifyTokenReuseIfValid,
		RevealUnknownEmail:               !a.EmailVerifySuccessOnInvalidEmail,
		ResetTokenValidity:               pp.ResetTokenValidityDuration,
		ResetTokenReuse:                  pp.ResetTokenReuseIfValid,
		PasswordPatternError:             pp.ValidationError,
		PasswordValidator:                pp.ValidatorCallback,
		DoNotAllowUsername:               pp.DoNotAllowUsername,
		MaxPasswordAge:                   daysToDuration(pp.MaxPasswordAge),
		MaxPasswordHistory:               pp.MaxPasswordHistory,
		LockoutThreshold:                 a.AccountLockout.Threshold,
		LockoutMinutes:                   a.AccountLockout.Duration,
		UnlockOnPasswordReset:            a.AccountLockout.UnlockOnPasswordReset,
		SessionsNeverExpire:              !a.ExpireInactiveSessions,
		KeepSessionsOnPasswordReset:      !a.RevokeSessionOnPasswordReset,
	}
	if pp.ValidatorPattern != "" {
		out.PasswordPattern = regexp.MustCompile(pp.ValidatorPattern) // checked by config
	}
	return out
}

// pagesOptions are the email pages' settings.
func pagesOptions(opts *config.Options) transport.PagesOptions {
	c := opts.Accounts.CustomPages
	return transport.PagesOptions{AppName: opts.Accounts.AppName, Custom: map[string]string{
		"invalid_link": c.InvalidLink, "invalid_verification_link": c.InvalidVerificationLink,
		"link_send_success": c.LinkSendSuccess, "link_send_fail": c.LinkSendFail,
		"choose_password": c.ChoosePassword, "password_reset_success": c.PasswordResetSuccess,
		"verify_email_success": c.VerifyEmailSuccess,
	}}
}

func daysToDuration(days int) time.Duration { return time.Duration(days) * 24 * time.Hour }
