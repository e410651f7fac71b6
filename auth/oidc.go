package auth

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jws"
	"github.com/lestrrat-go/jwx/v3/jwt"

	"github.com/quarrydata/quarry/schema"
)

// Where Google and Apple publish their signing keys, and the issuers their
// id tokens name.
const (
	googleJWKS = "https://www.googleapis.com/oauth2/v3/certs"
	appleJWKS  = "https://appleid.apple.com/auth/keys"
)

var (
	googleIssuers = []string{"https://accounts.google.com", "accounts.google.com"}
	appleIssuers  = []string{"https://appleid.apple.com"}
)

// Limits of a provider's key set.
const (
	jwksMaxBytes = 1 << 20
	// jwksTTL is how long a fetched key set is trusted; a token signed by
	// a key not in it fetches again, at most once per jwksRefetch.
	jwksTTL     = time.Hour
	jwksRefetch = time.Minute
)

// oidcAdapter verifies OpenID Connect id tokens against the provider's
// published keys: signature, issuer, audience (the configured client ids),
// expiry, and that the subject is authData.id. Options: clientId (a string
// or a list; required), and jwksUri and issuer to point it elsewhere.
type oidcAdapter struct {
	issuers []string
	jwks    string
	keys    *keyCache
}

func newOIDC(issuers []string, jwks string) *oidcAdapter {
	return &oidcAdapter{issuers: issuers, jwks: jwks, keys: &keyCache{sets: map[string]*cachedSet{}}}
}

func (a *oidcAdapter) ValidateOptions(opts Options) error {
	if len(opts.Strings("clientId")) == 0 {
		return errors.New("clientId is required")
	}
	return nil
}

func (a *oidcAdapter) ValidateAuthData(ctx context.Context, data map[string]any, opts Options) (Result, error) {
	token := str(data, "id_token")
	if token == "" {
		token = str(data, "token")
	}
	if token == "" {
		return Result{}, schema.Errorf(CodeInvalidLinkedSession, "%s: id_token is missing.", opts.Provider)
	}
	issuers := a.issuers
	if iss := opts.Strings("issuer"); len(iss) > 0 {
		issuers = iss
	}
	v := verifier{keys: a.keys, jwks: opts.String("jwksUri", a.jwks), issuers: issuers,
		audiences: opts.Strings("clientId"), opts: opts}
	if err := v.verify(ctx, token, str(data, "id")); err != nil {
		return Result{}, err
	}
	return Result{Store: map[string]any{"id": data["id"]}}, nil
}

// ValidateAppID has nothing to do: the audience check is the app check.
func (a *oidcAdapter) ValidateAppID(context.Context, []string, map[string]any, Options) error {
	return nil
}

// verifier checks one id token.
type verifier struct {
	keys      *keyCache
	jwks      string
	issuers   []string
	audiences []string
	opts      Options
}

func (v verifier) verify(ctx context.Context, token, id string) error {
	now := v.opts.Now
	if now == nil {
		now = time.Now
	}
	name := v.opts.Provider
	set, err := v.keys.get(ctx, v.opts, v.jwks, false)
	if err != nil {
		return schema.Errorf(CodeInvalidLinkedSession, "%s: the provider's signing keys could not be read.", name)
	}
	parse := func(set jwk.Set) (jwt.Token, error) {
		return jwt.ParseString(token, jwt.WithKeySet(set, jws.WithInferAlgorithmFromKey(true)), jwt.WithValidate(true),
			jwt.WithClock(jwt.ClockFunc(now)))
	}
	tok, err := parse(set)
	if err != nil && !isExpiry(err) {
		// A key rotated in since the last fetch: fetch once more.
		if fresh, ferr := v.keys.get(ctx, v.opts, v.jwks, true); ferr == nil {
			tok, err = parse(fresh)
		}
	}
	switch {
	case err != nil && isExpiry(err):
		return schema.Errorf(CodeInvalidLinkedSession, "%s: id token expired.", name)
	case err != nil:
		return schema.Errorf(CodeInvalidLinkedSession, "%s: id token not verified.", name)
	}
	if _, ok := tok.Expiration(); !ok {
		return schema.Errorf(CodeInvalidLinkedSession, "%s: id token has no expiry.", name)
	}
	if iss, _ := tok.Issuer(); !slices.Contains(v.issuers, iss) {
		return schema.Errorf(CodeInvalidLinkedSession, "%s: id token not issued by correct OpenID provider.", name)
	}
	aud, _ := tok.Audience()
	if !slices.ContainsFunc(aud, func(a string) bool { return slices.Contains(v.audiences, a) }) {
		return schema.Errorf(CodeInvalidLinkedSession, "%s: id token not issued for this client.", name)
	}
	if sub, _ := tok.Subject(); sub == "" || sub != id {
		return schema.Errorf(CodeInvalidLinkedSession, "%s: auth data is invalid for this user.", name)
	}
	return nil
}

func isExpiry(err error) bool { return errors.Is(err, jwt.TokenExpiredError()) }

// keyCache keeps each JWKS URL's key set for jwksTTL.
type keyCache struct {
	mu   sync.Mutex
	sets map[string]*cachedSet
}

type cachedSet struct {
	set     jwk.Set
	fetched time.Time
}

// get returns the key set of url, fetching it when absent, stale, or
// (force) older than jwksRefetch.
func (c *keyCache) get(ctx context.Context, opts Options, url string, force bool) (jwk.Set, error) {
	now := time.Now()
	if opts.Now != nil {
		now = opts.Now()
	}
	c.mu.Lock()
	cur := c.sets[url]
	c.mu.Unlock()
	if cur != nil {
		age := now.Sub(cur.fetched)
		if age < jwksTTL && (!force || age < jwksRefetch) {
			return cur.set, nil
		}
	}
	// Fetched outside the lock: a slow provider delays only its own callers.
	body, err := getBody(ctx, opts, url, nil)
	if err != nil {
		return nil, err
	}
	set, err := jwk.Parse(body)
	if err != nil {
		return nil, fmt.Errorf("parsing the key set of %s: %w", url, err)
	}
	c.mu.Lock()
	c.sets[url] = &cachedSet{set: set, fetched: now}
	c.mu.Unlock()
	return set, nil
}
