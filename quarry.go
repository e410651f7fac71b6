// Package quarry is Quarry as a Go library: an application embeds the
// server in its own process and writes its cloud code in Go, with the
// semantics of the JavaScript cloud code (functions, jobs, triggers,
// validators; see docs/cloud.md).
//
//	opts, err := quarry.Config("--appId", "myapp", "--masterKey", secret, "--databaseURI", "./data/app.db")
//	app := quarry.New(opts, nil)
//	app.Define("hello", func(ctx context.Context, req *cloud.FunctionRequest) (any, error) {
//		return "Hello, " + fmt.Sprint(req.Params["name"]), nil
//	})
//	app.BeforeSave("Post", func(ctx context.Context, req *cloud.TriggerRequest) error { … })
//	err = app.Run(ctx) // until ctx is done
//
// Cloud code is defined before the app starts. The package sits above
// everything else: it wires config, cloud and server, as the quarry
// binary does, and nothing imports it.
package quarry

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/quarrydata/quarry/cloud"
	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server"
)

// Options are the server's options (docs/configuration.md).
type Options = config.Options

// Config reads options as the quarry binary does: Quarry's defaults, then
// a JSON config file named by the only positional argument, then QUARRY_*
// and PARSE_SERVER_* environment variables, then flags. Warnings about
// ignored Parse Server options are returned with the options.
func Config(args ...string) (*Options, []string, error) {
	return config.Load(args, os.Environ())
}

// App is an embedded Quarry server. Its cloud.Registry methods (Define,
// Job, BeforeSave, AfterSave, BeforeFind, …) define cloud code in Go.
type App struct {
	*cloud.Registry
	opts *Options
	log  *slog.Logger
	srv  *server.Server
}

// New returns an app for opts; log may be nil (nothing is logged).
func New(opts *Options, log *slog.Logger) *App {
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	reg := cloud.New(log, time.Duration(opts.CloudCodeTimeout)*time.Millisecond)
	return &App{Registry: reg, opts: opts, log: log}
}

// Start opens the data (loading it into memory) and binds the port; the
// app then serves once Serve is called. It returns the bound address.
func (a *App) Start() (net.Addr, error) {
	if a.srv != nil {
		return nil, fmt.Errorf("quarry: the app was started already")
	}
	srv, err := server.OpenWithCloud(a.opts, a.log, a.Registry)
	if err != nil {
		return nil, err
	}
	addr, err := srv.Listen()
	if err != nil {
		srv.Close()
		return nil, err
	}
	a.srv = srv
	a.log.Info("quarry is listening", "address", addr.String(), "mountPath", a.opts.MountPath)
	return addr, nil
}

// Serve answers requests until ctx is done, then shuts down in order
// (in-flight requests finish, the store closes).
func (a *App) Serve(ctx context.Context) error {
	if a.srv == nil {
		return fmt.Errorf("quarry: Serve before Start")
	}
	return a.srv.Serve(ctx)
}

// Run is Start then Serve.
func (a *App) Run(ctx context.Context) error {
	if _, err := a.Start(); err != nil {
		return err
	}
	return a.Serve(ctx)
}

// Server is the running server (nil before Start): its Service, REST
// handler and metrics, for applications that go further.
func (a *App) Server() *server.Server { return a.srv }
