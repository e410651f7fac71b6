package transport_test

import (
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/email/emailtest"
	"github.com/quarrydata/quarry/server/servertest"
)

// Parse Server's pages router (pages.enableRouter) through HTTP, ending
// the email verification and password reset flows as Parse Server does:
// GET shows the page (200, placeholders filled in, the page parameters
// repeated in x-parse-page-param-* headers), POST and forceRedirect
// redirect to it (303), customUrls redirect to the operator's site,
// localization picks the locale's folder and its translation, and custom
// routes show the page their cloud function names.

// routerPagesJS defines the placeholders function and a custom route's
// handler.
const routerPagesJS = `
Parse.Cloud.define("pagePlaceholders", (req) => {
  return { title: "Dynamic " + req.params.appName };
});
Parse.Cloud.define("customPage", (req) => {
  if (req.params.query.none) { return {}; }
  return { file: "custom_page.html", query: { from: req.params.method } };
});
`

// routerPageFiles are the operator's pages (pagesPath): every page shows
// its placeholders; de/ holds German versions of two.
var routerPageFiles = map[string]string{
	"password_reset.html":                      "RESET user={{username}} token={{token}} error={{error}} {{greeting}}",
	"password_reset_success.html":              "CHANGED user={{username}}",
	"password_reset_link_invalid.html":         "RESET-INVALID user={{username}}",
	"email_verification_success.html":          "VERIFIED user={{username}} app={{appName}} id={{appId}} locale={{locale}} title={{title}} {{greeting}}",
	"email_verification_link_expired.html":     "EXPIRED user={{username}}",
	"email_verification_link_invalid.html":     "INVALID",
	"email_verification_send_success.html":     "SENT",
	"email_verification_send_fail.html":        "NOT-SENT",
	"custom_page.html":                         "CUSTOM from={{from}} locale={{locale}} <{{{raw}}}>",
	"de/email_verification_success.html":       "VERIFIZIERT user={{username}} {{greeting}}",
	"de-AT/password_reset_link_invalid.html":   "UNGUELTIG-AT",
	"style.css":                                "body { color: {{notFilled}} }",
	"password_reset_link_invalid_comment.html": "{{! hidden}}shown{{#missing}}no{{/missing}}{{^missing}} yes{{/missing}}",
}

const routerTranslations = `{
  "en": {"translation": {"greeting": "Hello {{username}}"}},
  "de": {"translation": {"greeting": "Hallo {{username}}"}},
  "fr": {"translation": {"greeting": "Bonjour {{username}}"}}
}`

func writeRouterPages(t *testing.T) (pagesDir, jsonPath, cloudMain string) {
	t.Helper()
	dir := t.TempDir()
	pagesDir = filepath.Join(dir, "pages")
	for name, text := range routerPageFiles {
		p := filepath.Join(pagesDir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	jsonPath, cloudMain = filepath.Join(dir, "translations.json"), filepath.Join(dir, "main.js")
	if err := os.WriteFile(jsonPath, []byte(routerTranslations), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cloudMain, []byte(routerPagesJS), 0o600); err != nil {
		t.Fatal(err)
	}
	return pagesDir, jsonPath, cloudMain
}

// pageReply is a page request's answer.
type pageReply struct {
	status   int
	location string
	header   http.Header
	body     string
}

func requestPage(t testing.TB, method, target string, form url.Values, header map[string]string) pageReply {
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
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	return pageReply{status: res.StatusCode, location: res.Header.Get("Location"), header: res.Header, body: string(data)}
}

// pageCase is one request to the router and what must come back.
type pageCase struct {
	name          string
	method        string
	target        func() string
	form          url.Values
	header        map[string]string
	status        int
	bodyHas       []string
	bodyHasNot    []string
	locationHas   []string          // substrings of Location
	locationQuery map[string]string // parameters of Location
	headers       map[string]string // x-parse-page-param-* etc.
}

func runPageCases(t *testing.T, cases []pageCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			method := tc.method
			if method == "" {
				method = "GET"
			}
			r := requestPage(t, method, tc.target(), tc.form, tc.header)
			if r.status != tc.status {
				t.Fatalf("%s: status %d, want %d (location %q) %s", tc.name, r.status, tc.status, r.location, clip(r.body))
			}
			for _, s := range tc.bodyHas {
				if !strings.Contains(r.body, s) {
					t.Errorf("body %q lacks %q", clip(r.body), s)
				}
			}
			for _, s := range tc.bodyHasNot {
				if strings.Contains(r.body, s) {
					t.Errorf("body %q has %q", clip(r.body), s)
				}
			}
			for _, s := range tc.locationHas {
				if !strings.Contains(r.location, s) {
					t.Errorf("location %q lacks %q", r.location, s)
				}
			}
			if len(tc.locationQuery) > 0 {
				u, err := url.Parse(r.location)
				if err != nil {
					t.Fatal(err)
				}
				for k, v := range tc.locationQuery {
					if got := u.Query().Get(k); got != v {
						t.Errorf("location %s: %s=%q, want %q", r.location, k, got, v)
					}
				}
			}
			for k, v := range tc.headers {
				if got := r.header.Get(k); got != v {
					t.Errorf("header %s = %q, want %q", k, got, v)
				}
			}
		})
	}
}

// TestScenarioPagesRouter: the whole router with the operator's pages,
// translations, placeholders and a custom route.
func TestScenarioPagesRouter(t *testing.T) {
	pagesDir, jsonPath, cloudMain := writeRouterPages(t)
	relay := emailtest.Start(t, emailtest.Options{})
	srv := servertest.Start(t, withMail(relay, func(o *config.Options) {
		o.Cloud = cloudMain
		o.Accounts.PasswordPolicy.ValidatorPattern = `^.{8,}$`
		o.Pages = map[string]any{"enableRouter": true, "pagesPath": pagesDir, "enableLocalization": true,
			"localizationJsonPath": jsonPath, "placeholders": "pagePlaceholders",
			"customRoutes": []any{
				map[string]any{"method": "GET", "path": "custom_route", "handler": "customPage"},
				map[string]any{"method": "POST", "path": "custom_route", "handler": "customPage"},
			}}
	}))
	app := servertest.App()
	signUp := func(name string) string {
		res := srv.Do(t, "POST", "/users", map[string]any{"username": name, "password": password(name), "email": name + "@example.com"}, app)
		if res.Status != http.StatusCreated {
			t.Fatalf("sign up: %d %s", res.Status, res.Body)
		}
		return mailedLink(t, relay, name+"@example.com", "verify_email")
	}
	verifyEN, verifyDE, verifyAgain := signUp("ann"), signUp("bea"), signUp("cem")
	signUp("dan")
	resetLink := func(name string) string {
		if res := srv.Do(t, "POST", "/requestPasswordReset", map[string]any{"email": name + "@example.com"}, app); res.Status != http.StatusOK {
			t.Fatalf("reset: %d %s", res.Status, res.Body)
		}
		return mailedLink(t, relay, name+"@example.com", "request_password_reset")
	}
	reset := resetLink("ann")
	token := strings.TrimPrefix(reset[strings.Index(reset, "token="):], "token=")
	apps := srv.URL + "/apps/"
	fixed := func(s string) func() string { return func() string { return s } }
	badToken := strings.Repeat("0", 32)

	runPageCases(t, []pageCase{
		{name: "verify: the success page, translated, placeholders from the cloud function", target: fixed(verifyEN),
			status: 200, bodyHas: []string{"VERIFIED user=ann", "app=Quarry Test", "id=" + servertest.AppID, "title=Dynamic Quarry Test",
				"Hello ann", "locale="},
			headers: map[string]string{"x-parse-page-param-username": "ann", "x-parse-page-param-appname": "Quarry Test",
				"x-parse-page-param-appid": servertest.AppID, "x-parse-page-param-publicserverurl": srv.URL}},
		{name: "verify in German: the de folder's page and translation", target: fixed(verifyDE + "&locale=de-CH"),
			status: 200, bodyHas: []string{"VERIFIZIERT user=bea", "Hallo bea"}, bodyHasNot: []string{"VERIFIED"},
			headers: map[string]string{"x-parse-page-param-locale": "de-CH"}},
		{name: "the locale from the header", target: fixed(verifyAgain), header: map[string]string{"x-parse-page-param-locale": "fr"},
			status: 200, bodyHas: []string{"VERIFIED user=cem", "locale=fr", "Bonjour cem"}},
		{name: "a spent link: the expired page", target: fixed(verifyEN + "&username=ann"), status: 200, bodyHas: []string{"EXPIRED user=ann"}},
		{name: "a link without its token: the invalid page", target: fixed(apps + servertest.AppID + "/verify_email"), status: 200,
			bodyHas: []string{"INVALID"}},
		{name: "another app's link", target: fixed(apps + "otherApp/verify_email?token=" + badToken), status: 403,
			bodyHas: []string{`"unauthorized"`}},
		{name: "resend for no such user: send fail, redirected (POST)", method: "POST", target: fixed(apps + servertest.AppID + "/resend_verification_email"),
			form: url.Values{"username": {"nobody"}}, status: 303, locationHas: []string{apps + "email_verification_send_fail.html?"},
			locationQuery: map[string]string{"appId": servertest.AppID, "appName": "Quarry Test"}},
		{name: "resend without a username: the invalid page, redirected", method: "POST", target: fixed(apps + servertest.AppID + "/resend_verification_email"),
			form: url.Values{"locale": {"de"}}, status: 303, locationHas: []string{apps + "email_verification_link_invalid.html?"},
			locationQuery: map[string]string{"locale": "de"}},
		{name: "reset link: the password page with token and username", target: fixed(reset), status: 200,
			bodyHas: []string{"RESET user=ann token=" + token, "Hello ann"}, headers: map[string]string{"x-parse-page-param-token": token}},
		{name: "a bad reset link: the invalid page, de-AT folder", target: fixed(apps + servertest.AppID + "/request_password_reset?token=" + badToken + "&locale=de-AT"),
			status: 200, bodyHas: []string{"UNGUELTIG-AT"}},
		{name: "choose_password shows the form", target: fixed(apps + "choose_password?appId=" + servertest.AppID + "&token=t1&username=ann"),
			status: 200, bodyHas: []string{"RESET user=ann token=t1"}},
		{name: "choose_password of no app", target: fixed(apps + "choose_password"), status: 403},
		{name: "a username with a line break stays out of the headers", target: fixed(apps + "choose_password?appId=" + servertest.AppID + "&username=a%0d%0aSet-Cookie:%20x=1"),
			status: 200, headers: map[string]string{"x-parse-page-param-username": "", "Set-Cookie": ""}},
		{name: "a refused new password: the form again with the error", method: "POST", target: fixed(apps + servertest.AppID + "/request_password_reset"),
			form: url.Values{"username": {"ann"}, "token": {token}, "new_password": {"ann"}}, status: 200,
			bodyHas: []string{"RESET user=ann token=" + token, "error="}},
		{name: "the token of another user", method: "POST", target: fixed(apps + servertest.AppID + "/request_password_reset"),
			form: url.Values{"username": {"bea"}, "token": {token}, "new_password": {password("new")}}, status: 200,
			bodyHas: []string{"RESET user=bea", "error=The link is invalid"}},
		{name: "a form without the password: the invalid page, redirected", method: "POST", target: fixed(apps + servertest.AppID + "/request_password_reset"),
			form: url.Values{"username": {"ann"}, "token": {token}}, status: 303, locationHas: []string{"password_reset_link_invalid.html"}},
		{name: "a script without the password: Parse's 201", method: "POST", target: fixed(apps + servertest.AppID + "/request_password_reset"),
			form: url.Values{"username": {"ann"}, "token": {token}}, header: map[string]string{"X-Requested-With": "XMLHttpRequest"},
			status: 400, bodyHas: []string{`"code":201`, "Missing password"}},
		{name: "a script without the username: Parse's 200", method: "POST", target: fixed(apps + servertest.AppID + "/request_password_reset"),
			form: url.Values{"token": {token}, "new_password": {"x"}}, header: map[string]string{"X-Requested-With": "XMLHttpRequest"},
			status: 400, bodyHas: []string{`"code":200`, "Missing username"}},
		{name: "the new password: the success page", method: "POST", target: fixed(apps + servertest.AppID + "/request_password_reset"),
			form: url.Values{"username": {"ann"}, "token": {token}, "new_password": {password("ann2")}}, status: 200,
			bodyHas: []string{"CHANGED user=ann"}},
		{name: "custom route (GET): the page its function names", target: fixed(apps + servertest.AppID + "/custom_route?locale=de&raw=x"),
			status: 200, bodyHas: []string{"CUSTOM from=GET locale=de"}},
		{name: "custom route (POST) shows the page too", method: "POST", target: fixed(apps + servertest.AppID + "/custom_route"),
			form: url.Values{"a": {"b"}}, status: 200, bodyHas: []string{"CUSTOM from=POST"}},
		{name: "custom route naming no file: 404", target: fixed(apps + servertest.AppID + "/custom_route?none=1"), status: 404,
			bodyHas: []string{"Not found."}},
		{name: "a static page, placeholders filled", target: fixed(apps + "email_verification_send_success.html"), status: 200,
			bodyHas: []string{"SENT"}},
		{name: "comments and sections", target: fixed(apps + "password_reset_link_invalid_comment.html"), status: 200,
			bodyHas: []string{"shown yes"}, bodyHasNot: []string{"hidden", "no"}},
		{name: "a static file is sent as is", target: fixed(apps + "style.css"), status: 200, bodyHas: []string{"{{notFilled}}"}},
		{name: "no file outside the pages folder", target: fixed(apps + "../translations.json"), status: 400, bodyHasNot: []string{"Bonjour"}},
		{name: "resend for an unverified user: sent", method: "POST", target: fixed(apps + servertest.AppID + "/resend_verification_email"),
			form: url.Values{"username": {"dan"}}, status: 303, locationHas: []string{apps + "email_verification_send_success.html?"}},
		{name: "a missing file", target: fixed(apps + "nope.html"), status: 404, bodyHas: []string{"Not found."}},
	})
	// The new password works.
	if res := srv.Do(t, "POST", "/login", map[string]any{"username": "ann", "password": password("ann2")}, app); res.Status != http.StatusOK {
		t.Errorf("login with the new password: %d %s", res.Status, res.Body)
	}
}

// TestScenarioPagesRouterRedirects: forceRedirect and customUrls answer
// every page with a 303 carrying the page parameters; Quarry's own pages
// (no pagesPath) show the flows' pages; and with the router off, its
// keys change nothing, as in Parse Server.
func TestScenarioPagesRouterRedirects(t *testing.T) {
	customURLs := map[string]any{
		"passwordReset":                "https://app.example/reset",
		"emailVerificationLinkExpired": "https://app.example/expired",
	}
	for _, tc := range []struct {
		name  string
		pages map[string]any
	}{
		{name: "forceRedirect and customUrls", pages: map[string]any{"enableRouter": true, "forceRedirect": true, "customUrls": customURLs}},
		{name: "Quarry's own pages", pages: map[string]any{"enableRouter": true, "placeholders": map[string]any{"unused": "x"}}},
		{name: "router off", pages: map[string]any{"enableRouter": false, "forceRedirect": true, "customUrls": customURLs}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			relay := emailtest.Start(t, emailtest.Options{})
			srv := servertest.Start(t, withMail(relay, func(o *config.Options) { o.Pages = tc.pages }))
			app := servertest.App()
			if res := srv.Do(t, "POST", "/users", map[string]any{"username": "gus", "password": password("gus"), "email": "gus@example.com"}, app); res.Status != http.StatusCreated {
				t.Fatalf("sign up: %d %s", res.Status, res.Body)
			}
			verify := mailedLink(t, relay, "gus@example.com", "verify_email")
			if res := srv.Do(t, "POST", "/requestPasswordReset", map[string]any{"email": "gus@example.com"}, app); res.Status != http.StatusOK {
				t.Fatalf("reset: %d %s", res.Status, res.Body)
			}
			reset := mailedLink(t, relay, "gus@example.com", "request_password_reset")
			bad := srv.URL + "/apps/" + servertest.AppID + "/verify_email?token=" + strings.Repeat("0", 32) + "&username=gus"
			apps := srv.URL + "/apps/"
			fixed := func(s string) func() string { return func() string { return s } }
			var cases []pageCase
			switch tc.name {
			case "forceRedirect and customUrls":
				cases = []pageCase{
					{name: "verify: redirected to Quarry's success page", target: fixed(verify), status: 303,
						locationHas:   []string{apps + "email_verification_success.html?"},
						locationQuery: map[string]string{"username": "gus", "appId": servertest.AppID, "appName": "Quarry Test", "publicServerUrl": srv.URL},
						headers:       map[string]string{"x-parse-page-param-username": "gus"}},
					{name: "an expired link: the operator's page", target: fixed(bad), status: 303,
						locationHas: []string{"https://app.example/expired?"}, locationQuery: map[string]string{"username": "gus"}},
					{name: "reset: the operator's page with the token", target: fixed(reset), status: 303,
						locationHas: []string{"https://app.example/reset?"}, locationQuery: map[string]string{"username": "gus", "appId": servertest.AppID}},
					{name: "the redirect's target page is served", target: fixed(apps + "email_verification_success.html?username=gus"), status: 200,
						bodyHas: []string{"Email verified", "Quarry Test"}},
				}
			case "Quarry's own pages":
				cases = []pageCase{
					{name: "verify shows the success page", target: fixed(verify), status: 200, bodyHas: []string{"Email verified", "gus", "Quarry Test"}},
					{name: "an expired link offers a new one", target: fixed(bad), status: 200,
						bodyHas: []string{"Link expired", `name="username" value="gus"`, "/apps/" + servertest.AppID + "/resend_verification_email"}},
					{name: "reset shows the form", target: fixed(reset), status: 200,
						bodyHas:    []string{`name="new_password"`, `name="token"`, "/apps/" + servertest.AppID + "/request_password_reset"},
						bodyHasNot: []string{"{{"}},
				}
			default:
				cases = []pageCase{
					{name: "verify: Quarry's classic redirect", target: fixed(verify), status: 302, locationHas: []string{"/apps/verify_email_success.html"}},
					{name: "reset: Quarry's classic form", target: fixed(reset), status: 302, locationHas: []string{"/apps/choose_password"}},
				}
			}
			runPageCases(t, cases)
		})
	}
}
