// Package hangup tells a request's work that its client has gone: a
// context that ends once the peer of the request's connection has closed
// it. fasthttp gives a handler no such signal; without one, a client that
// hangs up leaves its query running. The watch is lazy: nothing is looked
// at until some work asks for Done (a query of a class kept in
// PostgreSQL, a GraphQL execution), so a request answered from memory
// pays one small allocation.
package hangup

import (
	"context"
	"net"
	"sync"
	"time"
)

// Poll is how often a watched request looks whether its client has
// closed the connection: often enough that a client who gives up costs
// little more, rarely enough that a short request never looks at all.
const Poll = 50 * time.Millisecond

// Context is a context.Context that ends with context.Canceled once the
// client at its connection has hung up. It has no deadline and no values.
type Context struct {
	conn net.Conn

	mu      sync.Mutex // held while peeking, so Stop waits for a peek to end
	done    chan struct{}
	err     error
	timer   *time.Timer
	stopped bool
}

// Watch returns the context of a request on conn. Stop must be called
// before the connection is read again (the next request on it).
func Watch(conn net.Conn) *Context {
	if tc, ok := conn.(interface{ NetConn() net.Conn }); ok {
		conn = tc.NetConn() // a wrapped connection: peek at the socket itself
	}
	return &Context{conn: conn}
}

// Done is closed when the client has hung up. The first call of Done or
// Err starts the watch.
func (c *Context) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.startLocked()
	return c.done
}

func (c *Context) startLocked() {
	if c.done == nil {
		c.done = make(chan struct{})
		if c.conn != nil && !c.stopped {
			c.timer = time.AfterFunc(Poll, c.look)
		}
	}
}

func (c *Context) look() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped || c.err != nil {
		return
	}
	if peerClosed(c.conn) {
		c.err = context.Canceled
		close(c.done)
		return
	}
	c.timer.Reset(Poll)
}

// Err is context.Canceled once the client has hung up, else nil.
func (c *Context) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.startLocked()
	return c.err
}

// Deadline reports none.
func (c *Context) Deadline() (time.Time, bool) { return time.Time{}, false }

// Value holds nothing.
func (c *Context) Value(any) any { return nil }

// Stop ends the watch: the request is answered, and work it left running
// (an afterSave) goes on undisturbed; Done never closes after it.
func (c *Context) Stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopped = true
	if c.timer != nil {
		c.timer.Stop()
	}
}
