package transport_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quarrydata/quarry/auth"
	"github.com/quarrydata/quarry/auth/authtest"
	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/server/servertest"
)

// Third-party sign-in: sign-up or login with authData (anonymous, id
// tokens checked against a JWKS, access tokens checked at the provider),
// linking, unlinking, and who sees authData. The providers are fakes on
// 127.0.0.1 (auth/authtest) speaking the real protocols.

// authServer starts a server whose auth option points every provider at
// the fake p.
func authServer(t *testing.T, p *authtest.Provider, edit func(*config.Options)) *servertest.Server {
	t.Helper()
	return servertest.Start(t, func(o *config.Options) {
		o.Auth.Providers = map[string]any{
			"google": map[string]any{"clientId": authtest.ClientID, "jwksUri": p.URL + "/jwks", "issuer": authtest.Issuer},
			"apple":  map[string]any{"clientId": []any{"com.example.other", authtest.ClientID}, "jwksUri": p.URL + "/jwks", "issuer": authtest.Issuer},
			"facebook": map[string]any{"appIds": []any{authtest.FacebookAppID}, "graphURL": p.URL,
				"jwksUri": p.URL + "/jwks", "issuer": authtest.Issuer},
			"github": map[string]any{"clientId": authtest.ClientID, "clientSecret": authtest.ClientSecret,
				"apiURL": p.URL, "oauthURL": p.URL},
			"microsoft": map[string]any{"graphURL": p.URL},
			"twitter": map[string]any{"consumer_key": authtest.ConsumerKey, "consumer_secret": authtest.ConsumerSecret,
				"apiURL": p.URL},
			"corp": map[string]any{"oauth2": true, "tokenIntrospectionEndpointUrl": p.URL + "/introspect",
				"authorizationHeader": authtest.IntrospectAuth, "appIds": []any{authtest.ClientID}, "appidField": "client_id"},
			"corpoidc": map[string]any{"oauth2": true, "jwksUri": p.URL + "/jwks", "issuer": authtest.Issuer, "clientId": authtest.ClientID},
			"mfa":      map[string]any{"enabled": true, "options": []any{"TOTP"}},
		}
		if edit != nil {
			edit(o)
		}
	})
}

func authBody(provider string, entry map[string]any) map[string]any {
	return map[string]any{"authData": map[string]any{provider: entry}}
}

// capture stores a reply key's string value.
func capture(key string, into *string) func(testing.TB, servertest.Response) {
	return func(t testing.TB, res servertest.Response) {
		t.Helper()
		s, _ := res.Map()[key].(string)
		if s == "" {
			t.Fatalf("reply lacks %s: %s", key, clip(string(res.Body)))
		}
		*into = s
	}
}

func TestScenarioAuthDataIDToken(t *testing.T) {
	p := authtest.Start(t)
	srv := authServer(t, p, nil)
	app := servertest.App()
	good := p.IDToken(t, authtest.RSA, map[string]any{"sub": "g-1"})
	var userID, token, login2 string
	runScenarios(t, srv, []scenario{
		{name: "sign up with a valid id token", method: "POST", path: "/users", headers: app,
			body:             authBody("google", map[string]any{"id": "g-1", "id_token": good}),
			expectedStatus:   201,
			expectedContains: []string{`"username":`, `"sessionToken":"r:`},
			check: checkAll(capture("objectId", &userID), capture("sessionToken", &token), func(t testing.TB, res servertest.Response) {
				if u, _ := res.Map()["username"].(string); len(u) != 25 {
					t.Errorf("made-up username %q: want 25 characters", u)
				}
			})},
		{name: "the same authData logs the same user in", method: "POST", path: "/users", headers: app,
			body:             authBody("google", map[string]any{"id": "g-1", "id_token": good}),
			expectedStatus:   200,
			expectedContains: []string{`"authData":{"google":{"id":"g-1"}}`, `"sessionToken":"r:`, `"createdAt"`},
			check: func(t testing.TB, res servertest.Response) {
				if res.Map()["objectId"] != userID {
					t.Errorf("logged in %v, want %s", res.Map()["objectId"], userID)
				}
				login2 = tokenOf(res)
			}},
		{name: "wrong audience", method: "POST", path: "/users", headers: app,
			body: authBody("google", map[string]any{"id": "g-1",
				"id_token": p.IDToken(t, authtest.RSA, map[string]any{"sub": "g-1", "aud": "someone-else"})}),
			expectedStatus: 400, check: msgIs(251, "google: id token not issued for this client.")},
		{name: "wrong issuer", method: "POST", path: "/users", headers: app,
			body: authBody("google", map[string]any{"id": "g-1",
				"id_token": p.IDToken(t, authtest.RSA, map[string]any{"sub": "g-1", "iss": "https://evil.test"})}),
			expectedStatus: 400, check: msgIs(251, "google: id token not issued by correct OpenID provider.")},
		{name: "expired", method: "POST", path: "/users", headers: app,
			body: authBody("google", map[string]any{"id": "g-1",
				"id_token": p.IDToken(t, authtest.RSA, map[string]any{"sub": "g-1", "exp": time.Now().Add(-time.Hour).Unix()})}),
			expectedStatus: 400, check: msgIs(251, "google: id token expired.")},
		{name: "wrong signature", method: "POST", path: "/users", headers: app,
			body:           authBody("google", map[string]any{"id": "g-1", "id_token": p.IDToken(t, authtest.Rogue, map[string]any{"sub": "g-1"})}),
			expectedStatus: 400, check: msgIs(251, "google: id token not verified.")},
		{name: "tampered payload", method: "POST", path: "/users", headers: app,
			body:           authBody("google", map[string]any{"id": "g-1", "id_token": tamper(good)}),
			expectedStatus: 400, check: msgIs(251, "google: id token not verified.")},
		{name: "subject is not authData.id", method: "POST", path: "/users", headers: app,
			body:           authBody("google", map[string]any{"id": "g-2", "id_token": good}),
			expectedStatus: 400, check: msgIs(251, "google: auth data is invalid for this user.")},
		{name: "no id", method: "POST", path: "/users", headers: app,
			body:           authBody("google", map[string]any{"id_token": good}),
			expectedStatus: 400, check: codeIs(250)},
		{name: "no token", method: "POST", path: "/users", headers: app,
			body:           authBody("google", map[string]any{"id": "g-1"}),
			expectedStatus: 400, check: codeIs(251)},
		{name: "EC-signed token, one of several client ids", method: "POST", path: "/users", headers: app,
			body: authBody("apple", map[string]any{"id": "a-1",
				"id_token": p.IDToken(t, authtest.EC, map[string]any{"sub": "a-1"})}),
			expectedStatus: 201},
		{name: "generic OIDC provider", method: "POST", path: "/users", headers: app,
			body: authBody("corpoidc", map[string]any{"id": "c-1",
				"id_token": p.IDToken(t, authtest.RSA, map[string]any{"sub": "c-1"})}),
			expectedStatus: 201},
		{name: "provider not configured", method: "POST", path: "/users", headers: app,
			body:           authBody("linkedin", map[string]any{"id": "l-1", "access_token": "x"}),
			expectedStatus: 400, check: msgIs(252, "This authentication method is unsupported.")},
		{name: "authData null", method: "POST", path: "/users", headers: app,
			body: map[string]any{"authData": nil}, expectedStatus: 400, check: codeIs(252)},
		{name: "authData entry not an object", method: "POST", path: "/users", headers: app,
			body: map[string]any{"authData": map[string]any{"google": "g-1"}}, expectedStatus: 400, check: codeIs(253)},
	})
	if t.Failed() {
		return
	}
	other, _ := signUp(t, srv, "bob", "bob@example.com")
	runScenarios(t, srv, []scenario{
		{name: "the login's session is a login session", method: "GET", path: "/sessions/me", headers: asUser(login2),
			expectedStatus: 200, expectedContains: []string{`"createdWith":{"action":"login","authProvider":"google"}`}},
		{name: "own user shows authData", method: "GET", path: "/users/me", headers: asUser(token),
			expectedStatus: 200, expectedContains: []string{`"authData":{"google":{"id":"g-1"}}`}},
		{name: "another user never sees authData", method: "GET", path: "/users/" + userID, headers: asUser(loginOf(t, srv, "bob")),
			expectedStatus: 200, notExpectedContains: []string{"authData", "g-1"}},
		{name: "nor does a query", method: "GET", path: "/users", headers: app,
			expectedStatus: 200, notExpectedContains: []string{"authData"}},
		{name: "linking authData of another user", method: "PUT", path: "/users/" + other, headers: asUser(loginOf(t, srv, "bob")),
			body:           authBody("google", map[string]any{"id": "g-1", "id_token": good}),
			expectedStatus: 400, check: msgIs(208, "this auth is already used")},
		{name: "a dotted authData key is refused", method: "PUT", path: "/users/" + other, headers: asUser(loginOf(t, srv, "bob")),
			body:           map[string]any{"authData.google.id": "g-1"},
			expectedStatus: 400, check: codeIs(105)},
	})
}

// tamper changes one character of a token's payload, keeping its signature.
func tamper(token string) string {
	parts := strings.Split(token, ".")
	b := []byte(parts[1])
	if b[5] == 'A' {
		b[5] = 'B'
	} else {
		b[5] = 'A'
	}
	parts[1] = string(b)
	return strings.Join(parts, ".")
}

// loginOf logs a user of signUp in and returns the session token.
func loginOf(t testing.TB, srv *servertest.Server, name string) string {
	t.Helper()
	res := srv.Do(t, "POST", "/login", map[string]any{"username": name, "password": "pw-" + name}, servertest.App())
	if res.Status != 200 {
		t.Fatalf("login %s: %d %s", name, res.Status, res.Body)
	}
	return tokenOf(res)
}

func TestScenarioAuthDataLinking(t *testing.T) {
	p := authtest.Start(t)
	srv := authServer(t, p, nil)
	app := servertest.App()
	sfx := uniqueSuffix() // the leak audit tracks secrets by value across runs
	p.AddCode("code-1", "gh-token-1"+sfx)
	p.AddCode("code-2", "gh-token-1"+sfx)
	p.AddToken("gh-token-1"+sfx, "4242")
	p.AddToken("fb-token-1"+sfx, "fb-7")
	p.AddToken("ms-token-1"+sfx, "ms-9")
	p.AddToken("corp-token-1"+sfx, "corp-3")
	p.AddTwitter("tw-token"+sfx, "tw-secret"+sfx, "tw-5")
	id, _ := signUp(t, srv, "carol", "carol@example.com")
	carol := asUser(loginOf(t, srv, "carol"))
	runScenarios(t, srv, []scenario{
		{name: "link github with a code", method: "PUT", path: "/users/" + id, headers: carol,
			body: authBody("github", map[string]any{"id": "4242", "code": "code-1"}), expectedStatus: 200},
		{name: "the code was spent, only the id kept", method: "GET", path: "/users/me", headers: carol,
			expectedStatus: 200, expectedContains: []string{`"github":{"id":"4242"}`}, notExpectedContains: []string{"code-1"}},
		{name: "log in with github", method: "POST", path: "/users", headers: app,
			body: authBody("github", map[string]any{"id": "4242", "code": "code-2"}), expectedStatus: 200,
			expectedContains: []string{`"objectId":"` + id + `"`, `"username":"carol"`}},
		{name: "a spent code fails", method: "POST", path: "/users", headers: app,
			body: authBody("github", map[string]any{"id": "4242", "code": "code-2"}), expectedStatus: 400, check: codeIs(251)},
		{name: "github access token is insecure by default", method: "POST", path: "/users", headers: app,
			body: authBody("github", map[string]any{"id": "4242", "access_token": "gh-token-1" + sfx}), expectedStatus: 400, check: codeIs(252)},
		{name: "link facebook (graph me, app id)", method: "PUT", path: "/users/" + id, headers: carol,
			body: authBody("facebook", map[string]any{"id": "fb-7", "access_token": "fb-token-1" + sfx}), expectedStatus: 200},
		{name: "facebook token of another user", method: "POST", path: "/users", headers: app,
			body: authBody("facebook", map[string]any{"id": "fb-8", "access_token": "fb-token-1" + sfx}), expectedStatus: 400, check: codeIs(251)},
		{name: "facebook limited login token", method: "POST", path: "/users", headers: app,
			body: authBody("facebook", map[string]any{"id": "fb-7",
				"token": p.IDToken(t, authtest.RSA, map[string]any{"sub": "fb-7", "aud": authtest.FacebookAppID})}),
			expectedStatus: 200, expectedContains: []string{`"objectId":"` + id + `"`}},
		{name: "link microsoft", method: "PUT", path: "/users/" + id, headers: carol,
			body: authBody("microsoft", map[string]any{"id": "ms-9", "access_token": "ms-token-1" + sfx}), expectedStatus: 200},
		{name: "microsoft bad token", method: "POST", path: "/users", headers: app,
			body: authBody("microsoft", map[string]any{"id": "ms-9", "access_token": "nope"}), expectedStatus: 400, check: codeIs(251)},
		{name: "link twitter (OAuth 1.0a)", method: "PUT", path: "/users/" + id, headers: carol,
			body: authBody("twitter", map[string]any{"id": "tw-5", "auth_token": "tw-token" + sfx, "auth_token_secret": "tw-secret" + sfx}), expectedStatus: 200},
		{name: "twitter wrong secret", method: "POST", path: "/users", headers: app,
			body: authBody("twitter", map[string]any{"id": "tw-5", "auth_token": "tw-token" + sfx, "auth_token_secret": "wrong"}), expectedStatus: 400, check: codeIs(251)},
		{name: "link the generic oauth2 provider (introspection)", method: "PUT", path: "/users/" + id, headers: carol,
			body: authBody("corp", map[string]any{"id": "corp-3", "access_token": "corp-token-1" + sfx}), expectedStatus: 200},
		{name: "introspection says inactive", method: "POST", path: "/users", headers: app,
			body: authBody("corp", map[string]any{"id": "corp-3", "access_token": "revoked"}), expectedStatus: 400, check: codeIs(251)},
		{name: "every provider is linked", method: "GET", path: "/users/me", headers: carol, expectedStatus: 200,
			expectedContains: []string{`"github":`, `"facebook":`, `"microsoft":`, `"twitter":`, `"corp":`}},
		{name: "unlink facebook", method: "PUT", path: "/users/" + id, headers: carol,
			body: map[string]any{"authData": map[string]any{"facebook": nil}}, expectedStatus: 200},
		{name: "facebook is gone, the others stay", method: "GET", path: "/users/me", headers: carol, expectedStatus: 200,
			expectedContains: []string{`"github":`, `"microsoft":`}, notExpectedContains: []string{`"facebook"`}},
		{name: "facebook now signs up a new user", method: "POST", path: "/users", headers: app,
			body: authBody("facebook", map[string]any{"id": "fb-7", "access_token": "fb-token-1" + sfx}), expectedStatus: 201},
	})
}

func TestScenarioAuthDataInsecure(t *testing.T) {
	p := authtest.Start(t)
	sfx := uniqueSuffix()
	p.AddToken("gh-token-1"+sfx, "4242")
	srv := authServer(t, p, func(o *config.Options) { o.Auth.EnableInsecureAuthAdapters = true })
	runScenarios(t, srv, []scenario{
		{name: "github access token accepted", method: "POST", path: "/users", headers: servertest.App(),
			body: authBody("github", map[string]any{"id": "4242", "access_token": "gh-token-1" + sfx}), expectedStatus: 201},
		{name: "github access token of someone else", method: "POST", path: "/users", headers: servertest.App(),
			body: authBody("github", map[string]any{"id": "4243", "access_token": "gh-token-1" + sfx}), expectedStatus: 400, check: codeIs(251)},
	})
}

const anonID = "8a2b8b62-5c3f-4d4e-9f1a-7e0c4d2b9a61" // no common password inside (the leak audit)

func TestScenarioAuthDataAnonymous(t *testing.T) {
	srv := servertest.Start(t, nil)
	app := servertest.App()
	var id, token string
	runScenarios(t, srv, []scenario{
		{name: "anonymous sign-up", method: "POST", path: "/users", headers: app,
			body: authBody("anonymous", map[string]any{"id": anonID}), expectedStatus: 201,
			check: checkAll(capture("objectId", &id), capture("sessionToken", &token))},
		{name: "the same id logs in again", method: "POST", path: "/users", headers: app,
			body: authBody("anonymous", map[string]any{"id": anonID}), expectedStatus: 200,
			expectedContains: []string{`"anonymous":{"id":"` + anonID + `"}`}},
		{name: "not a lowercase UUID", method: "POST", path: "/users", headers: app,
			body: authBody("anonymous", map[string]any{"id": strings.ToUpper(anonID)}), expectedStatus: 400, check: codeIs(251)},
		{name: "not configured: google", method: "POST", path: "/users", headers: app,
			body: authBody("google", map[string]any{"id": "1", "id_token": "x"}), expectedStatus: 400, check: codeIs(252)},
	})
	runScenarios(t, srv, []scenario{
		{name: "sign up the anonymous user with a password", method: "PUT", path: "/users/" + id, headers: asUser(token),
			body: map[string]any{"username": "dave", "password": "pw-dave"}, expectedStatus: 200},
	})
	runScenarios(t, srv, []scenario{
		{name: "no longer anonymous", method: "GET", path: "/users/me", headers: asUser(loginOf(t, srv, "dave")),
			expectedStatus: 200, expectedContains: []string{`"username":"dave"`}, notExpectedContains: []string{"anonymous"}},
		{name: "the anonymous id now makes a new user", method: "POST", path: "/users", headers: app,
			body: authBody("anonymous", map[string]any{"id": anonID}), expectedStatus: 201},
	})
}

// TestScenarioCompatibilityParseServer: compatibility "parse-server" takes
// Parse Server 9's rule where the specification's differs: any non-empty
// anonymous id, file names with "-", "@", "~" and space, users private.
func TestScenarioCompatibilityParseServer(t *testing.T) {
	srv := servertest.Start(t, func(o *config.Options) {
		o.Compatibility = config.CompatParseServer
		o.EnforcePrivateUsers = true // what config.Load makes of it when not set
	})
	app, master := servertest.App(), servertest.Master()
	text := func(h map[string]string) map[string]string { return with(h, "Content-Type", "text/plain") }
	var token string
	runScenarios(t, srv, []scenario{
		{name: "any anonymous id", method: "POST", path: "/users", headers: app,
			body: authBody("anonymous", map[string]any{"id": "Device-42"}), expectedStatus: 201, check: capture("sessionToken", &token)},
		{name: "but not an empty one", method: "POST", path: "/users", headers: app,
			body: authBody("anonymous", map[string]any{"id": ""}), expectedStatus: 400},
		{name: "space in a file name", method: "POST", path: "/files/my%20photo.png", body: "png", headers: text(master),
			expectedStatus: 201, expectedContains: []string{`_my photo.png"`, `my%20photo.png"`}},
		{name: "dash, at and tilde", method: "POST", path: "/files/a-b@c~d.txt", body: "x", headers: text(master), expectedStatus: 201},
		{name: "still no slash", method: "POST", path: "/files/a%2Fb.txt", body: "x", headers: text(master), expectedStatus: 400, check: codeIs(122)},
		{name: "users are private", path: "/users", headers: app, expectedStatus: 200, check: replyIs(`{"results":[]}`)},
	})
}

func TestScenarioAuthDataAnonymousDisabled(t *testing.T) {
	srv := servertest.Start(t, func(o *config.Options) { o.Auth.EnableAnonymousUsers = false })
	runScenarios(t, srv, []scenario{
		{name: "anonymous sign-up refused", method: "POST", path: "/users", headers: servertest.App(),
			body: authBody("anonymous", map[string]any{"id": anonID}), expectedStatus: 400, check: codeIs(252)},
	})
}

// Concurrent sign-ups with one new authData make one user: the first
// creates it (201), the others log into it (200).
func TestScenarioAuthDataConcurrentSignUp(t *testing.T) {
	srv := servertest.Start(t, nil)
	const n = 8
	type result struct {
		status int
		id     string
	}
	results := make(chan result, n)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := srv.Do(t, "POST", "/users", authBody("anonymous", map[string]any{"id": anonID}), servertest.App())
			id, _ := res.Map()["objectId"].(string)
			results <- result{res.Status, id}
		}()
	}
	wg.Wait()
	close(results)
	created, ids := 0, map[string]bool{}
	for r := range results {
		if r.status == 201 {
			created++
		} else if r.status != 200 {
			t.Errorf("status %d", r.status)
		}
		ids[r.id] = true
	}
	if created != 1 || len(ids) != 1 {
		t.Errorf("%d created, %d distinct users; want one of each", created, len(ids))
	}
}

// uniqueSuffix makes a test's provider secrets differ from every other
// run's (go test -count, the leak audit that learns secrets by value).
func uniqueSuffix() string { return "-" + strconv.FormatInt(time.Now().UnixNano(), 36) }

// acmeAdapter is a Go adapter as a program embedding Quarry writes one: the
// credential is the configured password word, and an authDataResponse.
type acmeAdapter struct{}

func (acmeAdapter) ValidateOptions(opts auth.Options) error {
	if opts.String("word", "") == "" {
		return errors.New("word is required")
	}
	return nil
}

func (acmeAdapter) ValidateAuthData(_ context.Context, data map[string]any, opts auth.Options) (auth.Result, error) {
	if data["word"] != opts.String("word", "") {
		return auth.Result{}, schema.Errorf(auth.CodeInvalidLinkedSession, "acme says no.")
	}
	return auth.Result{Store: map[string]any{"id": data["id"]}, Response: map[string]any{"welcome": true}}, nil
}

func (acmeAdapter) ValidateAppID(context.Context, []string, map[string]any, auth.Options) error {
	return nil
}

func TestScenarioAuthDataGoAdapter(t *testing.T) {
	srv := servertest.Start(t, func(o *config.Options) {
		o.Auth.Providers = map[string]any{"acme": map[string]any{"word": "swordfish"}}
		o.Auth.Adapters = map[string]auth.Adapter{"acme": acmeAdapter{}}
	})
	runScenarios(t, srv, []scenario{
		{name: "accepted", method: "POST", path: "/users", headers: servertest.App(),
			body:           authBody("acme", map[string]any{"id": "a-1", "word": "swordfish"}),
			expectedStatus: 201, expectedContains: []string{`"authDataResponse":{"acme":{"welcome":true}}`}},
		{name: "refused with the adapter's error", method: "POST", path: "/users", headers: servertest.App(),
			body:           authBody("acme", map[string]any{"id": "a-1", "word": "trout"}),
			expectedStatus: 400, check: msgIs(251, "acme says no.")},
	})
}

// A provider's own enableInsecureAuth false wins over the general switch
// (the specification's migration turns providers secure one at a time).
func TestScenarioAuthDataInsecureTurnedOffPerProvider(t *testing.T) {
	p := authtest.Start(t)
	sfx := uniqueSuffix()
	p.AddToken("gh-token-2"+sfx, "4244")
	srv := authServer(t, p, func(o *config.Options) {
		o.Auth.EnableInsecureAuthAdapters = true
		o.Auth.Providers["github"].(map[string]any)["enableInsecureAuth"] = false
	})
	runScenarios(t, srv, []scenario{
		{name: "github access token refused", method: "POST", path: "/users", headers: servertest.App(),
			body: authBody("github", map[string]any{"id": "4244", "access_token": "gh-token-2" + sfx}), expectedStatus: 400, check: codeIs(252)},
	})
}
