package server

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"golang.org/x/crypto/pkcs12"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/push"
)

// pushAdapter builds what POST /push delivers through: push.adapter, and
// Parse Server's per-platform keys (push.ios …, push.android), which take
// their device types from it. nil when nothing is configured.
func pushAdapter(p config.PushOptions, log *slog.Logger) (push.Adapter, error) {
	router := push.RouterAdapter{ByType: map[string]push.Adapter{}}
	switch p.Adapter {
	case config.PushAdapterLog:
		// A dry run: each batch is logged; the first hundred are kept
		// (push.LogAdapter.Batches) for inspection.
		return &push.LogAdapter{Keep: 100, Log: log.Info}, nil
	case config.PushAdapterFCM, config.PushAdapterNative:
		fcm, err := openFCM(p.FCM.ServiceAccountFile, p.FCM)
		if err != nil {
			return nil, err
		}
		router.Default = fcm
	case config.PushAdapterNone:
		if !p.HasPlatforms() {
			return nil, nil
		}
	}
	if p.Adapter == config.PushAdapterAPNs || p.Adapter == config.PushAdapterNative {
		apns, err := openAPNs("push.apns", p.APNs, scalarAPNsProviders)
		if err != nil {
			return nil, err
		}
		for _, t := range push.AppleDeviceTypes {
			router.ByType[t] = apns
		}
	}
	entries, err := p.PlatformEntries()
	if err != nil {
		return nil, fmt.Errorf("push: %w", err)
	}
	for typ, list := range entries {
		apns, err := openAPNs("push."+typ, p.APNs, func(a config.APNsOptions) ([]push.APNsProvider, error) { return entryProviders(a, typ, list) })
		if err != nil {
			return nil, err
		}
		router.ByType[typ] = apns
	}
	if f := p.Android.FirebaseServiceAccount; f != "" {
		fcm, err := openFCM(f, p.FCM)
		if err != nil {
			return nil, fmt.Errorf("push.android.firebaseServiceAccount: %w", err)
		}
		router.ByType["android"] = fcm
	}
	return router, nil
}

// openFCM reads a service account key file; the other push.fcm options
// (endpoint, token URI, project) apply to every FCM sender.
func openFCM(keyFile string, f config.FCMOptions) (*push.FCMAdapter, error) {
	key, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, fmt.Errorf("push.fcm.serviceAccountFile: %w", err)
	}
	fcm, err := push.NewFCM(push.FCMOptions{ProjectID: f.ProjectID, ServiceAccount: key, Endpoint: f.Endpoint, TokenURI: f.TokenURI})
	if err != nil {
		return nil, fmt.Errorf("push.fcm: %w", err)
	}
	return fcm, nil
}

// openAPNs builds an APNs adapter from the providers made by providers
// (errors name label, the option);
// push.apns.caFile applies to every APNs sender. A missing or unreadable
// key or certificate stops the server at start-up.
func openAPNs(label string, a config.APNsOptions, providers func(config.APNsOptions) ([]push.APNsProvider, error)) (*push.APNsAdapter, error) {
	list, err := providers(a)
	if err != nil {
		return nil, err
	}
	o := push.APNsOptions{Providers: list}
	if a.CAFile != "" {
		pem, err := os.ReadFile(a.CAFile)
		if err != nil {
			return nil, fmt.Errorf("push.apns.caFile: %w", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("push.apns.caFile: no PEM certificate in %s", a.CAFile)
		}
		o.RootCAs = pool
	}
	apns, err := push.NewAPNs(o)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", label, err)
	}
	return apns, nil
}

// hostURL is push.apns's replacement for Apple's host of an environment.
func hostURL(a config.APNsOptions, production bool) string {
	if production {
		return a.ProductionURL
	}
	return a.DevelopmentURL
}

// scalarAPNsProviders turns push.apns into providers: one per topic and
// environment, sharing one credential.
func scalarAPNsProviders(a config.APNsOptions) ([]push.APNsProvider, error) {
	var cred push.APNsProvider
	if a.TokenKeyFile != "" {
		key, err := os.ReadFile(a.TokenKeyFile)
		if err != nil {
			return nil, fmt.Errorf("push.apns.tokenKeyFile: %w", err)
		}
		cred.TokenKey, cred.KeyID, cred.TeamID = key, a.KeyID, a.TeamID
	}
	if a.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(a.CertFile, a.CertKeyFile)
		if err != nil {
			return nil, fmt.Errorf("push.apns.certFile: %w", err)
		}
		cred.Certificate = &cert
	}
	envs := map[string][]bool{"": {true}, "production": {true}, "development": {false}, "both": {true, false}}[a.Environment]
	var out []push.APNsProvider
	for _, topic := range a.Topics {
		for _, production := range envs {
			p := cred
			p.Topic, p.Production, p.URL = topic, production, hostURL(a, production)
			out = append(out, p)
		}
	}
	return out, nil
}

// entryProviders turns Parse Server's push.<deviceType> entries into
// providers.
func entryProviders(a config.APNsOptions, typ string, entries []config.APNsEntry) ([]push.APNsProvider, error) {
	out := make([]push.APNsProvider, 0, len(entries))
	for i, e := range entries {
		where := fmt.Sprintf("push.%s[%d]", typ, i)
		p := push.APNsProvider{Topic: e.Topic, Production: e.Production, URL: hostURL(a, e.Production), KeyID: e.KeyID, TeamID: e.TeamID}
		switch {
		case e.TokenKey != "":
			key, err := pemOrFile(e.TokenKey)
			if err != nil {
				return nil, fmt.Errorf("%s token.key: %w", where, err)
			}
			p.TokenKey = key
		case e.PFX != "":
			cert, err := readPFX(e.PFX, e.Passphrase)
			if err != nil {
				return nil, fmt.Errorf("%s pfx: %w", where, err)
			}
			p.Certificate = cert
		default:
			certPEM, err := pemOrFile(e.Cert)
			if err != nil {
				return nil, fmt.Errorf("%s cert: %w", where, err)
			}
			keyPEM, err := pemOrFile(e.Key)
			if err != nil {
				return nil, fmt.Errorf("%s key: %w", where, err)
			}
			cert, err := tls.X509KeyPair(certPEM, keyPEM)
			if err != nil {
				return nil, fmt.Errorf("%s cert: %w", where, err)
			}
			p.Certificate = &cert
		}
		out = append(out, p)
	}
	return out, nil
}

// pemOrFile is PEM text given inline, or the contents of the file it
// names, as Parse Server's APNs options accept both.
func pemOrFile(v string) ([]byte, error) {
	if strings.HasPrefix(strings.TrimSpace(v), "-----BEGIN") {
		return []byte(v), nil
	}
	return os.ReadFile(v)
}

// readPFX reads a PKCS#12 certificate and key (Keychain's .p12 export).
func readPFX(path, passphrase string) (*tls.Certificate, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	key, cert, err := pkcs12.Decode(data, passphrase)
	if err != nil {
		if errors.Is(err, pkcs12.ErrIncorrectPassword) {
			return nil, errors.New("wrong passphrase")
		}
		return nil, fmt.Errorf("%w (a .p12 that cannot be read here converts to PEM: openssl pkcs12 -in cert.p12 -out cert.pem -nodes; then give cert and key)", err)
	}
	return &tls.Certificate{Certificate: [][]byte{cert.Raw}, PrivateKey: key, Leaf: cert}, nil
}
