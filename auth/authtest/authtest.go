// Package authtest runs a fake identity provider on 127.0.0.1 for tests:
// a JWKS endpoint with real RSA and EC keys and the id tokens they sign,
// Facebook's Graph "me" and "app", GitHub's "user" and code exchange,
// Microsoft Graph's "me", Twitter's OAuth 1.0a verify_credentials, and an
// RFC 7662 token introspection endpoint; and an LDAP directory (ldap.go,
// gldap speaking the real protocol). Tests point the auth option's
// provider URLs at them. It is imported by tests only.
package authtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jwt"
)

// Fixed identities of the fake provider.
const (
	Issuer         = "https://issuer.test"
	ClientID       = "client-1"
	FacebookAppID  = "fb-app-1"
	ClientSecret   = "client-secret-1"
	ConsumerKey    = "consumer-key-1"
	ConsumerSecret = "consumer-secret-1"
	// IntrospectAuth is the Authorization header the introspection
	// endpoint requires.
	IntrospectAuth = "Basic aW50cm9zcGVjdDpzZWNyZXQ="
)

// Key kinds an id token can be signed with.
const (
	RSA   = "rsa"   // in the JWKS (kid "rsa-1", RS256)
	EC    = "ec"    // in the JWKS (kid "ec-1", ES256)
	Rogue = "rogue" // an RSA key not in the JWKS that claims kid "rsa-1"
)

// Provider is a running fake provider.
type Provider struct {
	URL string

	keys map[string]jwk.Key // private keys by kind
	set  jwk.Set            // the public JWKS

	mu      sync.Mutex
	tokens  map[string]string // access token -> user id
	codes   map[string]string // authorization code -> access token
	twitter map[string]string // auth_token -> token secret
	calls   map[string]int    // path -> requests served
}

// Start runs a provider until the test ends.
func Start(tb testing.TB) *Provider {
	tb.Helper()
	p := &Provider{keys: map[string]jwk.Key{}, set: jwk.NewSet(), tokens: map[string]string{},
		codes: map[string]string{}, twitter: map[string]string{}, calls: map[string]int{}}
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		tb.Fatal(err)
	}
	rogue, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		tb.Fatal(err)
	}
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	for _, k := range []struct {
		kind, kid string
		alg       jwa.SignatureAlgorithm
		raw       any
		public    bool
	}{{RSA, "rsa-1", jwa.RS256(), rsaKey, true}, {EC, "ec-1", jwa.ES256(), ecKey, true}, {Rogue, "rsa-1", jwa.RS256(), rogue, false}} {
		key, err := jwk.Import(k.raw)
		if err != nil {
			tb.Fatal(err)
		}
		_ = key.Set(jwk.KeyIDKey, k.kid)
		_ = key.Set(jwk.AlgorithmKey, k.alg)
		p.keys[k.kind] = key
		if k.public {
			pub, err := key.PublicKey()
			if err != nil {
				tb.Fatal(err)
			}
			_ = p.set.AddKey(pub)
		}
	}
	srv := httptest.NewServer(http.HandlerFunc(p.serve))
	tb.Cleanup(srv.Close)
	p.URL = srv.URL
	return p
}

// IDToken signs claims with the key of kind. Claims left out get
// defaults: iss Issuer, aud ClientID, exp in an hour, iat now.
func (p *Provider) IDToken(tb testing.TB, kind string, claims map[string]any) string {
	tb.Helper()
	b := jwt.NewBuilder().Issuer(Issuer).Audience([]string{ClientID}).
		IssuedAt(time.Now()).Expiration(time.Now().Add(time.Hour))
	for k, v := range claims {
		b = b.Claim(k, v)
	}
	tok, err := b.Build()
	if err != nil {
		tb.Fatal(err)
	}
	p.mu.Lock()
	key := p.keys[kind]
	p.mu.Unlock()
	alg, _ := key.Algorithm()
	signed, err := jwt.Sign(tok, jwt.WithKey(alg, key))
	if err != nil {
		tb.Fatal(err)
	}
	return string(signed)
}

// AddKey publishes a new RSA key in the JWKS (a provider's key rotation);
// IDToken signs with it under the kind, which is also its kid.
func (p *Provider) AddKey(tb testing.TB, kind string) {
	tb.Helper()
	raw, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		tb.Fatal(err)
	}
	key, err := jwk.Import(raw)
	if err != nil {
		tb.Fatal(err)
	}
	_ = key.Set(jwk.KeyIDKey, kind)
	_ = key.Set(jwk.AlgorithmKey, jwa.RS256())
	pub, err := key.PublicKey()
	if err != nil {
		tb.Fatal(err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.keys[kind] = key
	_ = p.set.AddKey(pub)
}

// AddToken makes an access token valid for the user id.
func (p *Provider) AddToken(token, userID string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tokens[token] = userID
}

// AddCode makes an authorization code exchangeable for an access token.
func (p *Provider) AddCode(code, token string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.codes[code] = token
}

// AddTwitter makes OAuth 1.0a user credentials valid for the user id.
func (p *Provider) AddTwitter(token, secret, userID string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.twitter[token] = secret
	p.tokens["twitter:"+token] = userID
}

// Calls counts the requests served on a path.
func (p *Provider) Calls(path string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls[path]
}

func (p *Provider) user(token string) (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	id, ok := p.tokens[token]
	return id, ok
}

func bearerToken(r *http.Request) string {
	h := r.Header.Get("Authorization")
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return h[7:]
	}
	return ""
}

func reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (p *Provider) serve(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.calls[r.URL.Path]++
	p.mu.Unlock()
	unauthorized := map[string]any{"error": map[string]any{"message": "Invalid OAuth access token."}}
	switch r.Method + " " + r.URL.Path {
	case "GET /jwks":
		p.mu.Lock()
		set, _ := json.Marshal(p.set)
		p.mu.Unlock()
		reply(w, http.StatusOK, json.RawMessage(set))
	case "GET /me": // Facebook Graph
		id, ok := p.user(r.URL.Query().Get("access_token"))
		if !ok {
			reply(w, http.StatusBadRequest, unauthorized)
			return
		}
		reply(w, http.StatusOK, map[string]any{"id": id})
	case "GET /app":
		if _, ok := p.user(r.URL.Query().Get("access_token")); !ok {
			reply(w, http.StatusBadRequest, unauthorized)
			return
		}
		reply(w, http.StatusOK, map[string]any{"id": FacebookAppID})
	case "GET /user": // GitHub: ids are numbers
		id, ok := p.user(bearerToken(r))
		n, err := strconv.ParseInt(id, 10, 64)
		if !ok || err != nil {
			reply(w, http.StatusUnauthorized, map[string]any{"message": "Bad credentials"})
			return
		}
		reply(w, http.StatusOK, map[string]any{"id": n, "login": "octo"})
	case "POST /login/oauth/access_token":
		p.exchange(w, r)
	case "GET /v1.0/me": // Microsoft Graph
		id, ok := p.user(bearerToken(r))
		if !ok {
			reply(w, http.StatusUnauthorized, map[string]any{"error": map[string]any{"code": "InvalidAuthenticationToken"}})
			return
		}
		reply(w, http.StatusOK, map[string]any{"id": id})
	case "GET /1.1/account/verify_credentials.json":
		p.verifyCredentials(w, r)
	case "POST /introspect":
		p.introspect(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (p *Provider) exchange(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil || r.PostForm.Get("client_id") != ClientID || r.PostForm.Get("client_secret") != ClientSecret {
		reply(w, http.StatusOK, map[string]any{"error": "incorrect_client_credentials"})
		return
	}
	p.mu.Lock()
	token, ok := p.codes[r.PostForm.Get("code")]
	delete(p.codes, r.PostForm.Get("code")) // a code is used once
	p.mu.Unlock()
	if !ok {
		reply(w, http.StatusOK, map[string]any{"error": "bad_verification_code"})
		return
	}
	reply(w, http.StatusOK, map[string]any{"access_token": token, "token_type": "bearer"})
}

func (p *Provider) introspect(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != IntrospectAuth {
		reply(w, http.StatusUnauthorized, map[string]any{"error": "invalid_client"})
		return
	}
	if err := r.ParseForm(); err != nil {
		reply(w, http.StatusBadRequest, map[string]any{"error": "invalid_request"})
		return
	}
	id, ok := p.user(r.PostForm.Get("token"))
	if !ok {
		reply(w, http.StatusOK, map[string]any{"active": false})
		return
	}
	reply(w, http.StatusOK, map[string]any{"active": true, "sub": id, "client_id": ClientID})
}

// verifyCredentials checks an OAuth 1.0a HMAC-SHA1 signature (RFC 5849
// section 3.4) made with the consumer secret and the user's token secret.
func (p *Provider) verifyCredentials(w http.ResponseWriter, r *http.Request) {
	params := map[string]string{}
	h, ok := strings.CutPrefix(r.Header.Get("Authorization"), "OAuth ")
	for _, part := range strings.Split(h, ",") {
		k, v, found := strings.Cut(strings.TrimSpace(part), "=")
		if !found {
			continue
		}
		uk, _ := url.PathUnescape(k)
		uv, _ := url.PathUnescape(strings.Trim(v, `"`))
		params[uk] = uv
	}
	p.mu.Lock()
	secret, known := p.twitter[params["oauth_token"]]
	id := p.tokens["twitter:"+params["oauth_token"]]
	p.mu.Unlock()
	sig := params["oauth_signature"]
	delete(params, "oauth_signature")
	if !ok || !known || params["oauth_consumer_key"] != ConsumerKey || params["oauth_signature_method"] != "HMAC-SHA1" {
		reply(w, http.StatusUnauthorized, map[string]any{"errors": []any{map[string]any{"code": 32}}})
		return
	}
	base := r.Method + "&" + enc("http://"+r.Host+r.URL.Path) + "&" + enc(sortedPairs(params))
	mac := hmac.New(sha1.New, []byte(enc(ConsumerSecret)+"&"+enc(secret)))
	mac.Write([]byte(base))
	if base64.StdEncoding.EncodeToString(mac.Sum(nil)) != sig {
		reply(w, http.StatusUnauthorized, map[string]any{"errors": []any{map[string]any{"code": 32}}})
		return
	}
	reply(w, http.StatusOK, map[string]any{"id_str": id, "screen_name": "someone"})
}

func sortedPairs(params map[string]string) string {
	pairs := make([]string, 0, len(params))
	for k, v := range params {
		pairs = append(pairs, enc(k)+"="+enc(v))
	}
	sort.Strings(pairs)
	return strings.Join(pairs, "&")
}

// enc is RFC 3986 percent-encoding (Go's PathEscape leaves some
// sub-delimiters alone, so each byte is checked here).
func enc(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}
