package server

import (
	"fmt"
	"log/slog"
	"net"
	"strconv"

	"github.com/quarrydata/quarry/cloud"
	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/service"
)

// startCloud attaches the cloud code registry to the service and loads the
// cloud option's JavaScript into it; a script that does not load (a syntax
// error, a throw at top level) stops the start with its file and line.
func startCloud(reg *cloud.Registry, svc *service.Service, opts *config.Options, log *slog.Logger) (*cloud.Scripts, error) {
	if reg == nil {
		return nil, nil
	}
	reg.Attach(svc)
	if opts.Cloud == "" {
		return nil, nil
	}
	maxMemory := opts.CloudCodeMaxMemory
	if maxMemory == 0 {
		maxMemory = -1 // cloudCodeMaxMemory 0: no bound
	}
	scripts, err := cloud.LoadJS(reg, cloud.JSOptions{Main: opts.Cloud, MaxMemory: maxMemory, Env: opts.CloudCodeEnv,
		AppID: opts.AppID, ServerURL: cloudServerURL(opts), MasterKey: opts.MasterKey})
	if err != nil {
		return nil, fmt.Errorf("cloud: %w", err)
	}
	log.Info("cloud code loaded", "main", opts.Cloud)
	return scripts, nil
}

// cloudServerURL is Parse.serverURL in cloud code: serverURL, else this
// server on localhost.
func cloudServerURL(opts *config.Options) string {
	if opts.ServerURL != "" {
		return opts.ServerURL
	}
	return "http://" + net.JoinHostPort("localhost", strconv.Itoa(opts.Port)) + opts.MountPath
}
