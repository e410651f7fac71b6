package server

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"os"
	"regexp"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/email"
	"github.com/quarrydata/quarry/metrics"
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

// MailQueueDrain bounds how long shutdown tries the emails still waiting
// for the relay.
const MailQueueDrain = 10 * time.Second

// queueMail puts the retry queue in front of the mailer (nil without
// one), its counts in the metrics.
func queueMail(mailer email.Adapter, opts *config.Options, log *slog.Logger, m *metrics.Metrics) *email.Queue {
	if mailer == nil {
		return nil
	}
	o := opts.Accounts.EmailAdapter.Options
	q := email.NewQueue(mailer, email.QueueOptions{Size: o.QueueSize, MaxAttempts: o.MaxAttempts, FirstRetry: o.FirstRetry,
		Warn: func(msg string) { log.Warn(msg) }})
	m.GaugeFunc("quarry_email_queue_depth", "Emails waiting for the SMTP relay or being sent.",
		func() float64 { return float64(q.Stats().Depth) })
	m.CounterFunc("quarry_email_sent_total", "Emails the SMTP relay accepted.",
		func() float64 { return float64(q.Stats().Sent) })
	m.CounterFunc("quarry_email_retries_total", "Email tries that failed temporarily (relay unreachable, 4xx, timeout) and were rescheduled.",
		func() float64 { return float64(q.Stats().Retried) })
	m.CounterFunc("quarry_email_dropped_total", "Emails given up: a permanent (5xx) failure, the tries used up, the queue full, or unsent at shutdown.",
		func() float64 { return float64(q.Stats().Dropped) })
	return q
}

// closeMailQueue tries the waiting emails once more, for MailQueueDrain,
// once the service has handed over the emails it was queueing.
func (s *Server) closeMailQueue() {
	if s.mailQueue == nil {
		return
	}
	s.Service.WaitMail()
	ctx, cancel := context.WithTimeout(context.Background(), MailQueueDrain)
	defer cancel()
	s.mailQueue.Close(ctx)
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
		SkipVerificationEmail:            !a.SendUserEmailVerification,
		PreventLoginWithUnverifiedEmail:  a.PreventLoginWithUnverifiedEmail,
		PreventSignupWithUnverifiedEmail: a.PreventSignupWithUnverifiedEmail,
		VerifyTokenValidity:              a.EmailVerifyTokenValidityDuration,
		VerifyTokenReuse:                 a.EmailVerifyTokenReuseIfValid,
		RevealUnknownEmail:               !a.EmailVerifySuccessOnInvalidEmail,
		ResetTokenValidity:               pp.ResetTokenValidityDuration,
		ResetTokenReuse:                  pp.ResetTokenReuseIfValid,
		RevealUnknownResetEmail:          !pp.ResetPasswordSuccessOnInvalidEmail,
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

// pagesOptions are the email pages' settings: customPages, or with
// Parse Server's pages router (pages.enableRouter) the router's.
func pagesOptions(opts *config.Options) (transport.PagesOptions, error) {
	c := opts.Accounts.CustomPages
	custom := map[string]string{
		"invalid_link": c.InvalidLink, "invalid_verification_link": c.InvalidVerificationLink,
		"link_send_success": c.LinkSendSuccess, "link_send_fail": c.LinkSendFail,
		"choose_password": c.ChoosePassword, "password_reset_success": c.PasswordResetSuccess,
		"verify_email_success": c.VerifyEmailSuccess,
	}
	out := transport.PagesOptions{AppName: opts.Accounts.AppName, Custom: custom}
	if !opts.PagesRouter() {
		return out, nil
	}
	fixed, function := opts.PagesPlaceholders()
	r := &transport.PagesRouterOptions{
		CustomURLs:           opts.PagesCustomURLs(),
		ForceRedirect:        opts.PagesSwitch("forceRedirect"),
		Localization:         opts.PagesSwitch("enableLocalization"),
		FallbackLocale:       opts.PagesString("localizationFallbackLocale"),
		EncodeHeaders:        opts.PagesSwitch("encodePageParamHeaders"),
		Placeholders:         fixed,
		PlaceholdersFunction: function,
	}
	if dir := opts.PagesString("pagesPath"); dir != "" {
		r.Files = os.DirFS(dir)
	}
	if p := opts.PagesString("localizationJsonPath"); p != "" {
		b, err := os.ReadFile(p)
		if err == nil {
			err = json.Unmarshal(b, &r.Translations)
		}
		if err != nil {
			return out, fmt.Errorf("pages.localizationJsonPath: failed to load JSON file: %w", err)
		}
	}
	for _, route := range opts.PagesCustomRoutes() {
		r.CustomRoutes = append(r.CustomRoutes, transport.PagesRoute{Method: route.Method, Path: route.Path, Handler: route.Handler})
	}
	out.Router = r
	return out, nil
}

func daysToDuration(days int) time.Duration { return time.Duration(days) * 24 * time.Hour }
