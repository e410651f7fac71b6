package transport_test

import (
	"strings"
	"testing"
	"time"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/email/emailtest"
	"github.com/quarrydata/quarry/server/servertest"
)

// Emails wait in the retry queue while the relay is down: the reply does
// not wait, the metrics show the email waiting, and it goes out once the
// relay is back.
func TestScenarioEmailRetriedWhileRelayDown(t *testing.T) {
	relay := emailtest.Start(t, emailtest.Options{})
	srv := servertest.Start(t, withMail(relay, func(o *config.Options) {
		o.Accounts.VerifyUserEmails = false
		o.Accounts.EmailAdapter.Options.FirstRetry = 5 * time.Millisecond
	}))
	signUp(t, srv, "lena", "lena@example.com")
	relay.Stop()
	runScenarios(t, srv, []scenario{
		{name: "reset requested while the relay is down", method: "POST", path: "/requestPasswordReset", headers: servertest.App(),
			body: map[string]any{"email": "lena@example.com"}, expectedStatus: 200},
	})
	waitFor(t, "a failed try", func() bool {
		m := scrape(t, srv)
		return m["quarry_email_retries_total"] >= 1 && m["quarry_email_queue_depth"] == 1
	})
	relay.Restart(t)
	if link := mailedLink(t, relay, "lena@example.com", "request_password_reset"); !strings.Contains(link, "token=") {
		t.Fatalf("link %q", link)
	}
	waitFor(t, "the queue empties", func() bool {
		m := scrape(t, srv)
		return m["quarry_email_queue_depth"] == 0 && m["quarry_email_sent_total"] == 1 && m["quarry_email_dropped_total"] == 0
	})
}

// waitFor polls cond until it holds, failing after 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
