package auth_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/quarrydata/quarry/auth"
	"github.com/quarrydata/quarry/auth/authtest"
	"github.com/quarrydata/quarry/schema"
)

// Registry construction: which auth options start and which are refused.
func TestNewRegistry(t *testing.T) {
	for _, tc := range []struct {
		name      string
		providers map[string]map[string]any
		insecure  bool
		err       string // "" = starts
		enabled   []string
	}{
		{name: "anonymous only", enabled: []string{"anonymous"}},
		{name: "anonymous turned off", providers: map[string]map[string]any{"anonymous": {"enabled": false}}},
		{name: "google", providers: map[string]map[string]any{"google": {"clientId": "c"}}, enabled: []string{"anonymous", "google"}},
		{name: "google without clientId", providers: map[string]map[string]any{"google": {}}, err: "auth.google: clientId is required"},
		{name: "apple with a list of client ids", providers: map[string]map[string]any{"apple": {"clientId": []any{"a", "b"}}}, enabled: []string{"anonymous", "apple"}},
		{name: "github without secret", providers: map[string]map[string]any{"github": {"clientId": "c"}}, err: "clientSecret"},
		{name: "github insecure needs no secret", providers: map[string]map[string]any{"github": {"enableInsecureAuth": true}}, enabled: []string{"anonymous", "github"}},
		{name: "github under the general switch", providers: map[string]map[string]any{"github": {}}, insecure: true, enabled: []string{"anonymous", "github"}},
		{name: "github turned secure under the general switch", providers: map[string]map[string]any{"github": {"enableInsecureAuth": false}}, insecure: true, err: "clientSecret"},
		{name: "twitter without consumer key", providers: map[string]map[string]any{"twitter": {}}, err: "consumer_key"},
		{name: "unknown provider", providers: map[string]map[string]any{"myspace": {}}, err: "no adapter"},
		{name: "JavaScript module", providers: map[string]map[string]any{"custom": {"module": "./adapter.js"}}, err: "JavaScript"},
		{name: "cloud function adapter without a runner", providers: map[string]map[string]any{"custom": {"cloudFunction": "check"}}, err: "no runner"},
		{name: "oauth2 without endpoint", providers: map[string]map[string]any{"corp": {"oauth2": true}}, err: "tokenIntrospectionEndpointUrl or jwksUri"},
		{name: "oauth2 appidField without appIds", providers: map[string]map[string]any{"corp": {"oauth2": true,
			"tokenIntrospectionEndpointUrl": "http://127.0.0.1:1/x", "appidField": "aud"}}, err: "appIds"},
		{name: "mfa with SMS needs its function", providers: map[string]map[string]any{"mfa": {"options": []any{"SMS"}}}, err: "smsFunction"},
		{name: "mfa with SMS", providers: map[string]map[string]any{"mfa": {"options": []any{"SMS", "TOTP"}, "smsFunction": "send"}}, enabled: []string{"anonymous", "mfa"}},
		{name: "mfa with e-mail", providers: map[string]map[string]any{"mfa": {"options": []any{"EMAIL"}}}, err: "neither"},
		{name: "mfa attempt limit", providers: map[string]map[string]any{"mfa": {"maxAttempts": 3.0, "attemptWindow": 60.0, "lockoutDuration": 600.0}}, enabled: []string{"anonymous", "mfa"}},
		{name: "mfa negative maxAttempts", providers: map[string]map[string]any{"mfa": {"maxAttempts": -1.0}}, err: "mfa.maxAttempts"},
		{name: "mfa fractional window", providers: map[string]map[string]any{"mfa": {"attemptWindow": 1.5}}, err: "mfa.attemptWindow"},
		{name: "mfa limit without a lockout", providers: map[string]map[string]any{"mfa": {"lockoutDuration": 0.0}}, err: "at least 1 second"},
		{name: "mfa limit off", providers: map[string]map[string]any{"mfa": {"maxAttempts": 0.0, "lockoutDuration": 0.0}}, enabled: []string{"anonymous", "mfa"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := auth.New(auth.Config{Providers: tc.providers, EnableAnonymousUsers: true, EnableInsecureAuthAdapters: tc.insecure})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(r.Providers(), ","); got != strings.Join(tc.enabled, ",") {
				t.Errorf("providers %q, want %q", got, strings.Join(tc.enabled, ","))
			}
		})
	}
}

// A Go adapter replaces a built-in of the same name and sees its options.
type stubAdapter struct{ seen *map[string]any }

func (stubAdapter) ValidateOptions(auth.Options) error { return nil }

func (a stubAdapter) ValidateAuthData(_ context.Context, data map[string]any, opts auth.Options) (auth.Result, error) {
	*a.seen = opts.Raw
	if data["secret"] != "open sesame" {
		return auth.Result{}, schema.Errorf(auth.CodeInvalidLinkedSession, "no")
	}
	return auth.Result{Store: map[string]any{"id": data["id"]}, Response: "welcome"}, nil
}

func (stubAdapter) ValidateAppID(context.Context, []string, map[string]any, auth.Options) error {
	return nil
}

func TestCustomAdapter(t *testing.T) {
	var seen map[string]any
	r, err := auth.New(auth.Config{
		Providers: map[string]map[string]any{"google": {"flavour": "custom"}},
		Adapters:  map[string]auth.Adapter{"google": stubAdapter{seen: &seen}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		data map[string]any
		code int
	}{
		{"accepted", map[string]any{"id": "1", "secret": "open sesame"}, 0},
		{"refused", map[string]any{"id": "1", "secret": "nope"}, auth.CodeInvalidLinkedSession},
		// The app's own adapter alone judges: an id is not required.
		{"no id", map[string]any{"secret": "open sesame"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := r.Validate(context.Background(), "google", tc.data)
			if pe, _ := schema.AsError(err); tc.code != 0 && (pe == nil || pe.Code != tc.code) || tc.code == 0 && err != nil {
				t.Fatalf("error %v, want code %d", err, tc.code)
			}
			if tc.code == 0 && (res.Response != "welcome" || seen["flavour"] != "custom") {
				t.Errorf("result %+v, options %v", res, seen)
			}
		})
	}
	if _, err := r.Validate(context.Background(), "anonymous", map[string]any{"id": "x"}); err != auth.ErrUnsupported {
		t.Errorf("anonymous off: %v, want ErrUnsupported", err)
	}
}

// The key set is fetched once and cached for many tokens; a provider whose
// keys cannot be read is 251, with no address in the message.
func TestJWKSFetch(t *testing.T) {
	p := authtest.Start(t)
	r, err := auth.New(auth.Config{Providers: map[string]map[string]any{
		"google": {"clientId": authtest.ClientID, "jwksUri": p.URL + "/jwks", "issuer": authtest.Issuer},
		"apple":  {"clientId": authtest.ClientID, "jwksUri": "http://127.0.0.1:1/jwks", "issuer": authtest.Issuer},
	}})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		tok := p.IDToken(t, authtest.RSA, map[string]any{"sub": "u"})
		if _, err := r.Validate(context.Background(), "google", map[string]any{"id": "u", "id_token": tok}); err != nil {
			t.Fatal(err)
		}
	}
	if n := p.Calls("/jwks"); n != 1 {
		t.Errorf("the key set was fetched %d times for 3 tokens, want once", n)
	}
	_, err = r.Validate(context.Background(), "apple", map[string]any{"id": "u", "id_token": p.IDToken(t, authtest.RSA, map[string]any{"sub": "u"})})
	if pe, _ := schema.AsError(err); pe == nil || pe.Code != auth.CodeInvalidLinkedSession || strings.Contains(pe.Message, "127.0.0.1") {
		t.Errorf("provider down: %v, want 251 without internals", err)
	}
}

// Key rotation: a token signed by a key the cached set lacks fails until
// the set may be fetched again (jwksRefetch after the last fetch), then
// the new key is found.
func TestJWKSRotation(t *testing.T) {
	p := authtest.Start(t)
	now := time.Now()
	r, err := auth.New(auth.Config{
		Providers: map[string]map[string]any{"google": {"clientId": authtest.ClientID, "jwksUri": p.URL + "/jwks", "issuer": authtest.Issuer}},
		Now:       func() time.Time { return now },
	})
	if err != nil {
		t.Fatal(err)
	}
	validate := func(kind string) error {
		_, err := r.Validate(context.Background(), "google", map[string]any{"id": "u", "id_token": p.IDToken(t, kind, map[string]any{"sub": "u"})})
		return err
	}
	if err := validate(authtest.RSA); err != nil {
		t.Fatal(err)
	}
	p.AddKey(t, "rotated")
	for _, step := range []struct {
		name    string
		advance time.Duration
		ok      bool
		fetches int
	}{
		{"right after rotation: the cached set is kept", 10 * time.Second, false, 1},
		{"a minute later the set is fetched again", time.Minute, true, 2},
		{"then the new key is cached", time.Second, true, 2},
	} {
		now = now.Add(step.advance)
		err := validate("rotated")
		if (err == nil) != step.ok || p.Calls("/jwks") != step.fetches {
			t.Errorf("%s: error %v, %d fetches; want ok=%v, %d fetches", step.name, err, p.Calls("/jwks"), step.ok, step.fetches)
		}
	}
}

// Ids in options may be JSON numbers; anything else is refused.
func TestOptionIDs(t *testing.T) {
	o := auth.Options{Raw: map[string]any{"appIds": []any{json.Number("1234567890"), 42.0, "abc"}, "clientId": "c"}}
	if got := strings.Join(o.Strings("appIds"), ","); got != "1234567890,42,abc" {
		t.Errorf("appIds %q", got)
	}
	if got := o.Strings("clientId"); len(got) != 1 || got[0] != "c" {
		t.Errorf("clientId %q", got)
	}
	if _, err := auth.New(auth.Config{Providers: map[string]map[string]any{"facebook": {"appIds": []any{true}}}}); err == nil {
		t.Error("facebook appIds [true] accepted")
	}
}

// TestBuiltinAdapterNeedsID: Quarry's own adapters still require the id
// they link users by.
func TestBuiltinAdapterNeedsID(t *testing.T) {
	r, err := auth.New(auth.Config{Providers: map[string]map[string]any{"github": {"clientId": "c", "clientSecret": "s"}}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Validate(context.Background(), "github", map[string]any{"access_token": "t"})
	if pe, _ := schema.AsError(err); pe == nil || pe.Code != auth.CodeLinkedIDMissing {
		t.Fatalf("error %v, want code %d", err, auth.CodeLinkedIDMissing)
	}
}
