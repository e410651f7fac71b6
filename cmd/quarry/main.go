// Command quarry runs the Quarry server: a Parse-compatible backend with
// an embedded store. Run `quarry --help` for every option.
//
// `quarry livequery [options]` runs a standalone LiveQuery server instead:
// it receives changes from REST servers through Redis (see
// docs/scaling.md). `quarry files rotate-key` re-encrypts uploaded files
// (see docs/files.md). `quarry import`, `export`, `backup` and `restore`
// move data in and out (see docs/migration.md).
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

// app is what main runs: a Quarry server or a standalone LiveQuery server.
type app interface {
	Listen() (net.Addr, error)
	Banner(net.Addr) string
	Serve(context.Context) error
	Close() error
}

func run(args []string) int {
	if len(args) > 0 && args[0] == "files" {
		return runFiles(args[1:], os.Environ(), os.Stdout, os.Stderr)
	}
	if cmd, ok := transferCommands[append(args, "")[0]]; len(args) > 0 && ok {
		return cmd(args[1:], os.Environ(), os.Stdout, os.Stderr)
	}
	open := openREST
	if len(args) > 0 && args[0] == "livequery" {
		args = args[1:]
		open = func(o *config.Options, log *slog.Logger) (app, error) { return server.OpenLiveQuery(o, log) }
	}
	opts, warnings, err := config.Load(args, os.Environ())
	if errors.Is(err, config.ErrHelp) {
		config.Usage(os.Stdout)
		return 0
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "quarry: %v\nRun 'quarry --help' for the list of options.\n", err)
		return 2
	}
	log := newLogger(opts)
	// First words at once: a large store may take minutes to load, and
	// the banner comes only when it has.
	log.Info("quarry starting", "pid", os.Getpid(), "address", net.JoinHostPort(opts.Host, strconv.Itoa(opts.Port)))
	for _, w := range warnings {
		log.Warn(w)
	}
	srv, err := open(opts, log)
	if err != nil {
		fmt.Fprintf(os.Stderr, "quarry: %v\n", err)
		return 1
	}
	addr, err := srv.Listen()
	if err != nil {
		srv.Close()
		fmt.Fprintf(os.Stderr, "quarry: %v\n", err)
		return 1
	}
	fmt.Print(srv.Banner(addr))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := srv.Serve(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "quarry: %v\n", err)
		return 1
	}
	return 0
}

// newLogger writes to stderr as text or, with jsonLogs, JSON lines; silent
// writes nothing (Parse Dashboard's Logs page still sees recent entries).
func newLogger(opts *config.Options) *slog.Logger {
	ho := &slog.HandlerOptions{Level: logLevel(opts)}
	switch {
	case opts.Silent:
		return slog.New(slog.DiscardHandler)
	case opts.JSONLogs:
		return slog.New(slog.NewJSONHandler(os.Stderr, ho))
	}
	return slog.New(slog.NewTextHandler(os.Stderr, ho))
}

// openREST binds the port first and answers there while the data loads
// (/health: 503 "initialized"), then opens the server on it.
func openREST(o *config.Options, log *slog.Logger) (app, error) {
	st, err := server.ListenEarly(o)
	if err != nil {
		return nil, err
	}
	srv, err := server.Open(o, log)
	if err != nil {
		st.Close()
		return nil, err
	}
	if err := st.Ready(srv); err != nil {
		srv.Close()
		return nil, err
	}
	return srv, nil
}

func logLevel(opts *config.Options) slog.Level {
	switch opts.LogLevel {
	case "error":
		return slog.LevelError
	case "warn":
		return slog.LevelWarn
	case "verbose", "debug", "silly":
		return slog.LevelDebug
	}
	if opts.Verbose {
		return slog.LevelDebug
	}
	return slog.LevelInfo
}
