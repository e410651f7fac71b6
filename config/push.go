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
)

// PushOptions is the push object: which adapter POST /push delivers
// through. Without one, POST /push answers 115.
type PushOptions struct {
	// Adapter is push.adapter: PushAdapterLog, PushAdapterFCM, or none.
	Adapter string
	// FCM is push.fcm: Firebase Cloud Messaging (HTTP v1).
	FCM FCMOptions
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
	case PushAdapterFCM:
		if p.FCM.ServiceAccountFile == "" {
			check("push.fcm.serviceAccountFile", errors.New(`is required with push.adapter "fcm"`))
		}
	default:
		check("push.adapter", fmt.Errorf("want %q or %q, got %q", PushAdapterLog, PushAdapterFCM, p.Adapter))
	}
}
