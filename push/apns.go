package push

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
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

// APNs environments: which hosts a device token is tried on.
const (
	APNsEnvProduction  = "production"
	APNsEnvDevelopment = "development"
	// APNsEnvBoth tries production first and, for a token production
	// calls BadDeviceToken, development (an app built for testing).
	APNsEnvBoth = "both"
)

// APNsOptions configure the APNs adapter: token authentication (a .p8
// signing key with its key id and team id, valid for every topic of the
// team) or certificate authentication (a client certificate, valid for its
// own topic).
type APNsOptions struct {
	// Topics are the bundle ids the app ships under. A device whose
	// appIdentifier is one of them is sent with that topic; a device
	// without one gets the first. Required.
	Topics []string
	// Environment is APNsEnvProduction (default), APNsEnvDevelopment or
	// APNsEnvBoth.
	Environment string
	// Token authentication: the PKCS#8 PEM key from Apple's developer
	// site, its key id and the team id.
	TokenKey      []byte
	KeyID, TeamID string
	// Certificate authentication: the client certificate and key.
	Certificate *tls.Certificate
	// ProductionURL and DevelopmentURL replace Apple's hosts (tests,
	// proxies).
	ProductionURL, DevelopmentURL string
	// RootCAs, when set, are the CAs trusted for the APNs hosts (tests).
	RootCAs *x509.CertPool
}

// APNsAdapter delivers to Apple devices through the APNs HTTP/2 provider
// API, one request per device.
type APNsAdapter struct {
	topics []string
	hosts  []string // tried in order for a BadDeviceToken
	client *http.Client

	key           *ecdsa.PrivateKey
	keyID, teamID string

	mu       sync.Mutex
	token    string
	tokenAt  time.Time
	tokenNow func() time.Time
}

// NewAPNs checks the options and returns the adapter.
func NewAPNs(o APNsOptions) (*APNsAdapter, error) {
	if len(o.Topics) == 0 {
		return nil, errors.New("apns: at least one topic (bundle id) is required")
	}
	a := &APNsAdapter{topics: o.Topics, keyID: o.KeyID, teamID: o.TeamID, tokenNow: time.Now}
	production, development := APNsProduction, APNsDevelopment
	if o.ProductionURL != "" {
		production = strings.TrimSuffix(o.ProductionURL, "/")
	}
	if o.DevelopmentURL != "" {
		development = strings.TrimSuffix(o.DevelopmentURL, "/")
	}
	switch o.Environment {
	case "", APNsEnvProduction:
		a.hosts = []string{production}
	case APNsEnvDevelopment:
		a.hosts = []string{development}
	case APNsEnvBoth:
		a.hosts = []string{production, development}
	default:
		return nil, fmt.Errorf("apns: environment must be %q, %q or %q", APNsEnvProduction, APNsEnvDevelopment, APNsEnvBoth)
	}
	tlsConf := &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: o.RootCAs}
	switch {
	case o.TokenKey != nil && o.Certificate != nil:
		return nil, errors.New("apns: configure a token key or a certificate, not both")
	case o.TokenKey != nil:
		key, err := parseP8(o.TokenKey)
		if err != nil {
			return nil, err
		}
		if o.KeyID == "" || o.TeamID == "" {
			return nil, errors.New("apns: token authentication needs the key id and the team id")
		}
		a.key = key
	case o.Certificate != nil:
		tlsConf.Certificates = []tls.Certificate{*o.Certificate}
	default:
		return nil, errors.New("apns: a token key (.p8) or a client certificate is required")
	}
	// APNs speaks only HTTP/2: the transport negotiates it over TLS.
	transport := &http.Transport{TLSClientConfig: tlsConf, ForceAttemptHTTP2: true,
		MaxIdleConnsPerHost: 4, IdleConnTimeout: 5 * time.Minute}
	a.client = &http.Client{Transport: transport, Timeout: 30 * time.Second}
	return a, nil
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

// topic is the apns-topic of a device: its appIdentifier when it is one of
// the configured topics.
func (a *APNsAdapter) topic(d Device) (string, bool) {
	if d.AppIdentifier == "" {
		return a.topics[0], true
	}
	for _, t := range a.topics {
		if t == d.AppIdentifier {
			return t, true
		}
	}
	return "", false
}

func (a *APNsAdapter) sendOne(ctx context.Context, n Notification, d Device) Result {
	topic, ok := a.topic(d)
	if !ok {
		return Result{ObjectID: d.ObjectID, Outcome: Failed, Reason: "no APNs topic for " + d.AppIdentifier}
	}
	payload, headers := apnsRequest(n, d)
	body, err := json.Marshal(payload)
	if err != nil {
		return Result{ObjectID: d.ObjectID, Outcome: Failed, Reason: "unencodable payload"}
	}
	headers.Set("apns-topic", topic)
	var r Result
	for _, host := range a.hosts {
		r = a.post(ctx, host, d, body, headers)
		if r.Reason != "BadDeviceToken" {
			break
		}
	}
	return r
}

// post sends one request, renewing the provider token once when APNs
// says it expired.
func (a *APNsAdapter) post(ctx context.Context, host string, d Device, body []byte, headers http.Header) Result {
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, host+"/3/device/"+d.DeviceToken, bytes.NewReader(body))
		if err != nil {
			return Result{ObjectID: d.ObjectID, Outcome: Failed, Reason: "bad request"}
		}
		req.Header = headers.Clone()
		req.Header.Set("Content-Type", "application/json")
		var token string
		if a.key != nil {
			if token, err = a.providerToken(); err != nil {
				return Result{ObjectID: d.ObjectID, Outcome: Failed, Reason: err.Error()}
			}
			req.Header.Set("Authorization", "bearer "+token)
		}
		res, err := a.client.Do(req)
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
			a.forgetToken(token)
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
// with, reused until it ages.
func (a *APNsAdapter) providerToken() (string, error) {
	now := a.tokenNow()
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.token != "" && now.Sub(a.tokenAt) < apnsTokenAge {
		return a.token, nil
	}
	enc := base64.RawURLEncoding
	header, _ := json.Marshal(map[string]string{"alg": "ES256", "kid": a.keyID})
	claims, _ := json.Marshal(map[string]any{"iss": a.teamID, "iat": now.Unix()})
	signing := enc.EncodeToString(header) + "." + enc.EncodeToString(claims)
	sum := sha256.Sum256([]byte(signing))
	r, s, err := ecdsa.Sign(rand.Reader, a.key, sum[:])
	if err != nil {
		return "", fmt.Errorf("apns: signing the provider token: %w", err)
	}
	// JWS wants the two 32-byte halves, not ASN.1.
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	a.token, a.tokenAt = signing+"."+enc.EncodeToString(sig), now
	return a.token, nil
}

func (a *APNsAdapter) forgetToken(token string) {
	a.mu.Lock()
	if a.token == token {
		a.token = ""
	}
	a.mu.Unlock()
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

// Apple device types go to APNs.
func isAppleDevice(deviceType string) bool {
	switch deviceType {
	case "ios", "osx", "tvos", "watchos":
		return true
	}
	return false
}

// RouterAdapter sends Apple devices through Apple and every other device
// through Other; a device whose adapter is missing fails with a reason.
// The sender's batches hold one deviceType each, so a batch goes whole to
// one of them.
type RouterAdapter struct {
	Apple, Other Adapter
}

// Send picks the batch's adapter by its deviceType.
func (r RouterAdapter) Send(ctx context.Context, n Notification, devices []Device) ([]Result, error) {
	if len(devices) == 0 {
		return nil, nil
	}
	target := r.Other
	if isAppleDevice(devices[0].DeviceType) {
		target = r.Apple
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
