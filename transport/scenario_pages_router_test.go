package transport_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/email/emailtest"
	"github.com/quarrydata/quarry/server/servertest"
)

// TestScenarioPagesRouterCustomURLs: with Parse Server's pages router
// (pages.enableRouter) the email links lead to the operator's customUrls,
// by the router's page ids, with its page parameters; pages not listed stay
// Quarry's own. Without enableRouter, customUrls change nothing, as in
// Parse Server.
func TestScenarioPagesRouterCustomURLs(t *testing.T) {
	customURLs := map[string]any{
		"passwordReset":                "https://app.example/reset",
		"emailVerificationLinkExpired": "https://app.example/expired",
		"emailVerificationSuccess":     "https://app.example/verified",
	}
	for _, router := range []bool{true, false} {
		relay := emailtest.Start(t, emailtest.Options{})
		srv := servertest.Start(t, withMail(relay, func(o *config.Options) {
			o.Pages = map[string]any{"enableRouter": router, "customUrls": customURLs}
		}))
		app := servertest.App()
		if res := srv.Do(t, "POST", "/users", map[string]any{"username": "gus", "password": password("gus"), "email": "gus@example.com"}, app); res.Status != http.StatusCreated {
			t.Fatalf("sign up: %d %s", res.Status, res.Body)
		}
		verify := mailedLink(t, relay, "gus@example.com", "verify_email")
		bad := srv.URL + "/apps/" + servertest.AppID + "/verify_email?token=" + strings.Repeat("0", 32)
		if res := srv.Do(t, "POST", "/requestPasswordReset", map[string]any{"email": "gus@example.com"}, app); res.Status != http.StatusOK {
			t.Fatalf("reset: %d %s", res.Status, res.Body)
		}
		reset := mailedLink(t, relay, "gus@example.com", "request_password_reset")

		if !router {
			redirectsTo(t, "GET", bad, nil, "/apps/invalid_verification_link.html", nil)
			redirectsTo(t, "GET", reset, nil, "/apps/choose_password", nil)
			redirectsTo(t, "GET", verify, nil, "/apps/verify_email_success.html", nil)
			continue
		}
		// An invalid link goes to the expired link's page (Quarry has one page for both).
		loc := redirectsTo(t, "GET", bad, nil, "https://app.example/expired?", map[string]string{
			"appId": servertest.AppID, "appName": "Quarry Test", "publicServerUrl": srv.URL})
		if !strings.HasPrefix(loc, "https://app.example/expired?") {
			t.Errorf("invalid link went to %s", loc)
		}
		loc = redirectsTo(t, "GET", reset, nil, "https://app.example/reset?", map[string]string{
			"username": "gus", "appId": servertest.AppID})
		if !strings.Contains(loc, "token=") {
			t.Errorf("reset page %s carries no token", loc)
		}
		redirectsTo(t, "GET", verify, nil, "https://app.example/verified?", map[string]string{"username": "gus"})
		// A page without a custom URL stays Quarry's.
		badReset := srv.URL + "/apps/" + servertest.AppID + "/request_password_reset?token=" + strings.Repeat("0", 32)
		redirectsTo(t, "GET", badReset, nil, srv.URL+"/apps/invalid_link.html", map[string]string{"appId": servertest.AppID})
	}
}
