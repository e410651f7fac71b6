package push

import (
	"bytes"
	"context"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2/jwt"
)

// FCM defaults: Google's endpoint and the OAuth scope of FCM HTTP v1.
const (
	DefaultFCMEndpoint = "https://fcm.googleapis.com"
	fcmScope           = "https://www.googleapis.com/auth/firebase.messaging"
	// fcmParallel is how many sends one batch has in flight.
	fcmParallel = 8
	// fcmMaxReply bounds the bytes read from any FCM or token reply.
	fcmMaxReply = 64 << 10
)

// FCMOptions configure the FCM HTTP v1 adapter.
type FCMOptions struct {
	// ProjectID is the Firebase project; empty takes the service
	// account's project_id.
	ProjectID string
	// ServiceAccount is the service account key file's JSON.
	ServiceAccount []byte
	// Endpoint replaces DefaultFCMEndpoint; TokenURI the service
	// account's token_uri (tests, proxies).
	Endpoint, TokenURI string
	Client             *http.Client
}

// FCMAdapter delivers through Firebase Cloud Messaging's HTTP v1 API, one
// request per device, authenticated with an OAuth token obtained by a
// service-account JWT (RS256) and renewed before it expires.
type FCMAdapter struct {
	sendURL string
	oauth   *jwt.Config // the service account's JWT-bearer token flow
	client  *http.Client

	mu      sync.Mutex
	token   string
	expires time.Time
}

type serviceAccount struct {
	ProjectID    string `json:"project_id"`
	PrivateKeyID string `json:"private_key_id"`
	PrivateKey   string `json:"private_key"`
	ClientEmail  string `json:"client_email"`
	TokenURI     string `json:"token_uri"`
}

// NewFCM reads the service account and returns the adapter.
func NewFCM(o FCMOptions) (*FCMAdapter, error) {
	var sa serviceAccount
	if err := json.Unmarshal(o.ServiceAccount, &sa); err != nil {
		return nil, fmt.Errorf("fcm service account: %w", err)
	}
	block, _ := pem.Decode([]byte(sa.PrivateKey))
	if block == nil || sa.ClientEmail == "" {
		return nil, errors.New("fcm service account: no private_key or client_email")
	}
	parsed, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("fcm service account private_key: %w", err)
	}
	if _, ok := parsed.(*rsa.PrivateKey); !ok {
		return nil, errors.New("fcm service account: private_key is not an RSA key")
	}
	tokenURI := o.TokenURI
	if tokenURI == "" {
		tokenURI = sa.TokenURI
	}
	a := &FCMAdapter{client: o.Client, oauth: &jwt.Config{Email: sa.ClientEmail, PrivateKey: []byte(sa.PrivateKey),
		PrivateKeyID: sa.PrivateKeyID, Scopes: []string{fcmScope}, TokenURL: tokenURI, Expires: time.Hour}}
	project := o.ProjectID
	if project == "" {
		project = sa.ProjectID
	}
	if project == "" || tokenURI == "" {
		return nil, errors.New("fcm: the project id and the token URI are required")
	}
	endpoint := o.Endpoint
	if endpoint == "" {
		endpoint = DefaultFCMEndpoint
	}
	a.sendURL = strings.TrimSuffix(endpoint, "/") + "/v1/projects/" + url.PathEscape(project) + "/messages:send"
	if a.client == nil {
		// Keep one idle connection per send in flight: the default two
		// would open and close connections on every batch.
		transport := &http.Transport{Proxy: http.ProxyFromEnvironment, ForceAttemptHTTP2: true,
			MaxIdleConnsPerHost: fcmParallel, IdleConnTimeout: 90 * time.Second, TLSHandshakeTimeout: 10 * time.Second}
		a.client = &http.Client{Transport: transport, Timeout: 30 * time.Second}
	}
	return a, nil
}

// Send delivers to each device, a few at a time.
func (a *FCMAdapter) Send(ctx context.Context, n Notification, devices []Device) ([]Result, error) {
	token, err := a.accessToken(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Result, len(devices))
	sem := make(chan struct{}, fcmParallel)
	var wg sync.WaitGroup
	for i, d := range devices {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			out[i] = a.sendOne(ctx, token, n, d)
		}()
	}
	wg.Wait()
	return out, nil
}

func (a *FCMAdapter) sendOne(ctx context.Context, token string, n Notification, d Device) Result {
	body, _ := json.Marshal(map[string]any{"message": fcmMessage(n, d)})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.sendURL, bytes.NewReader(body))
	if err != nil {
		return Result{ObjectID: d.ObjectID, Outcome: Failed, Reason: "bad request"}
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	res, err := a.client.Do(req)
	if err != nil {
		return Result{ObjectID: d.ObjectID, Outcome: Failed, Reason: "unreachable"}
	}
	defer res.Body.Close()
	reply, _ := io.ReadAll(io.LimitReader(res.Body, fcmMaxReply))
	if res.StatusCode == http.StatusOK {
		return Result{ObjectID: d.ObjectID, Outcome: Sent}
	}
	if res.StatusCode == http.StatusUnauthorized {
		a.forgetToken(token) // revoked early: the next batch gets a new one
	}
	code := fcmErrorCode(reply, res.StatusCode)
	if code == "UNREGISTERED" || (code == "INVALID_ARGUMENT" && strings.Contains(string(reply), "registration token")) {
		return Result{ObjectID: d.ObjectID, Outcome: BadToken, Reason: code}
	}
	return Result{ObjectID: d.ObjectID, Outcome: Failed, Reason: code}
}

// fcmErrorCode reads the FCM error code of a reply (details' errorCode,
// else the status), or the HTTP status.
func fcmErrorCode(reply []byte, status int) string {
	var e struct {
		Error struct {
			Status  string `json:"status"`
			Details []struct {
				ErrorCode string `json:"errorCode"`
			} `json:"details"`
		} `json:"error"`
	}
	if json.Unmarshal(reply, &e) == nil {
		for _, d := range e.Error.Details {
			if d.ErrorCode != "" {
				return d.ErrorCode
			}
		}
		if e.Error.Status != "" {
			return e.Error.Status
		}
	}
	return fmt.Sprintf("HTTP %d", status)
}

// forgetToken drops the kept access token if it is still token.
func (a *FCMAdapter) forgetToken(token string) {
	a.mu.Lock()
	if a.token == token {
		a.token = ""
	}
	a.mu.Unlock()
}
