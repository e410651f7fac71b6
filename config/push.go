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
