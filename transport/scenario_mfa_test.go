package transport_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quarrydata/quarry/auth"
	"github.com/quarrydata/quarry/auth/authtest"
	"github.com/quarrydata/quarry/cloud"
	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server/servertest"
)

// Multi-factor sign-in (the mfa provider, TOTP): enrolment through
// authData.mfa, logins that need the second factor, recovery codes, and
// POST /challenge.

const mfaSecret = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"

func totpNow(t testing.TB) string {
	t.Helper()
	code, err := auth.TOTP{Digits: 6, Period: 30, Algorithm: "SHA1"}.Code(mfaSecret, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return code
}

func TestScenarioMFA(t *testing.T) {
	p := authtest.Start(t)
	srv := authServer(t, p, nil)
	app := servertest.App()
	id, _ := signUp(t, srv, "erin", "")
	otherID, _ := signUp(t, srv, "frank", "")
	erin := asUser(loginOf(t, srv, "erin"))
	frank := asUser(loginOf(t, srv, "frank"))
	login := func(extra map[string]any) map[string]any {
		body := map[string]any{"username": "erin", "password": "pw-erin"}
		for k, v := range extra {
			body[k] = v
		}
		return body
	}
	mfaToken := func(token string) map[string]any {
		return map[string]any{"authData": map[string]any{"mfa": map[string]any{"token": token}}}
	}
	var recovery []string
	runScenarios(t, srv, []scenario{
		{name: "enrol with a wrong token", method: "PUT", path: "/users/" + otherID, headers: frank,
			body:           authBody("mfa", map[string]any{"secret": mfaSecret, "token": "abcdef"}),
			expectedStatus: 400, check: msgIs(210, "Invalid MFA token")},
		{name: "enrol with a short secret", method: "PUT", path: "/users/" + otherID, headers: frank,
			body:           authBody("mfa", map[string]any{"secret": "JBSWY3DP", "token": "123456"}),
			expectedStatus: 400, check: msgIs(210, "Invalid MFA secret")},
		{name: "enrol", method: "PUT", path: "/users/" + id, headers: erin,
			body:           authBody("mfa", map[string]any{"secret": mfaSecret, "token": totpNow(t)}),
			expectedStatus: 200, expectedContains: []string{`"authDataResponse":{"mfa":{"recovery":"`},
			check: func(t testing.TB, res servertest.Response) {
				ad, _ := res.Map()["authDataResponse"].(map[string]any)
				m, _ := ad["mfa"].(map[string]any)
				s, _ := m["recovery"].(string)
				recovery = strings.Split(s, ", ")
				if len(recovery) != auth.RecoveryCodes {
					t.Errorf("recovery codes %q", s)
				}
			}},
		{name: "authData shows only the status", method: "GET", path: "/users/me", headers: erin,
			expectedStatus: 200, expectedContains: []string{`"mfa":{"status":"enabled"}`}, notExpectedContains: []string{mfaSecret, "_mfa"}},
		{name: "enrolling again is refused", method: "PUT", path: "/users/" + id, headers: erin,
			body:           authBody("mfa", map[string]any{"secret": mfaSecret, "token": totpNow(t)}),
			expectedStatus: 400, check: codeIs(210)},
		{name: "saving the shown status changes nothing", method: "PUT", path: "/users/" + id, headers: erin,
			body: authBody("mfa", map[string]any{"status": "enabled"}), expectedStatus: 200},
		{name: "login without the second factor", method: "POST", path: "/login", headers: app,
			body: login(nil), expectedStatus: 400, check: msgIs(211, "Missing additional authData mfa")},
		{name: "login with a wrong code", method: "POST", path: "/login", headers: app,
			body: login(mfaToken("abcdef")), expectedStatus: 400, check: msgIs(210, "Invalid MFA token")},
		{name: "login with the current code", method: "POST", path: "/login", headers: app,
			body: login(mfaToken(totpNow(t))), expectedStatus: 200, expectedContains: []string{`"sessionToken":"r:`}},
		{name: "verifyPassword needs no second factor", method: "POST", path: "/verifyPassword", headers: app,
			body: login(nil), expectedStatus: 200},
		{name: "challenge", method: "POST", path: "/challenge", headers: app,
			body:           login(map[string]any{"challengeData": map[string]any{"mfa": map[string]any{}}}),
			expectedStatus: 200, expectedContains: []string{`{"challengeData":{"mfa":true}}`}},
		{name: "challenge with a wrong password", method: "POST", path: "/challenge", headers: app,
			body:           map[string]any{"username": "erin", "password": "nope", "challengeData": map[string]any{"mfa": map[string]any{}}},
			expectedStatus: 404, check: codeIs(101)},
		{name: "challenge without challengeData", method: "POST", path: "/challenge", headers: app,
			body: login(nil), expectedStatus: 400, check: msgIs(-1, "Nothing to challenge.")},
		{name: "challenge of an unknown provider", method: "POST", path: "/challenge", headers: app,
			body:           login(map[string]any{"challengeData": map[string]any{"sms": map[string]any{}}}),
			expectedStatus: 400, check: codeIs(252)},
	})
	if len(recovery) == 0 {
		return
	}
	runScenarios(t, srv, []scenario{
		{name: "login with a recovery code", method: "POST", path: "/login", headers: app,
			body: login(mfaToken(recovery[0])), expectedStatus: 200},
		{name: "a recovery code works once", method: "POST", path: "/login", headers: app,
			body: login(mfaToken(recovery[0])), expectedStatus: 400, check: codeIs(210)},
		{name: "the other recovery code still works", method: "POST", path: "/login", headers: app,
			body: login(mfaToken(recovery[1])), expectedStatus: 200},
		{name: "link google", method: "PUT", path: "/users/" + id, headers: erin,
			body: authBody("google", map[string]any{"id": "g-erin", "id_token": p.IDToken(t, authtest.RSA, map[string]any{"sub": "g-erin"})}), expectedStatus: 200},
		{name: "google login needs the second factor too", method: "POST", path: "/users", headers: app,
			body:           authBody("google", map[string]any{"id": "g-erin", "id_token": p.IDToken(t, authtest.RSA, map[string]any{"sub": "g-erin"})}),
			expectedStatus: 400, check: msgIs(211, "Missing additional authData mfa")},
		{name: "google login with the code", method: "POST", path: "/users", headers: app,
			body: map[string]any{"authData": map[string]any{
				"google": map[string]any{"id": "g-erin", "id_token": p.IDToken(t, authtest.RSA, map[string]any{"sub": "g-erin"})},
				"mfa":    map[string]any{"token": totpNow(t)}}},
			expectedStatus: 200, expectedContains: []string{`"objectId":"` + id + `"`}},
		{name: "turn mfa off", method: "PUT", path: "/users/" + id, headers: erin,
			body: map[string]any{"authData": map[string]any{"mfa": nil}}, expectedStatus: 200},
		{name: "login needs one factor again", method: "POST", path: "/login", headers: app,
			body: login(nil), expectedStatus: 200},
	})
}

// SMS as the second factor: the codes go out through a cloud function
// (smsFunction), here defined in Go and keeping the last code per number.
func TestScenarioMFASMS(t *testing.T) {
	var mu sync.Mutex
	sent := map[string]string{}
	lastCode := func(mobile string) string {
		mu.Lock()
		defer mu.Unlock()
		return sent[mobile]
	}
	reg := cloud.New(nil, 0)
	reg.Define("sendMFASMS", func(_ context.Context, req *cloud.FunctionRequest) (any, error) {
		mu.Lock()
		defer mu.Unlock()
		sent[req.Params["mobile"].(string)] = req.Params["code"].(string)
		return nil, nil
	})
	srv := servertest.StartCloud(t, nil, reg, func(o *config.Options) {
		o.Auth.Providers = map[string]any{"mfa": map[string]any{"enabled": true, "options": []any{"SMS"}, "smsFunction": "sendMFASMS"}}
	})
	app := servertest.App()
	const mobile = "+15550100"
	id, _ := signUp(t, srv, "gina", "")
	gina := asUser(loginOf(t, srv, "gina"))
	login := map[string]any{"username": "gina", "password": "pw-gina"}
	withToken := func(code func() string) func() map[string]any {
		return func() map[string]any {
			return map[string]any{"username": "gina", "password": "pw-gina", "authData": map[string]any{"mfa": map[string]any{"token": code()}}}
		}
	}
	steps := []struct {
		sc   scenario
		body func() map[string]any // computed when the step runs (codes sent by earlier steps)
	}{
		{sc: scenario{name: "TOTP is off", method: "PUT", path: "/users/" + id, headers: gina,
			body: authBody("mfa", map[string]any{"secret": mfaSecret, "token": "123456"}), expectedStatus: 400, check: codeIs(210)}},
		{sc: scenario{name: "saving the number sends a code", method: "PUT", path: "/users/" + id, headers: gina,
			body: authBody("mfa", map[string]any{"mobile": mobile}), expectedStatus: 200,
			check: func(t testing.TB, _ servertest.Response) {
				if lastCode(mobile) == "" {
					t.Error("no code sent")
				}
			}}},
		{sc: scenario{name: "a wrong code does not enrol", method: "PUT", path: "/users/" + id, headers: gina,
			body: authBody("mfa", map[string]any{"mobile": mobile, "token": "abcdef"}), expectedStatus: 400, check: codeIs(210)}},
		{sc: scenario{name: "the code sent enrols the number", method: "PUT", path: "/users/" + id, headers: gina, expectedStatus: 200},
			body: func() map[string]any {
				return authBody("mfa", map[string]any{"mobile": mobile, "token": lastCode(mobile)})
			}},
		{sc: scenario{name: "the number is not shown", method: "GET", path: "/users/me", headers: gina, expectedStatus: 200,
			expectedContains: []string{`"mfa":{"status":"enabled"}`}, notExpectedContains: []string{mobile}}},
		{sc: scenario{name: "login needs a code", method: "POST", path: "/login", headers: app, body: login,
			expectedStatus: 400, check: msgIs(211, "Missing additional authData mfa")}},
		{sc: scenario{name: "the enrolment code is spent", method: "POST", path: "/login", headers: app, expectedStatus: 400, check: codeIs(210)},
			body: withToken(func() string { return lastCode(mobile) })},
		{sc: scenario{name: "challenge sends a login code", method: "POST", path: "/challenge", headers: app,
			body:           map[string]any{"username": "gina", "password": "pw-gina", "challengeData": map[string]any{"mfa": map[string]any{}}},
			expectedStatus: 200, expectedContains: []string{`{"challengeData":{"mfa":true}}`}}},
		{sc: scenario{name: "login with the code", method: "POST", path: "/login", headers: app, expectedStatus: 200},
			body: withToken(func() string { return lastCode(mobile) })},
		{sc: scenario{name: "the login code works once", method: "POST", path: "/login", headers: app, expectedStatus: 400, check: codeIs(210)},
			body: withToken(func() string { return lastCode(mobile) })},
	}
	for _, st := range steps {
		sc := st.sc
		if st.body != nil {
			sc.body = st.body()
		}
		t.Run(sc.name, func(t *testing.T) { sc.run(t, srv) })
	}
}
