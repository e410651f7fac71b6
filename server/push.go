package server

import (
	"log/slog"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/push"
	"github.com/quarrydata/quarry/service"
)

// openPush builds the push sender the push option asks for; nil without
// an adapter (POST /push then answers 115).
func openPush(opts *config.Options, svc *service.Service, log *slog.Logger) *push.Sender {
	var adapter push.Adapter
	switch opts.Push.Adapter {
	case config.PushAdapterLog:
		// A dry run: each batch is logged; a few are kept for inspection.
		adapter = &push.LogAdapter{Keep: 1000, Log: log.Info}
	default:
		return nil
	}
	return push.NewSender(svc, adapter, push.Options{Warn: func(msg string) { log.Warn(msg) }})
}
