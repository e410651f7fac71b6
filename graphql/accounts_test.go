package graphql_test

import (
	"regexp"
	"testing"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/email/emailtest"
	"github.com/quarrydata/quarry/server/servertest"
)

var mailedToken = regexp.MustCompile(`/(request_password_reset|verify_email)\?token=([0-9a-f]{32})`)

// nextToken waits for the next mail, checks its recipient and kind, and
// returns the link's token.
func nextToken(t *testing.T, relay *emailtest.Server, to, kind string) string {
	t.Helper()
	m := relay.Next(t)
	found := mailedToken.FindStringSubmatch(m.Text)
	if m.To != to || found == nil || found[1] != kind {
		t.Fatalf("mail to %s, want a %s link to %s: %q", m.To, kind, to, m.Text)
	}
	return found[2]
}

// TestAccountMutations: resetPassword, confirmResetPassword,
// sendVerificationEmail and challenge are REST's /requestPasswordReset,
// the reset form, /verificationEmailRequest and /challenge: the same
// mails, the same answers for known and unknown addresses, the same
// refusals with the same codes.
func TestAccountMutations(t *testing.T) {
	relay := emailtest.Start(t, emailtest.Options{})
	srv := start(t, func(o *config.Options) {
		o.Accounts.AppName = "Quarry Test"
		o.Accounts.EmailAdapter = config.EmailAdapterOptions{Module: config.EmailAdapterSMTP,
			Options: config.SMTPOptions{Host: relay.Host, Port: relay.Port, FromAddress: "Quarry Test <no-reply@example.com>"}}
		o.Auth.Providers = map[string]any{"mfa": map[string]any{"enabled": true, "options": []any{"TOTP"}}}
	})
	app := servertest.App()
	if r := srv.Do(t, "POST", "/users", map[string]any{"username": "ann", "password": "pw", "email": "ann@example.com"}, app); r.Status != 201 {
		t.Fatalf("sign-up: %d %s", r.Status, r.Body)
	}
	email := func(addr string) func(map[string]string) map[string]any {
		return func(map[string]string) map[string]any { return map[string]any{"email": addr} }
	}
	const reset = `mutation($email: String!) { resetPassword(input: {email: $email, clientMutationId: "r"}) { ok clientMutationId } }`
	run(t, srv, []step{
		{name: "resetPassword of a known address", query: reset, vars: email("Ann@Example.com"),
			want: map[string]string{"data.resetPassword": `{"ok":true,"clientMutationId":"r"}`}},
		{name: "resetPassword of an unknown address: the same answer", query: reset, vars: email("nobody@example.com"),
			want: map[string]string{"data.resetPassword": `{"ok":true,"clientMutationId":"r"}`}},
		{name: "resetPassword of an empty address: REST's 204", query: reset, vars: email(""),
			want: map[string]string{"errors.0.extensions.code": `204`}},
	})
	token := nextToken(t, relay, "ann@example.com", "request_password_reset")

	const confirm = `mutation($u: String!, $p: String!, $t: String!) {
		confirmResetPassword(input: {username: $u, password: $p, token: $t}) { ok } }`
	args := func(u, p, tok string) func(map[string]string) map[string]any {
		return func(map[string]string) map[string]any { return map[string]any{"u": u, "p": p, "t": tok} }
	}
	run(t, srv, []step{
		{name: "confirmResetPassword with another username", query: confirm, vars: args("bob", "new-pw", token),
			want: map[string]string{"errors.0.extensions.code": `-1`}},
		{name: "confirmResetPassword with a wrong token", query: confirm, vars: args("ann", "new-pw", "0123456789abcdef0123456789abcdef"),
			want: map[string]string{"errors.0.extensions.code": `-1`}},
		{name: "confirmResetPassword", query: confirm, vars: args("ann", "new-pw", token),
			want: map[string]string{"data.confirmResetPassword.ok": `true`}},
		{name: "the token is spent", query: confirm, vars: args("ann", "other-pw", token),
			want: map[string]string{"errors.0.extensions.code": `-1`}},
		{name: "the new password logs in", query: `mutation { logIn(input: {username: "ann", password: "new-pw"}) { viewer { user { username } } } }`,
			want: map[string]string{"data.logIn.viewer.user.username": `"ann"`}},
		{name: "the old one does not", query: `mutation { logIn(input: {username: "ann", password: "pw"}) { viewer { user { username } } } }`,
			want: map[string]string{"errors.0.extensions.code": `101`}},
	})

	const verify = `mutation($email: String!) { sendVerificationEmail(input: {email: $email}) { ok } }`
	run(t, srv, []step{
		{name: "sendVerificationEmail to an unverified address", query: verify, vars: email("ann@example.com"),
			want: map[string]string{"data.sendVerificationEmail.ok": `true`}},
		{name: "sendVerificationEmail to an unknown address: the same answer", query: verify, vars: email("nobody@example.com"),
			want: map[string]string{"data.sendVerificationEmail.ok": `true`}},
	})
	nextToken(t, relay, "ann@example.com", "verify_email")

	const challenge = `mutation($p: String, $c: Object) { challenge(input: {username: "ann", password: $p, challengeData: $c}) { challengeData } }`
	data := func(p string, c any) func(map[string]string) map[string]any {
		return func(map[string]string) map[string]any { return map[string]any{"p": p, "c": c} }
	}
	run(t, srv, []step{
		{name: "challenge", query: challenge, vars: data("new-pw", map[string]any{"mfa": map[string]any{}}),
			want: map[string]string{"data.challenge.challengeData": `{"mfa":true}`}},
		{name: "challenge with a wrong password", query: challenge, vars: data("pw", map[string]any{"mfa": map[string]any{}}),
			want: map[string]string{"errors.0.extensions.code": `101`}},
		{name: "challenge without challengeData", query: challenge, vars: data("new-pw", nil),
			want: map[string]string{"errors.0.extensions.code": `-1`}},
		{name: "challenge of a provider that is not enabled", query: challenge, vars: data("new-pw", map[string]any{"sms": map[string]any{}}),
			want: map[string]string{"errors.0.extensions.code": `252`}},
	})
}
