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

// The limit on wrong second factors: auth.mfa.maxAttempts wrong codes
// within attemptWindow lock MFA logins and challenges for lockoutDuration,
// on a clock the test moves.

// mfaLimitServer starts a server whose mfa provider has the given limit,
// and enrols "ivy" with TOTP; it returns the recovery codes.
func mfaLimitServer(t *testing.T, clock *testClock, limit map[string]any) (*servertest.Server, []string) {
	t.Helper()
	p := authtest.Start(t)
	srv := authServer(t, p, func(o *config.Options) {
		o.Now = clock.Now
		mfa := map[string]any{"enabled": true, "options": []any{"TOTP"}}
		for k, v := range limit {
			mfa[k] = v
		}
		o.Auth.Providers["mfa"] = mfa
	})
	id, _ := signUp(t, srv, "ivy", "")
	res := srv.Do(t, "PUT", "/users/"+id, authBody("mfa", map[string]any{"secret": mfaSecret, "token": totpAt(t, clock.Now())}),
		asUser(loginOf(t, srv, "ivy")))
	if res.Status != 200 {
		t.Fatalf("enrolment: %d %s", res.Status, clip(string(res.Body)))
	}
	ad, _ := res.Map()["authDataResponse"].(map[string]any)
	m, _ := ad["mfa"].(map[string]any)
	codes, _ := m["recovery"].(string)
	return srv, strings.Split(codes, ", ")
}

func totpAt(t testing.TB, now time.Time) string {
	t.Helper()
	code, err := auth.TOTP{Digits: 6, Period: 30, Algorithm: "SHA1"}.Code(mfaSecret, now)
	if err != nil {
		t.Fatal(err)
	}
	return code
}

func ivyLogin(token string) map[string]any {
	return map[string]any{"username": "ivy", "password": "pw-ivy", "authData": map[string]any{"mfa": map[string]any{"token": token}}}
}

// limitStep is a request, its body made when it runs (codes of the
// moment), and how far the clock moves after it.
type limitStep struct {
	sc      scenario
	body    func() map[string]any
	advance time.Duration
}

func TestScenarioMFAAttemptLimit(t *testing.T) {
	clock := newClock()
	srv, recovery := mfaLimitServer(t, clock, map[string]any{"maxAttempts": 3, "attemptWindow": 60, "lockoutDuration": 120})
	if len(recovery) != auth.RecoveryCodes {
		t.Fatalf("recovery codes %q", recovery)
	}
	app := servertest.App()
	wrong := msgIs(210, "Invalid MFA token")
	locked := msgIs(210, "Too many failed MFA attempts. Please try again after 2 minute(s).")
	challenge := map[string]any{"username": "ivy", "password": "pw-ivy", "challengeData": map[string]any{"mfa": map[string]any{}}}
	step := func(name string, body func() map[string]any, status int, check func(testing.TB, servertest.Response), advance time.Duration) limitStep {
		return limitStep{scenario{name: name, method: "POST", path: "/login", headers: app, expectedStatus: status, check: check}, body, advance}
	}
	code := func(c string) func() map[string]any { return func() map[string]any { return ivyLogin(c) } }
	current := func() map[string]any { return ivyLogin(totpAt(t, clock.Now())) }
	steps := []limitStep{
		step("wrong code 1", code("000000"), 400, wrong, 0),
		step("wrong recovery code 2", code("AAAAAAAAAAAAAAAAAAAA"), 400, wrong, 61*time.Second),
		step("after the window the count starts over: 1", code("000000"), 400, wrong, 0),
		step("2", code("000000"), 400, wrong, 0),
		step("3 locks, still answered as a wrong code", code("000000"), 400, wrong, 0),
		step("the right code is refused while locked", current, 400, locked, 0),
		step("so is a recovery code (and it is not spent)", code(recovery[0]), 400, locked, 0),
		{sc: scenario{name: "and a challenge", method: "POST", path: "/challenge", headers: app, body: challenge,
			expectedStatus: 400, check: locked}, advance: 121 * time.Second},
		step("after the lock the right code logs in", current, 200, nil, 0),
		step("wrong 1 after a success", code("000000"), 400, wrong, 0),
		step("wrong 2", code("000000"), 400, wrong, 0),
		step("a right code clears the count", code(recovery[0]), 200, nil, 0),
		step("wrong 1 again, not 3", code("000000"), 400, wrong, 0),
		step("wrong 2 again", code("000000"), 400, wrong, 0),
		step("and a right code still logs in", current, 200, nil, 0),
	}
	for _, st := range steps {
		sc := st.sc
		if st.body != nil {
			sc.body = st.body()
		}
		t.Run(sc.name, func(t *testing.T) { sc.run(t, srv) })
		clock.Add(st.advance)
	}
}

// Parallel guesses each count: of a burst of wrong codes exactly
// maxAttempts are answered as wrong and the rest as locked.
func TestScenarioMFAAttemptLimitParallel(t *testing.T) {
	clock := newClock()
	srv, _ := mfaLimitServer(t, clock, map[string]any{"maxAttempts": 3})
	const guesses = 12
	var wg sync.WaitGroup
	var mu sync.Mutex
	answers := map[string]int{}
	for i := range guesses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := srv.Do(t, "POST", "/login", ivyLogin(string(rune('a'+i))+"00000"), servertest.App())
			msg, _ := res.Map()["error"].(string)
			mu.Lock()
			answers[msg]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if answers["Invalid MFA token"] != 3 || answers["Too many failed MFA attempts. Please try again after 15 minute(s)."] != guesses-3 {
		t.Fatalf("answers %v: want 3 wrong and %d locked", answers, guesses-3)
	}
	runScenarios(t, srv, []scenario{
		{name: "the right code is refused after the burst", method: "POST", path: "/login", headers: servertest.App(),
			body: ivyLogin(totpAt(t, clock.Now())), expectedStatus: 400, check: codeIs(210)},
	})
}

func TestScenarioMFAAttemptLimitOff(t *testing.T) {
	clock := newClock()
	srv, _ := mfaLimitServer(t, clock, map[string]any{"maxAttempts": 0})
	for range auth.DefaultMFAMaxAttempts + 2 {
		if res := srv.Do(t, "POST", "/login", ivyLogin("000000"), servertest.App()); res.Status != 400 {
			t.Fatalf("wrong code: %d", res.Status)
		}
	}
	runScenarios(t, srv, []scenario{
		{name: "with maxAttempts 0 nothing locks", method: "POST", path: "/login", headers: servertest.App(),
			body: ivyLogin(totpAt(t, clock.Now())), expectedStatus: 200},
	})
}

// SMS codes count too, and a locked account's challenge sends no SMS.
func TestScenarioMFAAttemptLimitSMS(t *testing.T) {
	var mu sync.Mutex
	sent := []string{}
	reg := cloud.New(nil, 0)
	reg.Define("sendMFASMS", func(_ context.Context, req *cloud.FunctionRequest) (any, error) {
		mu.Lock()
		defer mu.Unlock()
		sent = append(sent, req.Params["code"].(string))
		return nil, nil
	})
	last := func() (string, int) { mu.Lock(); defer mu.Unlock(); return sent[len(sent)-1], len(sent) }
	srv := servertest.StartCloud(t, nil, reg, func(o *config.Options) {
		o.Auth.Providers = map[string]any{"mfa": map[string]any{"enabled": true, "options": []any{"SMS"},
			"smsFunction": "sendMFASMS", "maxAttempts": 2}}
	})
	app := servertest.App()
	id, _ := signUp(t, srv, "nia", "")
	nia := asUser(loginOf(t, srv, "nia"))
	const mobile = "+15550111"
	for _, body := range []func() map[string]any{
		func() map[string]any { return authBody("mfa", map[string]any{"mobile": mobile}) },
		func() map[string]any {
			code, _ := last()
			return authBody("mfa", map[string]any{"mobile": mobile, "token": code})
		},
	} {
		if res := srv.Do(t, "PUT", "/users/"+id, body(), nia); res.Status != 200 {
			t.Fatalf("enrolment: %d %s", res.Status, clip(string(res.Body)))
		}
	}
	challenge := map[string]any{"username": "nia", "password": "pw-nia", "challengeData": map[string]any{"mfa": map[string]any{}}}
	login := func(code string) map[string]any {
		return map[string]any{"username": "nia", "password": "pw-nia", "authData": map[string]any{"mfa": map[string]any{"token": code}}}
	}
	runScenarios(t, srv, []scenario{
		{name: "challenge sends a code", method: "POST", path: "/challenge", headers: app, body: challenge, expectedStatus: 200},
	})
	code, sends := last()
	runScenarios(t, srv, []scenario{
		{name: "wrong code 1", method: "POST", path: "/login", headers: app, body: login("000000"), expectedStatus: 400, check: msgIs(210, "Invalid MFA token")},
		{name: "wrong code 2 locks", method: "POST", path: "/login", headers: app, body: login("000001"), expectedStatus: 400, check: msgIs(210, "Invalid MFA token")},
		{name: "the code sent is refused while locked", method: "POST", path: "/login", headers: app, body: login(code),
			expectedStatus: 400, check: msgIs(210, "Too many failed MFA attempts. Please try again after 15 minute(s).")},
		{name: "a challenge is refused while locked", method: "POST", path: "/challenge", headers: app, body: challenge,
			expectedStatus: 400, check: codeIs(210)},
	})
	if _, n := last(); n != sends {
		t.Errorf("%d SMS sent while locked", n-sends)
	}
}
