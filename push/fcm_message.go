package push

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
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

// accessToken returns the OAuth token, exchanging a fresh signed JWT when
// the kept one is missing or about to expire. The lock is not held across
// the exchange.
func (a *FCMAdapter) accessToken(ctx context.Context) (string, error) {
	now := time.Now()
	a.mu.Lock()
	token, expires := a.token, a.expires
	a.mu.Unlock()
	if token != "" && now.Add(time.Minute).Before(expires) {
		return token, nil
	}
	assertion, err := a.signedJWT(now)
	if err != nil {
		return "", err
	}
	form := url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:jwt-bearer"}, "assertion": {assertion}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.tokenURI, strings.NewReader(form.Encode()))
	if err != nil {
		return "", fmt.Errorf("fcm token: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := a.client.Do(req)
	if err != nil {
		return "", fmt.Errorf("fcm token: %w", err)
	}
	defer res.Body.Close()
	var reply struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   int64  `json:"expires_in"`
	}
	body, _ := io.ReadAll(io.LimitReader(res.Body, fcmMaxReply))
	if res.StatusCode != http.StatusOK || json.Unmarshal(body, &reply) != nil || reply.AccessToken == "" {
		return "", fmt.Errorf("fcm token: the token URI answered HTTP %d", res.StatusCode)
	}
	a.mu.Lock()
	a.token, a.expires = reply.AccessToken, now.Add(time.Duration(reply.ExpiresIn)*time.Second)
	a.mu.Unlock()
	return reply.AccessToken, nil
}

// signedJWT is the service account's assertion for the token URI.
func (a *FCMAdapter) signedJWT(now time.Time) (string, error) {
	enc := base64.RawURLEncoding
	header, _ := json.Marshal(map[string]string{"alg": "RS256", "typ": "JWT", "kid": a.keyID})
	claims, _ := json.Marshal(map[string]any{"iss": a.email, "scope": fcmScope, "aud": a.tokenURI,
		"iat": now.Unix(), "exp": now.Add(time.Hour).Unix()})
	signing := enc.EncodeToString(header) + "." + enc.EncodeToString(claims)
	sum := sha256.Sum256([]byte(signing))
	sig, err := rsa.SignPKCS1v15(rand.Reader, a.key, crypto.SHA256, sum[:])
	if err != nil {
		return "", fmt.Errorf("fcm: signing the token request: %w", err)
	}
	return signing + "." + enc.EncodeToString(sig), nil
}
