package server

import (
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
		f := opts.Push.FCM
		key, err := os.ReadFile(f.ServiceAccountFile)
		if err != nil {
			return nil, fmt.Errorf("push.fcm.serviceAccountFile: %w", err)
		}
		fcm, err := push.NewFCM(push.FCMOptions{ProjectID: f.ProjectID, ServiceAccount: key, Endpoint: f.Endpoint, TokenURI: f.TokenURI})
		if err != nil {
			return nil, fmt.Errorf("push.fcm: %w", err)
		}
		adapter = fcm
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
