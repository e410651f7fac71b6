package transport_test

import (
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/email/emailtest"
	"github.com/quarrydata/quarry/server/servertest"
)

// passwordPolicy.validatorCallback: a cloud function (here JavaScript,
// Parse.Cloud.define) judges every new password, beside validatorPattern.
const passwordValidatorJS = `
Parse.Cloud.define("strongPassword", (req) => {
  const p = req.params.password;
  if (p === "throws-Passw0rd") { throw new Parse.Error(141, "validator broke"); }
  return /[0-9]/.test(p) && /[A-Z]/.test(p) && !p.toLowerCase().includes(req.params.username);
}, { requireMaster: true });
`

func TestScenarioPasswordValidatorCallback(t *testing.T) {
	relay := emailtest.Start(t, emailtest.Options{})
	dir := t.TempDir()
	main := filepath.Join(dir, "main.js")
	if err := os.WriteFile(main, []byte(passwordValidatorJS), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := servertest.Start(t, withMail(relay, func(o *config.Options) {
		o.Cloud = main
		o.Accounts.VerifyUserEmails = false
		o.Accounts.PasswordPolicy = config.PasswordPolicy{ValidatorPattern: `^.{8,}$`, ValidatorCallback: "strongPassword",
			ValidationError: "Use 8 characters, a digit and a capital, without your name."}
	}))
	app := servertest.App()
	refused := msgIs(142, "Use 8 characters, a digit and a capital, without your name.")
	signUpAs := func(name, pw string) map[string]any {
		return map[string]any{"username": name, "password": pw, "email": name + "@example.com"}
	}
	var token string
	runScenarios(t, srv, []scenario{
		{name: "a weak password is refused at sign-up", method: "POST", path: "/users", headers: app,
			body: signUpAs("kim", "weakpassword"), expectedStatus: 400, check: refused},
		{name: "the pattern still applies first", method: "POST", path: "/users", headers: app,
			body: signUpAs("kim", "Sh0rt"), expectedStatus: 400, check: refused},
		{name: "the function sees the username", method: "POST", path: "/users", headers: app,
			body: signUpAs("kim", "Kim-Passw0rd"), expectedStatus: 400, check: refused},
		{name: "a validator that throws refuses", method: "POST", path: "/users", headers: app,
			body: signUpAs("kim", "throws-Passw0rd"), expectedStatus: 400, check: refused},
		{name: "a strong password is accepted", method: "POST", path: "/users", headers: app,
			body: signUpAs("kim", "Strong-Passw0rd"), expectedStatus: 201, check: capture("sessionToken", &token)},
		{name: "clients cannot call the validator without the master key", method: "POST", path: "/functions/strongPassword", headers: app,
			body: map[string]any{"password": "x", "username": "y"}, expectedStatus: 400, check: codeIs(142)},
	})
	if t.Failed() {
		return
	}
	runScenarios(t, srv, []scenario{
		{name: "a weak new password is refused on update", method: "PUT", path: "/users/me", headers: asUser(token),
			body: map[string]any{"password": "weakpassword"}, expectedStatus: 400, check: refused},
		{name: "reset request", method: "POST", path: "/requestPasswordReset", headers: app,
			body: map[string]any{"email": "kim@example.com"}, expectedStatus: 200},
	})
	link := mailedLink(t, relay, "kim@example.com", "request_password_reset")
	token0 := strings.SplitN(link, "token=", 2)[1]
	action := srv.URL + "/apps/" + servertest.AppID + "/request_password_reset"
	redirectsTo(t, "POST", action, url.Values{"token": {token0}, "new_password": {"weakpassword"}}, "choose_password.html",
		map[string]string{"error": "Use 8 characters, a digit and a capital, without your name."})
	redirectsTo(t, "POST", action, url.Values{"token": {token0}, "new_password": {"Reset-Passw0rd"}}, "password_reset_success.html", nil)
	runScenarios(t, srv, []scenario{
		{name: "login with the reset password", method: "POST", path: "/login", headers: app,
			body: loginBody("kim", "Reset-Passw0rd"), expectedStatus: 200},
	})
}

// Options naming cloud functions that do not exist are warned about at
// start-up; a password is then refused (the validator fails closed).
func TestMissingValidatorFunctionWarned(t *testing.T) {
	var logs strings.Builder
	var mu sync.Mutex
	log := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logs.Write(p)
	}), nil))
	srv := servertest.StartLogged(t, log, func(o *config.Options) {
		o.Accounts.PasswordPolicy.ValidatorCallback = "noSuchFunction"
		o.Auth.Providers = map[string]any{"acme": map[string]any{"cloudFunction": "noSuchAdapter"}}
	})
	runScenarios(t, srv, []scenario{
		{name: "fails closed", method: "POST", path: "/users", headers: servertest.App(),
			body: map[string]any{"username": "max", "password": "Any-Passw0rd"}, expectedStatus: 400, check: codeIs(142)},
	})
	mu.Lock()
	defer mu.Unlock()
	for _, want := range []string{"option=passwordPolicy.validatorCallback function=noSuchFunction",
		"option=auth.acme.cloudFunction function=noSuchAdapter",
		"passwordPolicy.validatorCallback noSuchFunction refused a password with an error"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, logs.String())
		}
	}
	if strings.Contains(logs.String(), "Any-Passw0rd") {
		t.Error("the log holds the password")
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
