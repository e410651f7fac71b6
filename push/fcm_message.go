package push

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"golang.org/x/oauth2"
)

// apsKeys are the payload keys that go into an iOS aps dictionary.
var apsKeys = map[string]string{"alert": "alert", "badge": "badge", "sound": "sound",
	"content-available": "content-available", "mutable-content": "mutable-content", "category": "category"}

// fcmMessage builds one device's FCM v1 message: the payload as string
// data (FCM data values are strings), a notification from title and
// alert, and for iOS an aps dictionary.
func fcmMessage(n Notification, d Device) map[string]any {
	payload := n.Payload(d)
	data := make(map[string]string, len(payload))
	for k, v := range payload {
		if s, ok := v.(string); ok {
			data[k] = s
		} else {
			b, _ := json.Marshal(v)
			data[k] = string(b)
		}
	}
	msg := map[string]any{"token": d.DeviceToken, "data": data}
	note := map[string]any{}
	if t, ok := payload["title"].(string); ok {
		note["title"] = t
	}
	switch alert := payload["alert"].(type) {
	case string:
		note["body"] = alert
	case map[string]any:
		if b, ok := alert["body"].(string); ok {
			note["body"] = b
		}
		if t, ok := alert["title"].(string); ok {
			note["title"] = t
		}
	}
	if len(note) > 0 {
		msg["notification"] = note
	}
	if n.Expiry > 0 {
		ttl := max(n.Expiry-time.Now().Unix(), 0)
		msg["android"] = map[string]any{"ttl": strconv.FormatInt(ttl, 10) + "s"}
	}
	if d.DeviceType == "ios" || d.DeviceType == "osx" || d.DeviceType == "tvos" {
		aps := map[string]any{}
		for k, name := range apsKeys {
			if v, ok := payload[k]; ok {
				aps[name] = v
			}
		}
		apns := map[string]any{"payload": map[string]any{"aps": aps}}
		if n.Expiry > 0 {
			apns["headers"] = map[string]string{"apns-expiration": strconv.FormatInt(n.Expiry, 10)}
		}
		msg["apns"] = apns
	}
	return msg
}

// accessToken returns the OAuth token, exchanging a fresh service-account
// JWT for one (x/oauth2/jwt: the RS256 assertion and the JWT-bearer grant)
// when the kept one is missing or about to expire. The lock is not held
// across the exchange, which ends with ctx.
func (a *FCMAdapter) accessToken(ctx context.Context) (string, error) {
	now := time.Now()
	a.mu.Lock()
	token, expires := a.token, a.expires
	a.mu.Unlock()
	if token != "" && now.Add(time.Minute).Before(expires) {
		return token, nil
	}
	client := &http.Client{Transport: ctxTransport{ctx: ctx, base: a.client.Transport}, Timeout: a.client.Timeout}
	// A new TokenSource per exchange: oauth2's own reuse cannot be told
	// that FCM revoked a token early (forgetToken).
	tok, err := a.oauth.TokenSource(context.WithValue(ctx, oauth2.HTTPClient, client)).Token()
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) {
			return "", fmt.Errorf("fcm token: the token URI answered HTTP %d", re.Response.StatusCode)
		}
		return "", fmt.Errorf("fcm token: %w", err)
	}
	if tok.AccessToken == "" {
		return "", errors.New("fcm token: the token URI answered no access token")
	}
	a.mu.Lock()
	a.token, a.expires = tok.AccessToken, tok.Expiry
	a.mu.Unlock()
	return tok.AccessToken, nil
}

// ctxTransport sends every request with ctx: x/oauth2/jwt posts without
// the caller's context, and a send whose context ended must not wait for
// the token URI.
type ctxTransport struct {
	ctx  context.Context
	base http.RoundTripper
}

func (t ctxTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	base := t.base
	if base == nil {
		base = http.DefaultTransport
	}
	return base.RoundTrip(r.WithContext(t.ctx))
}
