// Command quarry runs the Quarry server: a Parse-compatible backend with
// an embedded store. Run `quarry --help` for every option.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	opts, warnings, err := config.Load(args, os.Environ())
	if errors.Is(err, config.ErrHelp) {
		config.Usage(os.Stdout)
		return 0
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "quarry: %v\nRun 'quarry --help' for the list of options.\n", err)
		return 2
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: logLevel(opts)}))
	for _, w := range warnings {
		log.Warn(w)
	}
	srv, err := server.Open(opts, log)
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
