// Package auth owns third-party sign-in: the provider adapters that check
// a user's authData (anonymous, OpenID Connect id tokens verified against a
// JWKS, OAuth access tokens checked at the provider, a generic OAuth2
// adapter, an LDAP bind), the registry built from the auth option, and the TOTP
// multi-factor helpers. It speaks only to the providers (HTTP, LDAP); it never
// reads or writes users (service does) and imports nothing of Quarry's but
// schema.
package auth

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"time"

	"github.com/quarrydata/quarry/schema"
)

// Parse error codes of linked accounts.
const (
	CodeAccountAlreadyLinked = 208 // "this auth is already used"
	CodeMFAError             = 210
	CodeMFATokenRequired     = 211
	CodeLinkedIDMissing      = 250
	CodeInvalidLinkedSession = 251 // a provider refused the credential
	CodeUnsupportedService   = 252 // unknown or disabled provider
	CodeInvalidAuthData      = 253
)

// Names of the providers with special handling.
const (
	Anonymous = "anonymous"
	MFA       = "mfa"
)

// ErrUnsupported is the reply to authData naming a provider that is not
// configured (or authData that is not an object).
var ErrUnsupported = schema.Errorf(CodeUnsupportedService, "This authentication method is unsupported.")

// DefaultTimeout bounds one round trip to a provider.
const DefaultTimeout = 10 * time.Second

// Adapter checks one provider's authData. Adapters are safe for concurrent
// use. A Go program embedding Quarry may add its own (Config.Adapters).
type Adapter interface {
	// ValidateOptions checks the provider's options once, at start-up.
	ValidateOptions(opts Options) error
	// ValidateAuthData checks the credential in data (the client's
	// authData.<provider>) and that it belongs to data["id"].
	ValidateAuthData(ctx context.Context, data map[string]any, opts Options) (Result, error)
	// ValidateAppID checks that the credential was issued to one of the
	// configured application ids (appIds may be empty: nothing to check).
	ValidateAppID(ctx context.Context, appIDs []string, data map[string]any, opts Options) error
}

// Result is what a successful validation keeps and answers.
type Result struct {
	// Store replaces authData.<provider> as stored; nil stores the payload
	// as the client sent it.
	Store map[string]any
	// Response is returned to the client in authDataResponse.<provider>.
	Response any
}

// Options are one provider's settings: the auth option's object for it,
// plus what the server decides around it.
type Options struct {
	Provider string
	// Raw is auth.<provider> as configured.
	Raw map[string]any
	// AllowInsecure accepts the deprecated payloads (an access token where
	// the provider offers an authorization code or an id token): the
	// provider's enableInsecureAuth when set, else enableInsecureAuthAdapters.
	AllowInsecure bool
	// Client reaches the provider.
	Client *http.Client
	// Now is the clock token expiry is checked against.
	Now func() time.Time
}

// String returns the string option key, or def when unset.
func (o Options) String(key, def string) string {
	if s, ok := o.Raw[key].(string); ok && s != "" {
		return s
	}
	return def
}

// Strings returns an option that is a string or a list of strings; ids
// written as JSON numbers (Facebook app ids often are) count as their text.
func (o Options) Strings(key string) []string {
	switch v := o.Raw[key].(type) {
	case []any:
		var out []string
		for _, e := range v {
			if s := idString(e); s != "" {
				out = append(out, s)
			}
		}
		return out
	case []string:
		return v
	default:
		if s := idString(v); s != "" {
			return []string{s}
		}
	}
	return nil
}

// Bool returns a boolean option (false when unset).
func (o Options) Bool(key string) bool {
	b, _ := o.Raw[key].(bool)
	return b
}

// Config builds a Registry.
type Config struct {
	// Providers is the auth option: provider name -> its options.
	Providers map[string]map[string]any
	// Adapters are Go adapters by provider name; a provider configured in
	// Providers uses one of these before a built-in of the same name.
	Adapters map[string]Adapter
	// EnableAnonymousUsers turns the anonymous provider on.
	EnableAnonymousUsers bool
	// AnyAnonymousID accepts any non-empty authData.anonymous.id, as
	// Parse Server 9 does, instead of the specification's lowercase UUID.
	AnyAnonymousID bool
	// EnableInsecureAuthAdapters accepts insecure payloads of every
	// provider (see Options.AllowInsecure).
	EnableInsecureAuthAdapters bool
	// Client reaches the providers; nil uses one with DefaultTimeout.
	Client *http.Client
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// RunFunction calls cloud functions for providers written as cloud
	// code (a cloudFunction option); nil: such providers are refused.
	RunFunction FunctionRunner
}

type provider struct {
	adapter Adapter
	opts    Options
	// custom: the app's own adapter (cloud code or Go). Its authData
	// need not hold an id, as in Parse Server: the adapter alone judges
	// the credential, and such authData links no existing user.
	custom bool
}

// Registry holds the enabled providers. It is read-only after New.
type Registry struct {
	providers map[string]*provider
}

// New builds the registry from the auth option, refusing options an
// adapter reports as invalid and providers Quarry has no adapter for.
func New(cfg Config) (*Registry, error) {
	client := cfg.Client
	if client == nil {
		// A transport of its own: provider calls never share (or show up
		// in) the process's default one.
		client = &http.Client{Timeout: DefaultTimeout, Transport: &http.Transport{
			Proxy: http.ProxyFromEnvironment, ForceAttemptHTTP2: true, MaxIdleConnsPerHost: 4,
			IdleConnTimeout: 90 * time.Second, TLSHandshakeTimeout: 10 * time.Second,
		}}
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	r := &Registry{providers: map[string]*provider{}}
	if cfg.EnableAnonymousUsers {
		r.providers[Anonymous] = &provider{adapter: anonymousAdapter{anyID: cfg.AnyAnonymousID}, opts: Options{Provider: Anonymous, Now: now}}
	}
	for _, name := range slices.Sorted(maps.Keys(cfg.Providers)) {
		raw := cfg.Providers[name]
		if raw == nil {
			raw = map[string]any{}
		}
		if name == Anonymous {
			if b, ok := raw["enabled"].(bool); ok && !b {
				delete(r.providers, Anonymous)
			}
			continue
		}
		a := cfg.Adapters[name]
		if _, isFunction := raw["cloudFunction"]; a == nil && isFunction {
			a = functionAdapter{run: cfg.RunFunction}
		}
		custom := a != nil
		if a == nil {
			a = builtin(name, raw)
		}
		if a == nil {
			if _, ok := raw["module"]; ok {
				return nil, fmt.Errorf("auth.%s: a JavaScript adapter module cannot run in Quarry; "+
					"write it as a cloud function (cloudFunction), in Go (auth.Adapter), or use oauth2: true", name)
			}
			return nil, fmt.Errorf("auth.%s: no adapter of that name (set oauth2: true for a generic OAuth2/OIDC provider)", name)
		}
		// A provider's own enableInsecureAuth, when given, wins over the
		// general switch: the specification's migration turns providers
		// off one by one while enableInsecureAuthAdapters is still true.
		insecure := cfg.EnableInsecureAuthAdapters
		if b, set := raw["enableInsecureAuth"].(bool); set {
			insecure = b
		}
		opts := Options{Provider: name, Raw: raw, AllowInsecure: insecure, Client: client, Now: now}
		if err := a.ValidateOptions(opts); err != nil {
			return nil, fmt.Errorf("auth.%s: %w", name, err)
		}
		r.providers[name] = &provider{adapter: a, opts: opts, custom: custom}
	}
	return r, nil
}

// builtin returns the adapter Quarry ships for a provider name, or nil.
func builtin(name string, raw map[string]any) Adapter {
	if b, _ := raw["oauth2"].(bool); b {
		return genericAdapter{}
	}
	switch name {
	case "google":
		return newOIDC(googleIssuers, googleJWKS)
	case "apple":
		return newOIDC(appleIssuers, appleJWKS)
	case "facebook":
		return newFacebook()
	case "github":
		return githubAdapter{}
	case "microsoft":
		return microsoftAdapter{}
	case "twitter", "x":
		return twitterAdapter{}
	case MFA:
		return mfaAdapter{}
	case LDAP:
		return ldapAdapter{}
	}
	return nil
}

// Enabled reports whether a provider is configured and on.
func (r *Registry) Enabled(name string) bool {
	if r == nil {
		return false
	}
	_, ok := r.providers[name]
	return ok
}

// Providers lists the enabled providers' names, sorted.
func (r *Registry) Providers() []string {
	if r == nil {
		return nil
	}
	return slices.Sorted(maps.Keys(r.providers))
}

// Options returns an enabled provider's options.
func (r *Registry) Options(name string) (Options, bool) {
	if r == nil || r.providers[name] == nil {
		return Options{}, false
	}
	return r.providers[name].opts, true
}

// Validate checks one provider's authData: its shape (an object with a
// string id, except for mfa and the app's own adapters), the credential,
// and the application ids.
func (r *Registry) Validate(ctx context.Context, name string, data map[string]any) (Result, error) {
	if r == nil || r.providers[name] == nil {
		return Result{}, ErrUnsupported
	}
	p := r.providers[name]
	if name != MFA && !p.custom {
		if id, ok := data["id"].(string); !ok || id == "" {
			return Result{}, schema.Errorf(CodeLinkedIDMissing, "authData.%s.id is missing.", name)
		}
	}
	res, err := p.adapter.ValidateAuthData(ctx, data, p.opts)
	if err != nil {
		return Result{}, asParse(name, err)
	}
	if err := p.adapter.ValidateAppID(ctx, p.opts.Strings("appIds"), data, p.opts); err != nil {
		return Result{}, asParse(name, err)
	}
	return res, nil
}

// asParse keeps an adapter's Parse error and turns any other into 251, so
// that a provider's internals (URLs, library messages) never reach a client.
func asParse(name string, err error) error {
	if pe, ok := schema.AsError(err); ok {
		return pe
	}
	return invalid(name)
}

// invalid is the reply to a credential the provider did not confirm.
func invalid(name string) *schema.Error {
	return schema.Errorf(CodeInvalidLinkedSession, "%s auth is invalid for this user.", name)
}

// insecurePayload is the reply to a deprecated payload the server refuses.
func insecurePayload(name string) *schema.Error {
	return schema.Errorf(CodeUnsupportedService,
		"%s: insecure auth payloads are disabled (enableInsecureAuthAdapters / auth.%s.enableInsecureAuth).", name, name)
}

// str reads a string from a decoded JSON object.
func str(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}
