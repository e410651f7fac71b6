package auth

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/quarrydata/quarry/schema"
)

const twitterAPI = "https://api.twitter.com"

// twitterAdapter checks {id, auth_token, auth_token_secret} (OAuth 1.0a
// user credentials) by calling verify_credentials signed with the app's
// consumer key and secret; id_str must be authData.id. Options:
// consumer_key, consumer_secret, apiURL.
type twitterAdapter struct{}

func (twitterAdapter) ValidateOptions(opts Options) error {
	if opts.String("consumer_key", "") == "" || opts.String("consumer_secret", "") == "" {
		return errors.New("consumer_key and consumer_secret are required")
	}
	return nil
}

func (twitterAdapter) ValidateAuthData(ctx context.Context, data map[string]any, opts Options) (Result, error) {
	token, secret := str(data, "auth_token"), str(data, "auth_token_secret")
	if token == "" || secret == "" {
		return Result{}, schema.Errorf(CodeInvalidLinkedSession, "twitter: auth_token and auth_token_secret are required.")
	}
	u := strings.TrimSuffix(opts.String("apiURL", twitterAPI), "/") + "/1.1/account/verify_credentials.json"
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	o := oauth1{consumerKey: opts.String("consumer_key", ""), consumerSecret: opts.String("consumer_secret", ""),
		token: token, tokenSecret: secret, timestamp: now().Unix(), nonce: nonce()}
	me, err := getJSON(ctx, opts, u, http.Header{"Authorization": {o.header(http.MethodGet, u)}})
	if err != nil || str(me, "id_str") != str(data, "id") {
		return Result{}, invalid("twitter")
	}
	return Result{}, nil
}

func (twitterAdapter) ValidateAppID(context.Context, []string, map[string]any, Options) error {
	return nil
}

// oauth1 signs one request with HMAC-SHA1 (RFC 5849). The request URL
// carries no query parameters.
type oauth1 struct {
	consumerKey, consumerSecret string
	token, tokenSecret          string
	timestamp                   int64
	nonce                       string
}

func (o oauth1) params() map[string]string {
	return map[string]string{
		"oauth_consumer_key":     o.consumerKey,
		"oauth_nonce":            o.nonce,
		"oauth_signature_method": "HMAC-SHA1",
		"oauth_timestamp":        strconv.FormatInt(o.timestamp, 10),
		"oauth_token":            o.token,
		"oauth_version":          "1.0",
	}
}

// Signature is the base64 HMAC-SHA1 of the signature base string.
func (o oauth1) signature(method, u string) string {
	p := o.params()
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	pairs := make([]string, len(keys))
	for i, k := range keys {
		pairs[i] = percent(k) + "=" + percent(p[k])
	}
	base := method + "&" + percent(u) + "&" + percent(strings.Join(pairs, "&"))
	mac := hmac.New(sha1.New, []byte(percent(o.consumerSecret)+"&"+percent(o.tokenSecret)))
	mac.Write([]byte(base))
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

func (o oauth1) header(method, u string) string {
	p := o.params()
	p["oauth_signature"] = o.signature(method, u)
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = percent(k) + `="` + percent(p[k]) + `"`
	}
	return "OAuth " + strings.Join(parts, ", ")
}

// percent encodes everything but RFC 3986's unreserved characters.
func percent(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || strings.IndexByte("-._~", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteString("%" + strings.ToUpper(hex.EncodeToString([]byte{c})))
	}
	return b.String()
}

func nonce() string {
	var raw [16]byte
	if _, err := rand.Read(raw[:]); err != nil {
		panic("crypto/rand failed: " + err.Error())
	}
	return hex.EncodeToString(raw[:])
}
