// Package pushtest runs local servers that speak the delivery services'
// real protocols, for tests and benchmarks of push on this machine (which
// reaches no outside service): an APNs provider API over HTTP/2 with TLS,
// and FCM HTTP v1 with its OAuth token exchange. Device tokens pick the
// answer: "dead" is an unregistered device, "bad" a malformed token,
// "busy" a throttled one; "devonly" is refused by a production APNs
// server and delivered by a development one; anything else is delivered.
package pushtest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Delivery is one accepted message: its headers and JSON body.
type Delivery struct {
	Header http.Header
	Body   map[string]any
}

// recorder keeps accepted messages by device token, up to Keep of them
// (a benchmark of 100,000 devices keeps none).
type recorder struct {
	mu        sync.Mutex
	keep      int
	delivered map[string]Delivery
	count     atomic.Int64
	requests  atomic.Int64
}

func (r *recorder) record(token string, d Delivery) {
	r.count.Add(1)
	r.mu.Lock()
	if r.keep < 0 || len(r.delivered) < r.keep {
		r.delivered[token] = d
	}
	r.mu.Unlock()
}

// Got returns the message delivered to a device token.
func (r *recorder) Got(token string) (Delivery, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	d, ok := r.delivered[token]
	return d, ok
}

// Delivered counts accepted messages; Requests every request.
func (r *recorder) Delivered() int64 { return r.count.Load() }
func (r *recorder) Requests() int64  { return r.requests.Load() }

// APNs is a local APNs provider API.
type APNs struct {
	*httptest.Server
	recorder
	// Development marks a sandbox server: it accepts "devonly".
	Development bool
	// ExpireOnce makes the next authenticated request answer
	// ExpiredProviderToken.
	ExpireOnce atomic.Bool
	// KeyID and TeamID are what provider tokens must name.
	KeyID, TeamID string
	pub           *ecdsa.PublicKey
}

// NewAPNs starts an APNs server over HTTP/2 and TLS. With pub, requests
// must carry an ES256 provider token signed by its key naming keyID and
// teamID; with clientCAs, a client certificate from those CAs instead.
// keep bounds the deliveries remembered (-1: all). Close it when done.
func NewAPNs(pub *ecdsa.PublicKey, keyID, teamID string, clientCAs *x509.CertPool, keep int) *APNs {
	a := &APNs{pub: pub, KeyID: keyID, TeamID: teamID}
	a.keep, a.delivered = keep, map[string]Delivery{}
	a.Server = httptest.NewUnstartedServer(http.HandlerFunc(a.serve))
	a.EnableHTTP2 = true
	if clientCAs != nil {
		a.TLS = &tls.Config{ClientCAs: clientCAs, ClientAuth: tls.RequireAndVerifyClientCert}
	}
	a.StartTLS()
	return a
}

// Trust returns a pool trusting this server's certificate.
func (a *APNs) Trust(pool *x509.CertPool) *x509.CertPool {
	if pool == nil {
		pool = x509.NewCertPool()
	}
	pool.AddCert(a.Certificate())
	return pool
}

func apnsReply(w http.ResponseWriter, status int, reason string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"reason": reason})
}

func (a *APNs) serve(w http.ResponseWriter, r *http.Request) {
	a.requests.Add(1)
	if r.ProtoMajor != 2 {
		apnsReply(w, http.StatusBadRequest, "HTTP/2 required")
		return
	}
	token, ok := strings.CutPrefix(r.URL.Path, "/3/device/")
	if r.Method != http.MethodPost || !ok {
		apnsReply(w, http.StatusNotFound, "BadPath")
		return
	}
	if a.pub != nil {
		bearer, _ := strings.CutPrefix(r.Header.Get("Authorization"), "bearer ")
		if !a.validProviderToken(bearer) {
			apnsReply(w, http.StatusForbidden, "InvalidProviderToken")
			return
		}
		if a.ExpireOnce.CompareAndSwap(true, false) {
			apnsReply(w, http.StatusForbidden, "ExpiredProviderToken")
			return
		}
	}
	if r.Header.Get("apns-topic") == "" {
		apnsReply(w, http.StatusBadRequest, "MissingTopic")
		return
	}
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		apnsReply(w, http.StatusBadRequest, "PayloadEmpty")
		return
	}
	switch {
	case token == "dead":
		apnsReply(w, http.StatusGone, "Unregistered")
	case token == "bad", token == "devonly" && !a.Development:
		apnsReply(w, http.StatusBadRequest, "BadDeviceToken")
	case token == "busy":
		apnsReply(w, http.StatusTooManyRequests, "TooManyRequests")
	default:
		a.record(token, Delivery{Header: r.Header.Clone(), Body: body})
		w.Header().Set("apns-id", "00000000-0000-4000-8000-000000000001")
		w.WriteHeader(http.StatusOK)
	}
}

// validProviderToken checks a provider token as Apple does: ES256 over
// header.claims, naming the key id and team id, with an issue time.
func (a *APNs) validProviderToken(token string) bool {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return false
	}
	var header, claims map[string]any
	for i, into := range []*map[string]any{&header, &claims} {
		raw, err := base64.RawURLEncoding.DecodeString(parts[i])
		if err != nil || json.Unmarshal(raw, into) != nil {
			return false
		}
	}
	if header["alg"] != "ES256" || header["kid"] != a.KeyID || claims["iss"] != a.TeamID || claims["iat"] == nil {
		return false
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || len(sig) != 64 {
		return false
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	return ecdsa.Verify(a.pub, sum[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:]))
}

// FCM is a local FCM HTTP v1 server with its token URI (/token), for the
// project "proj".
type FCM struct {
	*httptest.Server
	recorder
	key    *rsa.PrivateKey
	tokens atomic.Int32
	mu     sync.Mutex
	valid  string // the access token sends must carry
}

// Email is the service account's client_email.
const Email = "push@proj.iam.gserviceaccount.com"

// scope is the OAuth scope FCM HTTP v1 needs.
const scope = "https://www.googleapis.com/auth/firebase.messaging"

// NewFCM starts an FCM server; keep bounds the deliveries remembered
// (-1: all). Close it when done.
func NewFCM(keep int) (*FCM, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	f := &FCM{key: key}
	f.keep, f.delivered = keep, map[string]Delivery{}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /token", f.token)
	mux.HandleFunc("POST /v1/projects/proj/messages:send", f.send)
	f.Server = httptest.NewServer(mux)
	return f, nil
}

// TokenExchanges counts access tokens issued.
func (f *FCM) TokenExchanges() int { return int(f.tokens.Load()) }

// Revoke makes the issued access token invalid.
func (f *FCM) Revoke() { f.mu.Lock(); f.valid = "revoked"; f.mu.Unlock() }

func (f *FCM) token(w http.ResponseWriter, r *http.Request) {
	if r.FormValue("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer" || !f.validJWT(r.FormValue("assertion")) {
		http.Error(w, `{"error":"invalid_grant"}`, http.StatusBadRequest)
		return
	}
	tok := fmt.Sprintf("at-%d", f.tokens.Add(1))
	f.mu.Lock()
	f.valid = tok
	f.mu.Unlock()
	fmt.Fprintf(w, `{"access_token":%q,"expires_in":3600,"token_type":"Bearer"}`, tok)
}

func (f *FCM) send(w http.ResponseWriter, r *http.Request) {
	f.requests.Add(1)
	f.mu.Lock()
	valid := f.valid
	f.mu.Unlock()
	if r.Header.Get("Authorization") != "Bearer "+valid {
		http.Error(w, `{"error":{"code":401,"status":"UNAUTHENTICATED"}}`, http.StatusUnauthorized)
		return
	}
	var body struct{ Message map[string]any }
	json.NewDecoder(r.Body).Decode(&body)
	tok, _ := body.Message["token"].(string)
	switch tok {
	case "dead":
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`{"error":{"code":404,"status":"NOT_FOUND","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"UNREGISTERED"}]}}`))
	case "busy":
		w.WriteHeader(http.StatusTooManyRequests)
		w.Write([]byte(`{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","details":[{"errorCode":"QUOTA_EXCEEDED"}]}}`))
	default:
		f.record(tok, Delivery{Header: r.Header.Clone(), Body: body.Message})
		w.Write([]byte(`{"name":"projects/proj/messages/1"}`))
	}
}

// validJWT checks the RS256 signature and the claims the token URI needs.
func (f *FCM) validJWT(s string) bool {
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return false
	}
	enc := base64.RawURLEncoding
	sig, err := enc.DecodeString(parts[2])
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err != nil || rsa.VerifyPKCS1v15(&f.key.PublicKey, crypto.SHA256, sum[:], sig) != nil {
		return false
	}
	var h, c map[string]any
	for i, into := range []*map[string]any{&h, &c} {
		raw, err := enc.DecodeString(parts[i])
		if err != nil || json.Unmarshal(raw, into) != nil {
			return false
		}
	}
	exp, _ := c["exp"].(float64)
	return h["alg"] == "RS256" && h["kid"] == "k1" && c["iss"] == Email && c["aud"] == f.URL+"/token" &&
		c["scope"] == scope && time.Unix(int64(exp), 0).After(time.Now())
}

// ServiceAccount is a service account key file for this server's key.
func (f *FCM) ServiceAccount() []byte {
	der, _ := x509.MarshalPKCS8PrivateKey(f.key)
	b, _ := json.Marshal(map[string]string{"type": "service_account", "project_id": "proj", "private_key_id": "k1",
		"private_key":  string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email": Email, "token_uri": f.URL + "/token"})
	return b
}

// ClientCertificate is a self-signed client certificate standing in for
// an APNs push certificate: as PEM text (certificate, key), and a pool
// trusting it for NewAPNs's clientCAs.
func ClientCertificate() (certPEM, keyPEM string, pool *x509.CertPool, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(now.UnixNano()), NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, KeyUsage: x509.KeyUsageDigitalSignature}
	tmpl.Subject.CommonName = "Apple Push Services: com.example.app"
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return "", "", nil, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return "", "", nil, err
	}
	pool = x509.NewCertPool()
	pool.AddCert(leaf)
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return "", "", nil, err
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})), pool, nil
}
