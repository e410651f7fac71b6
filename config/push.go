package config

import (
	"errors"
	"fmt"
)

// Values of push.adapter.
const (
	PushAdapterNone = ""
	PushAdapterLog  = "log"
	PushAdapterFCM  = "fcm"
	PushAdapterAPNs = "apns"
	// PushAdapterNative sends Apple devices through APNs and every other
	// device through FCM.
	PushAdapterNative = "native"
)

// PushOptions is the push object: which adapter POST /push delivers
// through. Without one, POST /push answers 115.
type PushOptions struct {
	// Adapter is push.adapter: PushAdapterLog, PushAdapterFCM, or none.
	Adapter string
	// FCM is push.fcm: Firebase Cloud Messaging (HTTP v1).
	FCM FCMOptions
	// APNs is push.apns: Apple Push Notification service.
	APNs APNsOptions
	// IOS, OSX, TVOS and WatchOS are Parse Server's push.ios … entries
	// (one object or an array each): APNs credentials per device type,
	// read by APNsEntries.
	IOS, OSX, TVOS, WatchOS []map[string]any
	// Android is Parse Server's push.android.
	Android AndroidPushOptions
}

// AndroidPushOptions is push.android.
type AndroidPushOptions struct {
	// FirebaseServiceAccount is the service account key file for FCM.
	FirebaseServiceAccount string
	// APIKey is the legacy FCM server key, which no longer works.
	APIKey string
}

// APNsEntry is one Parse Server APNs entry: token authentication
// (TokenKey, KeyID, TeamID) or certificate authentication (PFX with its
// Passphrase, or Cert and Key). TokenKey, PFX, Cert and Key are file
// paths, or PEM text for TokenKey, Cert and Key.
type APNsEntry struct {
	Topic      string
	Production bool
	TokenKey   string
	KeyID      string
	TeamID     string
	PFX        string
	Passphrase string
	Cert, Key  string
}

// PlatformEntries returns the push.ios, push.osx, push.tvos and
// push.watchos entries by deviceType, checked.
func (p *PushOptions) PlatformEntries() (map[string][]APNsEntry, error) {
	out := map[string][]APNsEntry{}
	for typ, raw := range map[string][]map[string]any{"ios": p.IOS, "osx": p.OSX, "tvos": p.TVOS, "watchos": p.WatchOS} {
		for i, m := range raw {
			e, err := apnsEntry(m)
			if err != nil {
				return nil, fmt.Errorf("push.%s[%d]: %w", typ, i, err)
			}
			out[typ] = append(out[typ], e)
		}
	}
	return out, nil
}

// HasPlatforms reports whether any Parse Server platform key is set.
func (p *PushOptions) HasPlatforms() bool {
	return len(p.IOS)+len(p.OSX)+len(p.TVOS)+len(p.WatchOS) > 0 || p.Android != (AndroidPushOptions{})
}

func apnsEntry(m map[string]any) (APNsEntry, error) {
	var e APNsEntry
	str := func(key string) (string, error) {
		v, ok := m[key]
		if !ok || v == nil {
			return "", nil
		}
		s, ok := v.(string)
		if !ok {
			return "", fmt.Errorf("%s must be a string", key)
		}
		return s, nil
	}
	var err error
	for key, into := range map[string]*string{"topic": &e.Topic, "pfx": &e.PFX, "passphrase": &e.Passphrase, "cert": &e.Cert, "key": &e.Key} {
		if *into, err = str(key); err != nil {
			return e, err
		}
	}
	if e.Topic == "" {
		if e.Topic, err = str("bundleId"); err != nil {
			return e, err
		}
	}
	if v, ok := m["production"]; ok && v != nil {
		b, isBool := v.(bool)
		if !isBool {
			return e, errors.New("production must be true or false")
		}
		e.Production = b
	}
	if tok, ok := m["token"]; ok && tok != nil {
		t, isObj := tok.(map[string]any)
		if !isObj {
			return e, errors.New(`token must be an object {"key", "keyId", "teamId"}`)
		}
		for key, into := range map[string]*string{"key": &e.TokenKey, "keyId": &e.KeyID, "teamId": &e.TeamID} {
			s, isStr := t[key].(string)
			if !isStr || s == "" {
				return e, fmt.Errorf("token.%s is required", key)
			}
			*into = s
		}
	}
	switch {
	case e.Topic == "":
		return e, errors.New("topic (or bundleId) is required: the app's bundle id")
	case e.TokenKey != "" && (e.PFX != "" || e.Cert != ""):
		return e, errors.New("give a token or a certificate, not both")
	case e.TokenKey == "" && e.PFX == "" && e.Cert == "":
		return e, errors.New(`a token {"key", "keyId", "teamId"} or a certificate (pfx, or cert and key) is required`)
	case e.Cert != "" && e.Key == "":
		return e, errors.New("key is required with cert")
	}
	return e, nil
}

// APNsOptions is push.apns: token authentication (TokenKeyFile, KeyID,
// TeamID) or certificate authentication (CertFile, CertKeyFile).
type APNsOptions struct {
	// Topics is push.apns.topics: the app's bundle ids.
	Topics []string
	// Environment is push.apns.environment: production (default),
	// development, or both (production first).
	Environment string
	// TokenKeyFile is push.apns.tokenKeyFile: the .p8 signing key.
	TokenKeyFile string
	// KeyID and TeamID are push.apns.keyId and push.apns.teamId.
	KeyID, TeamID string
	// CertFile and CertKeyFile are push.apns.certFile and
	// push.apns.certKeyFile: the client certificate and its key (PEM).
	CertFile, CertKeyFile string
	// ProductionURL and DevelopmentURL replace Apple's hosts.
	ProductionURL, DevelopmentURL string
	// CAFile is push.apns.caFile: extra CAs to trust for the hosts.
	CAFile string
}

// FCMOptions is push.fcm.
type FCMOptions struct {
	// ProjectID is push.fcm.projectId; empty takes the service account's.
	ProjectID string
	// ServiceAccountFile is push.fcm.serviceAccountFile: the service
	// account key (JSON) downloaded from the Firebase console.
	ServiceAccountFile string
	// Endpoint is push.fcm.endpoint (default https://fcm.googleapis.com).
	Endpoint string
	// TokenURI is push.fcm.tokenURI (default: the service account's).
	TokenURI string
}

// checkPush validates the push options.
func checkPush(p *PushOptions, check func(string, error)) {
	if _, err := p.PlatformEntries(); err != nil {
		check("push", err)
	}
	if p.Android.APIKey != "" {
		check("push.android.apiKey", errors.New("the legacy FCM server key no longer works (Google shut that API down): "+
			"give push.android.firebaseServiceAccount, a service account key file"))
	}
	if p.Adapter == PushAdapterNone && p.HasPlatforms() {
		return // Parse Server's form: each platform says how it is reached
	}
	switch p.Adapter {
	case PushAdapterNone, PushAdapterLog:
	case PushAdapterFCM, PushAdapterAPNs, PushAdapterNative:
		if p.Adapter != PushAdapterAPNs && p.FCM.ServiceAccountFile == "" {
			check("push.fcm.serviceAccountFile", fmt.Errorf("is required with push.adapter %q", p.Adapter))
		}
		if p.Adapter != PushAdapterFCM {
			checkAPNs(&p.APNs, p.Adapter, check)
		}
	default:
		check("push.adapter", fmt.Errorf("want %q, %q, %q or %q, got %q",
			PushAdapterLog, PushAdapterFCM, PushAdapterAPNs, PushAdapterNative, p.Adapter))
	}
}

func checkAPNs(a *APNsOptions, adapter string, check func(string, error)) {
	if len(a.Topics) == 0 {
		check("push.apns.topics", fmt.Errorf("is required with push.adapter %q (the app's bundle ids)", adapter))
	}
	switch a.Environment {
	case "", "production", "development", "both":
	default:
		check("push.apns.environment", fmt.Errorf(`want "production", "development" or "both", got %q`, a.Environment))
	}
	token, cert := a.TokenKeyFile != "", a.CertFile != ""
	switch {
	case token && cert:
		check("push.apns", errors.New("set tokenKeyFile or certFile, not both"))
	case token:
		if a.KeyID == "" || a.TeamID == "" {
			check("push.apns", errors.New("keyId and teamId are required with tokenKeyFile"))
		}
	case cert:
		if a.CertKeyFile == "" {
			check("push.apns.certKeyFile", errors.New("is required with certFile"))
		}
	default:
		check("push.apns", errors.New("tokenKeyFile (a .p8 key, recommended) or certFile is required"))
	}
}
