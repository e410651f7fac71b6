package push

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jws"
	"github.com/lestrrat-go/jwx/v3/jwt"
)

// APNs hosts and limits.
const (
	APNsProduction  = "https://api.push.apple.com"
	APNsDevelopment = "https://api.sandbox.push.apple.com"
	// apnsParallel is how many requests one batch has in flight; HTTP/2
	// multiplexes them over one connection per host.
	apnsParallel = 16
	// apnsTokenAge is how long a provider token is reused: Apple refuses
	// tokens older than an hour and throttles ones renewed more often
	// than every 20 minutes.
	apnsTokenAge = 40 * time.Minute
	apnsMaxReply = 16 << 10
)

// APNsProvider is one way to reach APNs: a topic (bundle id) on the
// production or the development host, with token authentication (a .p8
// signing key with its key id and team id) or certificate authentication
// (a client certificate).
type APNsProvider struct {
	Topic      string
	Production bool
	// Token authentication: the PKCS#8 PEM key from Apple's developer
	// site, its key id and the team id.
	TokenKey      []byte
	KeyID, TeamID string
	// Certificate authentication: the client certificate and key.
	Certificate *tls.Certificate
	// URL replaces Apple's host (tests, proxies).
	URL string
}

// APNsOptions configure the APNs adapter.
type APNsOptions struct {
	// Providers, in any order: for a device, those whose topic is its
	// appIdentifier are tried (all of them when none is), production
	// before development, until one delivers or says the token is gone.
	Providers []APNsProvider
	// RootCAs, when set, are the CAs trusted for the APNs hosts (tests).
	RootCAs *x509.CertPool
}

// APNsAdapter delivers to Apple devices through the APNs HTTP/2 provider
// API, one request per device.
type APNsAdapter struct {
	all     []*apnsProvider // production first
	byTopic map[string][]*apnsProvider
}

type apnsProvider struct {
	topic  string
	host   string
	client *http.Client

	key           *ecdsa.PrivateKey
	keyID, teamID string

	mu      sync.Mutex
	token   string
	tokenAt time.Time
}

// NewAPNs checks the providers and returns the adapter.
func NewAPNs(o APNsOptions) (*APNsAdapter, error) {
	if len(o.Providers) == 0 {
		return nil, errors.New("apns: no provider configured")
	}
	a := &APNsAdapter{byTopic: map[string][]*apnsProvider{}}
	var shared *http.Client // token providers share one connection pool per host
	ordered := slices.Clone(o.Providers)
	slices.SortStableFunc(ordered, func(x, y APNsProvider) int {
		if x.Production == y.Production {
			return 0
		}
		if x.Production {
			return -1
		}
		return 1
	})
	for i, c := range ordered {
		if c.Topic == "" {
			return nil, fmt.Errorf("apns: provider %d has no topic (bundle id)", i+1)
		}
		p := &apnsProvider{topic: c.Topic, keyID: c.KeyID, teamID: c.TeamID, host: APNsDevelopment}
		if c.Production {
			p.host = APNsProduction
		}
		if c.URL != "" {
			p.host = strings.TrimSuffix(c.URL, "/")
		}
		switch {
		case c.TokenKey != nil && c.Certificate != nil:
			return nil, fmt.Errorf("apns %s: configure a token key or a certificate, not both", c.Topic)
		case c.TokenKey != nil:
			key, err := parseP8(c.TokenKey)
			if err != nil {
				return nil, err
			}
			if c.KeyID == "" || c.TeamID == "" {
				return nil, fmt.Errorf("apns %s: token authentication needs the key id and the team id", c.Topic)
			}
			p.key = key
			if shared == nil {
				shared = apnsClient(o.RootCAs, nil)
			}
			p.client = shared
		case c.Certificate != nil:
			p.client = apnsClient(o.RootCAs, c.Certificate)
		default:
			return nil, fmt.Errorf("apns %s: a token key (.p8) or a client certificate is required", c.Topic)
		}
		a.all = append(a.all, p)
		a.byTopic[c.Topic] = append(a.byTopic[c.Topic], p)
	}
	return a, nil
}

// apnsClient speaks HTTP/2 over TLS (the transport negotiates it), with a
// client certificate for certificate authentication.
func apnsClient(roots *x509.CertPool, cert *tls.Certificate) *http.Client {
	conf := &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: roots}
	if cert != nil {
		conf.Certificates = []tls.Certificate{*cert}
	}
	transport := &http.Transport{TLSClientConfig: conf, ForceAttemptHTTP2: true,
		MaxIdleConnsPerHost: 4, IdleConnTimeout: 5 * time.Minute}
	return &http.Client{Transport: transport, Timeout: 30 * time.Second}
}

// parseP8 reads Apple's signing key: PKCS#8 PEM holding a P-256 key.
func parseP8(pemBytes []byte) (*ecdsa.PrivateKey, error) {
	block, _ := pem.Decode(pemBytes)
	if block == nil {
		return nil, errors.New("apns: the token key is not PEM (expected the .p8 file from Apple)")
	}
	parsed, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("apns token key: %w", err)
	}
	key, ok := parsed.(*ecdsa.PrivateKey)
	if !ok {
		return nil, errors.New("apns: the token key is not an elliptic-curve (ES256) key")
	}
	return key, nil
}

// Send delivers to each device, a few at a time.
func (a *APNsAdapter) Send(ctx context.Context, n Notification, devices []Device) ([]Result, error) {
	out := make([]Result, len(devices))
	sem := make(chan struct{}, apnsParallel)
	var wg sync.WaitGroup
	for i, d := range devices {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			out[i] = a.sendOne(ctx, n, d)
		}()
	}
	wg.Wait()
	return out, nil
}

// providers are the ones to try for a device: its appIdentifier's, or
// all of them.
func (a *APNsAdapter) providers(d Device) []*apnsProvider {
	if list := a.byTopic[d.AppIdentifier]; len(list) > 0 {
		return list
	}
	return a.all
}

// sendOne tries the device's providers in order. A provider that calls
// the token bad may be the wrong topic or environment for it, so the next
// is tried; the token counts as bad only when every provider says so.
func (a *APNsAdapter) sendOne(ctx context.Context, n Notification, d Device) Result {
	payload, headers := apnsRequest(n, d)
	body, err := json.Marshal(payload)
	if err != nil {
		return Result{ObjectID: d.ObjectID, Outcome: Failed, Reason: "unencodable payload"}
	}
	var failed *Result
	var r Result
	for _, p := range a.providers(d) {
		r = p.post(ctx, d, body, headers)
		if r.Outcome == Sent || r.Reason == "Unregistered" {
			return r
		}
		if r.Outcome == Failed && failed == nil {
			failed = &r
		}
	}
	if failed != nil {
		return *failed
	}
	return r
}

// post sends one request, renewing the provider token once when APNs
// says it expired.
func (p *apnsProvider) post(ctx context.Context, d Device, body []byte, headers http.Header) Result {
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.host+"/3/device/"+d.DeviceToken, bytes.NewReader(body))
		if err != nil {
			return Result{ObjectID: d.ObjectID, Outcome: Failed, Reason: "bad request"}
		}
		req.Header = headers.Clone()
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("apns-topic", p.topic)
		var token string
		if p.key != nil {
			if token, err = p.providerToken(time.Now()); err != nil {
				return Result{ObjectID: d.ObjectID, Outcome: Failed, Reason: err.Error()}
			}
			req.Header.Set("Authorization", "bearer "+token)
		}
		res, err := p.client.Do(req)
		if err != nil {
			return Result{ObjectID: d.ObjectID, Outcome: Failed, Reason: "unreachable"}
		}
		reply, _ := io.ReadAll(io.LimitReader(res.Body, apnsMaxReply))
		res.Body.Close()
		if res.StatusCode == http.StatusOK {
			return Result{ObjectID: d.ObjectID, Outcome: Sent}
		}
		var e struct {
			Reason string `json:"reason"`
		}
		if json.Unmarshal(reply, &e) != nil || e.Reason == "" {
			e.Reason = "HTTP " + strconv.Itoa(res.StatusCode)
		}
		if e.Reason == "ExpiredProviderToken" && token != "" && attempt == 0 {
			p.forgetToken(token)
			continue
		}
		switch e.Reason {
		case "BadDeviceToken", "Unregistered", "DeviceTokenNotForTopic":
			return Result{ObjectID: d.ObjectID, Outcome: BadToken, Reason: e.Reason}
		}
		return Result{ObjectID: d.ObjectID, Outcome: Failed, Reason: e.Reason}
	}
}

// providerToken is the ES256 JWT APNs authenticates token-based providers
// with (the key id in its header, the team id and the issue time as its
// claims), signed by jwx and reused until it ages.
func (p *apnsProvider) providerToken(now time.Time) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.token != "" && now.Sub(p.tokenAt) < apnsTokenAge {
		return p.token, nil
	}
	claims, err := jwt.NewBuilder().Issuer(p.teamID).IssuedAt(now).Build()
	if err != nil {
		return "", fmt.Errorf("apns: the provider token's claims: %w", err)
	}
	header := jws.NewHeaders()
	if err := header.Set(jws.KeyIDKey, p.keyID); err != nil {
		return "", fmt.Errorf("apns: the provider token's header: %w", err)
	}
	signed, err := jwt.Sign(claims, jwt.WithKey(jwa.ES256(), p.key, jws.WithProtectedHeaders(header)))
	if err != nil {
		return "", fmt.Errorf("apns: signing the provider token: %w", err)
	}
	p.token, p.tokenAt = string(signed), now
	return p.token, nil
}

func (p *apnsProvider) forgetToken(token string) {
	p.mu.Lock()
	if p.token == token {
		p.token = ""
	}
	p.mu.Unlock()
}

// apnsRequest builds one device's APNs payload and headers: the aps
// dictionary from the Parse keys (title folded into the alert), every
// other key beside it, as iOS apps read custom keys from the top level.
func apnsRequest(n Notification, d Device) (map[string]any, http.Header) {
	payload := n.Payload(d)
	aps := map[string]any{}
	out := map[string]any{"aps": aps}
	for k, v := range payload {
		if name, ok := apsKeys[k]; ok {
			aps[name] = v
		} else if k != "title" {
			out[k] = v
		}
	}
	if title, ok := payload["title"].(string); ok {
		switch alert := aps["alert"].(type) {
		case string:
			aps["alert"] = map[string]any{"title": title, "body": alert}
		case map[string]any:
			if _, has := alert["title"]; !has {
				merged := make(map[string]any, len(alert)+1)
				for k, v := range alert {
					merged[k] = v
				}
				merged["title"] = title
				aps["alert"] = merged
			}
		default:
			aps["alert"] = map[string]any{"title": title}
		}
	}
	if thread, ok := payload["threadId"].(string); ok {
		aps["thread-id"] = thread
		delete(out, "threadId")
	}
	h := http.Header{}
	// A push that only wakes the app must be sent as background with
	// priority 5, or APNs refuses it.
	_, alert := aps["alert"]
	_, sound := aps["sound"]
	_, badge := aps["badge"]
	if n, _ := wholeNumber(aps["content-available"]); n == 1 && !alert && !sound && !badge {
		h.Set("apns-push-type", "background")
		h.Set("apns-priority", "5")
	} else {
		h.Set("apns-push-type", "alert")
		h.Set("apns-priority", "10")
	}
	if n.Expiry > 0 {
		h.Set("apns-expiration", strconv.FormatInt(n.Expiry, 10))
	}
	if id, ok := payload["collapse_id"].(string); ok {
		h.Set("apns-collapse-id", id)
		delete(out, "collapse_id")
	}
	return out, h
}

// AppleDeviceTypes are the deviceTypes APNs serves.
var AppleDeviceTypes = []string{"ios", "osx", "tvos", "watchos"}

// RouterAdapter sends each batch through its deviceType's adapter, or
// Default; a device with neither fails with a reason. The sender's
// batches hold one deviceType each, so a batch goes whole to one adapter.
type RouterAdapter struct {
	ByType  map[string]Adapter
	Default Adapter
}

// Send picks the batch's adapter by its deviceType.
func (r RouterAdapter) Send(ctx context.Context, n Notification, devices []Device) ([]Result, error) {
	if len(devices) == 0 {
		return nil, nil
	}
	target, ok := r.ByType[devices[0].DeviceType]
	if !ok {
		target = r.Default
	}
	if target == nil {
		out := make([]Result, len(devices))
		for i, d := range devices {
			out[i] = Result{ObjectID: d.ObjectID, Outcome: Failed, Reason: "no push adapter for deviceType " + d.DeviceType}
		}
		return out, nil
	}
	return target.Send(ctx, n, devices)
}
