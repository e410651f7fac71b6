package server

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strconv"

	"github.com/quarrydata/quarry/transport"
	"github.com/valyala/fasthttp"
)

// listen binds host:port (port 0 picks a free one).
func listen(host string, port int) (net.Listener, error) {
	return net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
}

// serveUntil serves hs on ln until ctx is done (then shuts down,
// waiting up to ShutdownGrace for requests in flight) or serving fails.
// Running out of grace is not an error: connections opened but never used
// keep fasthttp waiting, and requests still running are cut off.
func serveUntil(ctx context.Context, hs *fasthttp.Server, ln net.Listener, log *slog.Logger) error {
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(transport.CheckRequestLines(ln)) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), ShutdownGrace)
	defer cancel()
	err := hs.ShutdownWithContext(shutdown)
	if errors.Is(err, context.DeadlineExceeded) {
		log.Warn("shutdown grace period over; closing remaining connections", "grace", ShutdownGrace)
		return nil
	}
	return err
}
