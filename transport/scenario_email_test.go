package transport_test

import (
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/email/emailtest"
	"github.com/quarrydata/quarry/server/servertest"
)

// Email flows: verification (sign-up, email change, new link requests),
// password reset (request, link, form, new password), their pages and
// their options, against a real SMTP server on 127.0.0.1.

// withMail configures the smtp email adapter for relay and email
// verification with appName "Quarry Test".
func withMail(relay *emailtest.Server, more func(*config.Options)) func(*config.Options) {
	return func(o *config.Options) {
		o.Accounts.AppName = "Quarry Test"
		o.Accounts.VerifyUserEmails = true
		o.Accounts.EmailAdapter = config.EmailAdapterOptions{Module: config.EmailAdapterSMTP,
			Options: config.SMTPOptions{Host: relay.Host, Port: relay.Port, FromAddress: "Quarry Test <no-reply@example.com>"}}
		if more != nil {
			more(o)
		}
	}
}

var linkPattern = regexp.MustCompile(`http://\S+/apps/[^/\s]+/(verify_email|request_password_reset)\?token=[0-9a-f]{32}`)

// mailedLink waits for the next email, checks its recipient and returns the link in it.
func mailedLink(t testing.TB, relay *emailtest.Server, to, kind string) string {
	t.Helper()
	m := relay.Next(t)
	link := linkPattern.FindString(m.Text)
	if m.To != to || link == "" || !strings.Contains(link, "/"+kind+"?") {
		t.Fatalf("mail to %s, want one to %s with a %s link: %q", m.To, to, kind, m.Text)
	}
	if !strings.Contains(m.Subject, "Quarry Test") || !strings.Contains(m.Text, "Quarry Test") {
		t.Errorf("mail does not name the app: %q %q", m.Subject, m.Text)
	}
	return link
}

var noRedirect = &http.Client{Timeout: 30 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// browse requests a page as a browser would, without following redirects;
// form, when set, is posted as application/x-www-form-urlencoded.
func browse(t testing.TB, method, target string, form url.Values) (int, string, string) {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, target, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	res, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header.Get("Location"), string(data)
}

// redirectsTo follows a link and checks the redirect's page and parameters.
func redirectsTo(t testing.TB, method, target string, form url.Values, page string, params map[string]string) string {
	t.Helper()
	status, loc, body := browse(t, method, target, form)
	if status != http.StatusFound || !strings.Contains(loc, page) {
		t.Fatalf("%s %s: %d to %q, want a redirect to %s; %s", method, target, status, loc, page, clip(body))
	}
	u, err := url.Parse(loc)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range params {
		if got := u.Query().Get(k); got != v {
			t.Errorf("redirect %s: %s=%q, want %q", loc, k, got, v)
		}
	}
	return loc
}

func userField(t testing.TB, srv *servertest.Server, id string) map[string]any {
	t.Helper()
	res := srv.Do(t, "GET", "/users/"+id, nil, servertest.Master())
	if res.Status != 200 {
		t.Fatalf("get user: %d %s", res.Status, res.Body)
	}
	for k := range res.Map() {
		if strings.HasPrefix(k, "_") {
			t.Errorf("internal field %s shown: %s", k, res.Body)
		}
	}
	return res.Map()
}

// TestScenarioSendUserEmailVerificationOff: with sendUserEmailVerification
// false a sign-up leaves the address unverified and sends nothing; the
// next mail the relay gets is the one asked for after it (a sentinel, so
// the test never waits for a mail not to come); verificationEmailRequest
// still sends the link.
func TestScenarioSendUserEmailVerificationOff(t *testing.T) {
	relay := emailtest.Start(t, emailtest.Options{})
	srv := servertest.Start(t, withMail(relay, func(o *config.Options) { o.Accounts.SendUserEmailVerification = false }))
	app := servertest.App()
	res := srv.Do(t, "POST", "/users", map[string]any{"username": "fay", "password": password("fay"), "email": "fay@example.com"}, app)
	if res.Status != 201 {
		t.Fatalf("sign up: %d %s", res.Status, res.Body)
	}
	if u := userField(t, srv, res.Map()["objectId"].(string)); u["emailVerified"] != false {
		t.Errorf("emailVerified %v, want false", u["emailVerified"])
	}
	if r := srv.Do(t, "POST", "/requestPasswordReset", map[string]any{"email": "fay@example.com"}, app); r.Status != 200 {
		t.Fatalf("reset: %d %s", r.Status, r.Body)
	}
	mailedLink(t, relay, "fay@example.com", "request_password_reset")
	if r := srv.Do(t, "POST", "/verificationEmailRequest", map[string]any{"email": "fay@example.com"}, app); r.Status != 200 {
		t.Fatalf("verificationEmailRequest: %d %s", r.Status, r.Body)
	}
	mailedLink(t, relay, "fay@example.com", "verify_email")
}

func TestScenarioEmailVerification(t *testing.T) {
	relay := emailtest.Start(t, emailtest.Options{})
	srv := servertest.Start(t, withMail(relay, nil))
	app := servertest.App()
	var aliceID, aliceToken, link string
	runScenarios(t, srv, []scenario{
		{name: "sign up with email", method: "POST", path: "/users", headers: app,
			body:           map[string]any{"username": "alice", "password": password("alice"), "email": "alice@example.com"},
			expectedStatus: 201, notExpectedContains: []string{"emailVerified", "_email"},
			check: func(t testing.TB, res servertest.Response) {
				aliceID, aliceToken = res.Map()["objectId"].(string), tokenOf(res)
				link = mailedLink(t, relay, "alice@example.com", "verify_email")
				if !strings.HasPrefix(link, srv.URL+"/apps/"+servertest.AppID+"/") {
					t.Errorf("link %s is not under %s", link, srv.URL)
				}
				if u := userField(t, srv, aliceID); u["emailVerified"] != false {
					t.Errorf("emailVerified %v after sign-up, want false", u["emailVerified"])
				}
			}},
	})
	// A client may not set emailVerified.
	res := srv.Do(t, "PUT", "/users/"+aliceID, map[string]any{"emailVerified": true}, asUser(aliceToken))
	codeIs(119)(t, res)

	redirectsTo(t, "GET", link, nil, "/apps/verify_email_success.html", map[string]string{"username": "alice", "id": servertest.AppID, "app": "Quarry Test"})
	if u := userField(t, srv, aliceID); u["emailVerified"] != true {
		t.Errorf("emailVerified %v after the link, want true", u["emailVerified"])
	}
	status, _, page := browse(t, "GET", srv.URL+"/apps/verify_email_success.html?username=alice&app=Quarry+Test", nil)
	if status != 200 || !strings.Contains(page, "Email verified") || !strings.Contains(page, "alice") {
		t.Errorf("success page %d %s", status, clip(page))
	}
	redirectsTo(t, "GET", link, nil, "/apps/invalid_verification_link.html", nil)

	// Already verified, unknown, and the sentinel: only bob's email arrives.
	runScenarios(t, srv, []scenario{
		{name: "request for a verified address", method: "POST", path: "/verificationEmailRequest", headers: app,
			body: map[string]any{"email": "alice@example.com"}, expectedStatus: 200, check: bodyIs("{}")},
		{name: "request for an unknown address", method: "POST", path: "/verificationEmailRequest", headers: app,
			body: map[string]any{"email": "nobody@example.com"}, expectedStatus: 200, check: bodyIs("{}")},
		{name: "email missing", method: "POST", path: "/verificationEmailRequest", headers: app,
			body: map[string]any{}, expectedStatus: 400, check: msgIs(204, "you must provide an email")},
		{name: "email not a string", method: "POST", path: "/verificationEmailRequest", headers: app,
			body: map[string]any{"email": 7}, expectedStatus: 400, check: msgIs(125, "you must provide a valid email string")},
		{name: "sign up bob", method: "POST", path: "/users", headers: app,
			body: map[string]any{"username": "bob", "password": password("bob"), "email": "bob@example.com"}, expectedStatus: 201},
	})
	bobLink := mailedLink(t, relay, "bob@example.com", "verify_email")

	// Bob asks again: a new token, the old link dies.
	res = srv.Do(t, "POST", "/verificationEmailRequest", map[string]any{"email": "BOB@example.com"}, app)
	bodyIs("{}")(t, res)
	bobLink2 := mailedLink(t, relay, "bob@example.com", "verify_email")
	if bobLink2 == bobLink {
		t.Error("a new request repeated the token (emailVerifyTokenReuseIfValid is off)")
	}
	redirectsTo(t, "GET", bobLink, nil, "invalid_verification_link.html", nil)

	// Alice changes her address: unverified again, a mail to the new one.
	res = srv.Do(t, "PUT", "/users/"+aliceID, map[string]any{"email": "alice@new.example"}, asUser(aliceToken))
	if res.Status != 200 {
		t.Fatalf("change email: %d %s", res.Status, res.Body)
	}
	mailedLink(t, relay, "alice@new.example", "verify_email")
	if u := userField(t, srv, aliceID); u["emailVerified"] != false {
		t.Errorf("emailVerified %v after an email change, want false", u["emailVerified"])
	}
	// The invalid-link page offers a new link; its form posts the address.
	status, _, page = browse(t, "GET", srv.URL+"/apps/invalid_verification_link.html", nil)
	if status != 200 || !strings.Contains(page, `action="`+srv.URL+"/apps/"+servertest.AppID+`/resend_verification_email"`) {
		t.Errorf("invalid link page %d %s", status, clip(page))
	}
	redirectsTo(t, "POST", srv.URL+"/apps/"+servertest.AppID+"/resend_verification_email", url.Values{"email": {"alice@new.example"}}, "link_send_success.html", nil)
	aliceLink := mailedLink(t, relay, "alice@new.example", "verify_email")
	redirectsTo(t, "GET", aliceLink, nil, "verify_email_success.html", map[string]string{"username": "alice"})
	redirectsTo(t, "GET", bobLink2, nil, "verify_email_success.html", map[string]string{"username": "bob"})

	// Another app id in the link is not ours.
	status, _, _ = browse(t, "GET", srv.URL+"/apps/other-app/verify_email?token=x", nil)
	if status != 404 {
		t.Errorf("other app: %d, want 404", status)
	}
}

// TestScenarioPasswordResetRevealsUnknownAddress: with
// passwordPolicy.resetPasswordSuccessOnInvalidEmail false, a reset request
// for an address no user has answers 205.
func TestScenarioPasswordResetRevealsUnknownAddress(t *testing.T) {
	relay := emailtest.Start(t, emailtest.Options{})
	srv := servertest.Start(t, withMail(relay, func(o *config.Options) {
		o.Accounts.VerifyUserEmails = false
		o.Accounts.PasswordPolicy.ResetPasswordSuccessOnInvalidEmail = false
	}))
	app := servertest.App()
	srv.Do(t, "POST", "/users", map[string]any{"username": "dora", "password": password("dora"), "email": "dora@example.com"}, app)
	runScenarios(t, srv, []scenario{
		{name: "known address", method: "POST", path: "/requestPasswordReset", headers: app,
			body: map[string]any{"email": "dora@example.com"}, expectedStatus: 200, check: replyIs(`{}`)},
		{name: "unknown address", method: "POST", path: "/requestPasswordReset", headers: app,
			body: map[string]any{"email": "nobody@example.com"}, expectedStatus: 400, check: msgIs(205, "No user found with email nobody@example.com.")},
	})
}

func TestScenarioPasswordReset(t *testing.T) {
	relay := emailtest.Start(t, emailtest.Options{})
	srv := servertest.Start(t, withMail(relay, func(o *config.Options) { o.Accounts.VerifyUserEmails = false }))
	app := servertest.App()
	res := srv.Do(t, "POST", "/users", map[string]any{"username": "carol", "password": password("carol"), "email": "carol@example.com"}, app)
	if res.Status != 201 {
		t.Fatalf("sign up: %d %s", res.Status, res.Body)
	}
	carolID, oldToken := res.Map()["objectId"].(string), tokenOf(res)
	if u := userField(t, srv, carolID); u["emailVerified"] != nil {
		t.Errorf("emailVerified %v with verification off, want none", u["emailVerified"])
	}
	var known, unknown servertest.Response
	runScenarios(t, srv, []scenario{
		{name: "known address", method: "POST", path: "/requestPasswordReset", headers: app,
			body: map[string]any{"email": "carol@example.com"}, expectedStatus: 200,
			check: func(t testing.TB, r servertest.Response) { known = r }},
		{name: "unknown address", method: "POST", path: "/requestPasswordReset", headers: app,
			body: map[string]any{"email": "nobody@example.com"}, expectedStatus: 200,
			check: func(t testing.TB, r servertest.Response) { unknown = r }},
		{name: "email missing", method: "POST", path: "/requestPasswordReset", headers: app,
			body: map[string]any{}, expectedStatus: 400, check: msgIs(204, "you must provide an email")},
		{name: "without keys", method: "POST", path: "/requestPasswordReset",
			body: map[string]any{"email": "carol@example.com"}, expectedStatus: 403},
	})
	if string(known.Body) != string(unknown.Body) || string(known.Body) != "{}" {
		t.Errorf("known %s and unknown %s addresses answer differently", known.Body, unknown.Body)
	}
	link := mailedLink(t, relay, "carol@example.com", "request_password_reset")
	token := strings.TrimPrefix(link[strings.Index(link, "?"):], "?token=")

	loc := redirectsTo(t, "GET", link, nil, "/apps/choose_password.html", map[string]string{"token": token, "username": "carol", "id": servertest.AppID})
	status, _, page := browse(t, "GET", loc, nil)
	action := srv.URL + "/apps/" + servertest.AppID + "/request_password_reset"
	if status != 200 || !strings.Contains(page, `action="`+action+`"`) || !strings.Contains(page, `value="`+token+`"`) {
		t.Fatalf("choose_password page %d %s", status, clip(page))
	}
	newPassword := "brand-new-Pa55"
	for _, tc := range []struct {
		name   string
		form   url.Values
		page   string
		params map[string]string
	}{
		{name: "passwords differ", form: url.Values{"token": {token}, "new_password": {newPassword}, "confirm_password": {"other"}},
			page: "choose_password.html", params: map[string]string{"token": token, "error": "The two passwords differ."}},
		{name: "empty password", form: url.Values{"token": {token}, "new_password": {""}},
			page: "choose_password.html", params: map[string]string{"error": "password is required"}},
		{name: "wrong token", form: url.Values{"token": {"0123"}, "new_password": {newPassword}}, page: "invalid_link.html"},
		{name: "new password", form: url.Values{"token": {token}, "new_password": {newPassword}, "confirm_password": {newPassword}},
			page: "password_reset_success.html", params: map[string]string{"username": "carol"}},
		{name: "link spent", form: url.Values{"token": {token}, "new_password": {"again-Pa55"}}, page: "invalid_link.html"},
	} {
		t.Run(tc.name, func(t *testing.T) { redirectsTo(t, "POST", action, tc.form, tc.page, tc.params) })
	}
	redirectsTo(t, "GET", link, nil, "invalid_link.html", nil)
	// A script posting the form (X-Requested-With) gets JSON, not redirects.
	xhr := map[string]string{"X-Requested-With": "XMLHttpRequest", "Content-Type": "application/x-www-form-urlencoded"}
	res = rawDo(t, action, "POST", url.Values{"token": {token}, "new_password": {"x-Pa55word"}}.Encode(), xhr)
	if res.Status != 400 || res.Map()["code"] != float64(-1) {
		t.Errorf("XHR with a spent link: %d %s", res.Status, res.Body)
	}
	runScenarios(t, srv, []scenario{
		{name: "old session revoked", method: "GET", path: "/users/me", headers: asUser(oldToken), expectedStatus: 400, check: codeIs(209)},
		{name: "old password refused", method: "POST", path: "/login", headers: app,
			body: map[string]any{"username": "carol", "password": password("carol")}, expectedStatus: 404, check: codeIs(101)},
		{name: "new password works", method: "POST", path: "/login", headers: app,
			body: map[string]any{"username": "carol", "password": newPassword}, expectedStatus: 200},
	})
}

// testClock is a settable clock for the policies' expiries.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time        { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *testClock) Add(d time.Duration)   { c.mu.Lock(); defer c.mu.Unlock(); c.now = c.now.Add(d) }
func newClock() *testClock                 { return &testClock{now: time.Now()} }
func loginBody(u, p string) map[string]any { return map[string]any{"username": u, "password": p} }

func TestScenarioEmailTemplates(t *testing.T) {
	relay := emailtest.Start(t, emailtest.Options{})
	dir := t.TempDir()
	verification := filepath.Join(dir, "verify.txt")
	if err := os.WriteFile(verification, []byte("Subject: Welcome to {{.AppName}}, {{.Username}}\n\nConfirm here: {{.URL}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := servertest.Start(t, withMail(relay, func(o *config.Options) {
		o.Accounts.EmailAdapter.Options.VerificationEmailTemplate = verification
		o.PublicServerURL = "https://api.example.com/parse"
	}))
	res := srv.Do(t, "POST", "/users", map[string]any{"username": "hal", "password": password("hal"), "email": "hal@example.com"}, servertest.App())
	if res.Status != 201 {
		t.Fatalf("sign up: %d %s", res.Status, res.Body)
	}
	m := relay.Next(t)
	if m.Subject != "Welcome to Quarry Test, hal" || !strings.HasPrefix(m.Text, "Confirm here: https://api.example.com/parse/apps/"+servertest.AppID+"/verify_email?token=") {
		t.Errorf("custom template not used: %q %q", m.Subject, m.Text)
	}
}

func TestScenarioResetTokenReuse(t *testing.T) {
	relay := emailtest.Start(t, emailtest.Options{})
	clock := newClock()
	srv := servertest.Start(t, withMail(relay, func(o *config.Options) {
		o.Now = clock.Now
		o.Accounts.VerifyUserEmails = false
		o.Accounts.PasswordPolicy.ResetTokenReuseIfValid = true
		o.Accounts.PasswordPolicy.ResetTokenValidityDuration = 10 * time.Minute
	}))
	app := servertest.App()
	if res := srv.Do(t, "POST", "/users", map[string]any{"username": "kim", "password": password("kim"), "email": "kim@example.com"}, app); res.Status != 201 {
		t.Fatalf("sign up: %d %s", res.Status, res.Body)
	}
	request := func() string {
		t.Helper()
		if res := srv.Do(t, "POST", "/requestPasswordReset", map[string]any{"email": "kim@example.com"}, app); res.Status != 200 {
			t.Fatalf("reset request: %d %s", res.Status, res.Body)
		}
		return mailedLink(t, relay, "kim@example.com", "request_password_reset")
	}
	first := request()
	if again := request(); again != first {
		t.Errorf("a still valid token was replaced: %s, then %s", first, again)
	}
	clock.Add(10 * time.Minute)
	redirectsTo(t, "GET", first, nil, "invalid_link.html", nil)
	fresh := request()
	if fresh == first {
		t.Error("an expired token was sent again")
	}
	redirectsTo(t, "GET", fresh, nil, "choose_password.html", map[string]string{"username": "kim"})
}
