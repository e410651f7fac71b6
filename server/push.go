package server

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"os"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/push"
	"github.com/quarrydata/quarry/service"
)

// openPush builds the push sender the push option asks for; nil without
// an adapter (POST /push then answers 115).
func openPush(opts *config.Options, svc *service.Service, log *slog.Logger) (*push.Sender, error) {
	var adapter push.Adapter
	switch opts.Push.Adapter {
	case config.PushAdapterLog:
		// A dry run: each batch is logged; the first hundred are kept
		// (push.LogAdapter.Batches) for inspection.
		adapter = &push.LogAdapter{Keep: 100, Log: log.Info}
	case config.PushAdapterFCM:
		fcm, err := openFCM(opts.Push.FCM)
		if err != nil {
			return nil, err
		}
		adapter = fcm
	case config.PushAdapterAPNs:
		apns, err := openAPNs(opts.Push.APNs)
		if err != nil {
			return nil, err
		}
		adapter = push.RouterAdapter{Apple: apns}
	case config.PushAdapterNative:
		apns, err := openAPNs(opts.Push.APNs)
		if err != nil {
			return nil, err
		}
		fcm, err := openFCM(opts.Push.FCM)
		if err != nil {
			return nil, err
		}
		adapter = push.RouterAdapter{Apple: apns, Other: fcm}
	default:
		return nil, nil
	}
	sender := push.NewSender(svc, adapter, push.Options{Warn: func(msg string) { log.Warn(msg) }})
	n, err := sender.FailInterrupted()
	if err != nil {
		return nil, fmt.Errorf("push: %w", err)
	}
	if n > 0 {
		log.Warn("pushes interrupted by the last stop are marked failed", "count", n)
	}
	return sender, nil
}

func openFCM(f config.FCMOptions) (*push.FCMAdapter, error) {
	key, err := os.ReadFile(f.ServiceAccountFile)
	if err != nil {
		return nil, fmt.Errorf("push.fcm.serviceAccountFile: %w", err)
	}
	fcm, err := push.NewFCM(push.FCMOptions{ProjectID: f.ProjectID, ServiceAccount: key, Endpoint: f.Endpoint, TokenURI: f.TokenURI})
	if err != nil {
		return nil, fmt.Errorf("push.fcm: %w", err)
	}
	return fcm, nil
}

// openAPNs reads the APNs key or certificate files; a missing or
// unreadable one stops the server at start-up.
func openAPNs(a config.APNsOptions) (*push.APNsAdapter, error) {
	o := push.APNsOptions{Topics: a.Topics, Environment: a.Environment, KeyID: a.KeyID, TeamID: a.TeamID,
		ProductionURL: a.ProductionURL, DevelopmentURL: a.DevelopmentURL}
	if a.TokenKeyFile != "" {
		key, err := os.ReadFile(a.TokenKeyFile)
		if err != nil {
			return nil, fmt.Errorf("push.apns.tokenKeyFile: %w", err)
		}
		o.TokenKey = key
	}
	if a.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(a.CertFile, a.CertKeyFile)
		if err != nil {
			return nil, fmt.Errorf("push.apns.certFile: %w", err)
		}
		o.Certificate = &cert
	}
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
		return nil, fmt.Errorf("push.apns: %w", err)
	}
	return apns, nil
}
