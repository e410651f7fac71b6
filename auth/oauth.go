package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/quarrydata/quarry/schema"
)

// Default provider endpoints; each adapter's options may point elsewhere
// (graphURL, apiURL, oauthURL), which is how tests reach local fakes.
const (
	facebookGraph   = "https://graph.facebook.com"
	facebookJWKS    = "https://limited.facebook.com/.well-known/oauth/openid/jwks/"
	githubAPI       = "https://api.github.com"
	githubOAuth     = "https://github.com"
	microsoftGraph  = "https://graph.microsoft.com"
	providerMaxBody = 1 << 20
)

var facebookIssuers = []string{"https://www.facebook.com", "https://facebook.com"}

// getBody GETs url with header and returns the body of a 200 reply.
func getBody(ctx context.Context, opts Options, u string, header http.Header) ([]byte, error) {
	return roundTrip(ctx, opts, http.MethodGet, u, header, nil)
}

func roundTrip(ctx context.Context, opts Options, method, u string, header http.Header, body io.Reader) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	client := opts.Client
	if client == nil {
		client = &http.Client{Timeout: DefaultTimeout}
	}
	res, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, providerMaxBody))
	if err != nil {
		return nil, err
	}
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s %s: status %d", method, u, res.StatusCode)
	}
	return b, nil
}

// getJSON GETs url and decodes a JSON object reply.
func getJSON(ctx context.Context, opts Options, u string, header http.Header) (map[string]any, error) {
	b, err := getBody(ctx, opts, u, header)
	if err != nil {
		return nil, err
	}
	return decodeObject(b)
}

func decodeObject(b []byte) (map[string]any, error) {
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil || out == nil {
		return nil, errors.New("the provider's reply is not a JSON object")
	}
	return out, nil
}

// idString renders a provider's user id, which GitHub sends as a number.
func idString(v any) string {
	switch id := v.(type) {
	case string:
		return id
	case float64:
		return strconv.FormatFloat(id, 'f', -1, 64)
	case json.Number:
		return id.String()
	}
	return ""
}

func bearer(token string) http.Header {
	return http.Header{"Authorization": {"Bearer " + token}, "Accept": {"application/json"}}
}

// facebookAdapter checks an access token with the Graph API ("me" must be
// authData.id; with appIds, the token's app must be one of them), or a
// Limited Login id token ("token") against Facebook's keys, whose audience
// must be one of appIds. Options: appIds, graphURL, jwksUri.
type facebookAdapter struct{ oidc *oidcAdapter }

func newFacebook() facebookAdapter {
	return facebookAdapter{oidc: newOIDC(facebookIssuers, facebookJWKS)}
}

func (facebookAdapter) ValidateOptions(opts Options) error {
	if _, set := opts.Raw["appIds"]; set && len(opts.Strings("appIds")) == 0 {
		return errors.New("appIds must be a list of app ids")
	}
	return nil
}

func (a facebookAdapter) ValidateAuthData(ctx context.Context, data map[string]any, opts Options) (Result, error) {
	if tok := str(data, "token"); tok != "" {
		audiences := opts.Strings("appIds")
		if len(audiences) == 0 {
			return Result{}, schema.Errorf(CodeInvalidLinkedSession, "facebook: appIds must be configured to check Limited Login tokens.")
		}
		issuers := facebookIssuers
		if iss := opts.Strings("issuer"); len(iss) > 0 {
			issuers = iss
		}
		v := verifier{keys: a.oidc.keys, jwks: opts.String("jwksUri", facebookJWKS), issuers: issuers, audiences: audiences, opts: opts}
		if err := v.verify(ctx, tok, str(data, "id")); err != nil {
			return Result{}, err
		}
		return Result{Store: map[string]any{"id": data["id"]}}, nil
	}
	token := str(data, "access_token")
	if token == "" {
		return Result{}, schema.Errorf(CodeInvalidLinkedSession, "facebook: access_token is missing.")
	}
	graph := strings.TrimSuffix(opts.String("graphURL", facebookGraph), "/")
	me, err := getJSON(ctx, opts, graph+"/me?fields=id&access_token="+url.QueryEscape(token), nil)
	if err != nil || idString(me["id"]) != str(data, "id") {
		return Result{}, invalid("facebook")
	}
	return Result{}, nil
}

func (facebookAdapter) ValidateAppID(ctx context.Context, appIDs []string, data map[string]any, opts Options) error {
	token := str(data, "access_token")
	if len(appIDs) == 0 || token == "" || str(data, "token") != "" {
		return nil // no app to check, or a Limited Login token whose audience was checked
	}
	graph := strings.TrimSuffix(opts.String("graphURL", facebookGraph), "/")
	app, err := getJSON(ctx, opts, graph+"/app?access_token="+url.QueryEscape(token), nil)
	if err != nil {
		return invalid("facebook")
	}
	for _, id := range appIDs {
		if idString(app["id"]) == id {
			return nil
		}
	}
	return schema.Errorf(CodeInvalidLinkedSession, "facebook: the access token was not issued to this app.")
}

// githubAdapter checks a GitHub user: the secure payload {id, code} is
// exchanged for an access token with the app's clientId and clientSecret;
// the insecure {id, access_token} is used as is. Either way GET /user must
// name authData.id. Options: clientId, clientSecret, apiURL, oauthURL.
type githubAdapter struct{}

func (githubAdapter) ValidateOptions(opts Options) error {
	if !opts.AllowInsecure && (opts.String("clientId", "") == "" || opts.String("clientSecret", "") == "") {
		return errors.New("clientId and clientSecret are required (or enableInsecureAuth for access tokens)")
	}
	return nil
}

func (githubAdapter) ValidateAuthData(ctx context.Context, data map[string]any, opts Options) (Result, error) {
	token := str(data, "access_token")
	switch code := str(data, "code"); {
	case code != "":
		form := url.Values{"client_id": {opts.String("clientId", "")}, "client_secret": {opts.String("clientSecret", "")}, "code": {code}}
		b, err := roundTrip(ctx, opts, http.MethodPost, strings.TrimSuffix(opts.String("oauthURL", githubOAuth), "/")+"/login/oauth/access_token",
			http.Header{"Accept": {"application/json"}, "Content-Type": {"application/x-www-form-urlencoded"}}, strings.NewReader(form.Encode()))
		if err != nil {
			return Result{}, invalid("github")
		}
		reply, err := decodeObject(b)
		if token = str(reply, "access_token"); err != nil || token == "" {
			return Result{}, invalid("github")
		}
	case token == "":
		return Result{}, schema.Errorf(CodeInvalidLinkedSession, "github: code is missing.")
	case !opts.AllowInsecure:
		return Result{}, insecurePayload("github")
	}
	user, err := getJSON(ctx, opts, strings.TrimSuffix(opts.String("apiURL", githubAPI), "/")+"/user", bearer(token))
	if err != nil || idString(user["id"]) != str(data, "id") {
		return Result{}, invalid("github")
	}
	// The code is spent; only the id is kept.
	return Result{Store: map[string]any{"id": data["id"]}}, nil
}

func (githubAdapter) ValidateAppID(context.Context, []string, map[string]any, Options) error {
	return nil
}

// microsoftAdapter checks {id, access_token} with Microsoft Graph's /me.
// Options: graphURL.
type microsoftAdapter struct{}

func (microsoftAdapter) ValidateOptions(Options) error { return nil }

func (microsoftAdapter) ValidateAuthData(ctx context.Context, data map[string]any, opts Options) (Result, error) {
	token := str(data, "access_token")
	if token == "" {
		return Result{}, schema.Errorf(CodeInvalidLinkedSession, "microsoft: access_token is missing.")
	}
	me, err := getJSON(ctx, opts, strings.TrimSuffix(opts.String("graphURL", microsoftGraph), "/")+"/v1.0/me", bearer(token))
	if err != nil || idString(me["id"]) != str(data, "id") {
		return Result{}, invalid("microsoft")
	}
	return Result{}, nil
}

func (microsoftAdapter) ValidateAppID(context.Context, []string, map[string]any, Options) error {
	return nil
}

// genericAdapter serves a provider configured with oauth2: true. With
// tokenIntrospectionEndpointUrl it asks the provider about
// authData.access_token (RFC 7662): the token must be active, its
// useridField (default sub) must be authData.id, and with appIds its
// appidField must name one of them; authorizationHeader is sent as is.
// With jwksUri instead it verifies authData.id_token as an OpenID Connect
// id token (issuer, clientId).
type genericAdapter struct{}

// genericKeys is shared by every generic provider: entries are per URL.
var genericKeys = &keyCache{sets: map[string]*cachedSet{}}

func (genericAdapter) ValidateOptions(opts Options) error {
	introspect, jwks := opts.String("tokenIntrospectionEndpointUrl", ""), opts.String("jwksUri", "")
	switch {
	case introspect == "" && jwks == "":
		return errors.New("oauth2 needs tokenIntrospectionEndpointUrl or jwksUri")
	case jwks != "" && (len(opts.Strings("clientId")) == 0 || len(opts.Strings("issuer")) == 0):
		return errors.New("oauth2 with jwksUri needs clientId and issuer")
	case opts.String("appidField", "") != "" && len(opts.Strings("appIds")) == 0:
		return errors.New("appidField needs appIds")
	}
	return nil
}

func (genericAdapter) ValidateAuthData(ctx context.Context, data map[string]any, opts Options) (Result, error) {
	if jwks := opts.String("jwksUri", ""); jwks != "" && str(data, "id_token") != "" {
		v := verifier{keys: genericKeys, jwks: jwks, issuers: opts.Strings("issuer"), audiences: opts.Strings("clientId"), opts: opts}
		if err := v.verify(ctx, str(data, "id_token"), str(data, "id")); err != nil {
			return Result{}, err
		}
		return Result{Store: map[string]any{"id": data["id"]}}, nil
	}
	endpoint := opts.String("tokenIntrospectionEndpointUrl", "")
	token := str(data, "access_token")
	if endpoint == "" || token == "" {
		return Result{}, schema.Errorf(CodeInvalidLinkedSession, "%s: access_token is missing.", opts.Provider)
	}
	reply, err := introspect(ctx, opts, endpoint, token)
	if err != nil {
		return Result{}, invalid(opts.Provider)
	}
	if active, _ := reply["active"].(bool); !active || idString(reply[opts.String("useridField", "sub")]) != str(data, "id") {
		return Result{}, invalid(opts.Provider)
	}
	return Result{}, nil
}

func (genericAdapter) ValidateAppID(ctx context.Context, appIDs []string, data map[string]any, opts Options) error {
	field := opts.String("appidField", "")
	if field == "" || len(appIDs) == 0 || str(data, "access_token") == "" {
		return nil
	}
	reply, err := introspect(ctx, opts, opts.String("tokenIntrospectionEndpointUrl", ""), str(data, "access_token"))
	if err != nil {
		return invalid(opts.Provider)
	}
	var got []string
	switch v := reply[field].(type) {
	case string:
		got = []string{v}
	case []any:
		for _, e := range v {
			got = append(got, idString(e))
		}
	}
	for _, id := range got {
		for _, want := range appIDs {
			if id == want {
				return nil
			}
		}
	}
	return schema.Errorf(CodeInvalidLinkedSession, "%s: the access token was not issued to this app.", opts.Provider)
}

func introspect(ctx context.Context, opts Options, endpoint, token string) (map[string]any, error) {
	header := http.Header{"Content-Type": {"application/x-www-form-urlencoded"}, "Accept": {"application/json"}}
	if h := opts.String("authorizationHeader", ""); h != "" {
		header.Set("Authorization", h)
	}
	b, err := roundTrip(ctx, opts, http.MethodPost, endpoint, header, strings.NewReader(url.Values{"token": {token}}.Encode()))
	if err != nil {
		return nil, err
	}
	return decodeObject(b)
}
