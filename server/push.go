package server

import (
	"fmt"
	"log/slog"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/push"
	"github.com/quarrydata/quarry/service"
)

// openPush builds the push sender the push option asks for; nil without
// an adapter (POST /push then answers 115).
func openPush(opts *config.Options, svc *service.Service, log *slog.Logger) (*push.Sender, error) {
	adapter, err := pushAdapter(opts.Push, log)
	if err != nil || adapter == nil {
		return nil, err
	}
	sender := push.NewSender(svc, adapter, push.Options{Warn: func(msg string) { log.Warn(msg) }, Scheduled: opts.ScheduledPush})
	n, err := sender.FailInterrupted()
	if err != nil {
		return nil, fmt.Errorf("push: %w", err)
	}
	if n > 0 {
		log.Warn("pushes interrupted by the last stop are marked failed", "count", n)
	}
	return sender, nil
}
