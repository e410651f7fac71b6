package graphql

import (
	"context"
	"net"
	"sync"
	"time"
)

// hangupPoll is how often a running request looks whether its client has
// closed the connection: often enough that a client who gives up costs
// little more, rarely enough that a short request never looks at all.
const hangupPoll = 50 * time.Millisecond

// watchHangup returns a context cancelled once the client at conn has
// closed its side of the connection, looked at every hangupPoll while the
// request runs, and the function that ends the watch (it must be called
// before the connection is read again). fasthttp gives a handler no such
// signal; without one, a client that hangs up leaves its query running.
func watchHangup(conn net.Conn) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	if conn == nil {
		return ctx, cancel
	}
	if tc, ok := conn.(interface{ NetConn() net.Conn }); ok {
		conn = tc.NetConn() // TLS: peeking the TCP stream consumes nothing
	}
	var (
		mu      sync.Mutex // held while peeking, so stop waits for a peek to end
		stopped bool
		timer   *time.Timer
	)
	timer = time.AfterFunc(hangupPoll, func() {
		mu.Lock()
		defer mu.Unlock()
		if stopped {
			return
		}
		if peerClosed(conn) {
			cancel()
			return
		}
		timer.Reset(hangupPoll)
	})
	return ctx, func() {
		mu.Lock()
		stopped = true
		mu.Unlock()
		timer.Stop()
		cancel()
	}
}
