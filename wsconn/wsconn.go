// Package wsconn owns the life of one server-side WebSocket connection,
// the same for LiveQuery (package live) and GraphQL subscriptions
// (package graphql): a reader handing each message to the protocol in
// order; a writer goroutine that alone writes data frames, from a bounded
// queue, and pings; read deadlines a silent peer runs into; one close (a
// close frame, then the socket); and a panic in either goroutine closing
// that connection, never the server. What a message means, and what to do
// when the queue is full, is the protocol's: Offer never waits.
package wsconn

import (
	"errors"
	"io"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fasthttp/websocket"
)

// Config is a protocol's part of a connection's life.
type Config[T any] struct {
	// ReadLimit is the largest message read at all; past it the
	// connection ends (the library sends 1009).
	ReadLimit int64
	// MessageLimit, when above zero, is the largest message handed to
	// Handle: a larger one is read past and reported to Oversize, and the
	// connection goes on.
	MessageLimit int
	Oversize     func()
	// ReadLimitHit, when set, is told when a message over ReadLimit ends
	// the connection.
	ReadLimitHit func()

	// PingInterval is how often the writer pings. A peer that sends
	// nothing, not even a pong, for two intervals and a WriteTimeout runs
	// into the read deadline.
	PingInterval time.Duration
	// WriteTimeout bounds each write.
	WriteTimeout time.Duration
	// NoPongCode, when set, closes a peer that did not answer a ping by
	// the next one with that code (NoPong is told first, when set).
	NoPongCode int
	NoPong     func()

	// Queue is the capacity of the send queue.
	Queue int
	// Handle acts on one message, in order; false ends the connection.
	Handle func(data []byte) bool
	// Write writes one queued item on ws, and may take the items queued
	// behind it to write them together. An error closes the connection;
	// stop ends the writer without one (Write closed the connection with
	// a code of its own).
	Write func(ws *websocket.Conn, item T, queue <-chan T) (stop bool, err error)

	// Panicked is told of a panic while reading or writing (the value and
	// the stack); the connection is then closed with InternalErrorCode
	// and InternalErrorReason.
	Panicked            func(v any, stack []byte)
	InternalErrorCode   int
	InternalErrorReason string
}

// Conn is one connection's life.
type Conn[T any] struct {
	ws    *websocket.Conn
	cfg   Config[T]
	queue chan T
	done  chan struct{}
	once  sync.Once
	pong  atomic.Bool
}

// New prepares the life of ws; Run lives it. ws may be nil for a
// connection whose queue a test drains itself (Pending).
func New[T any](ws *websocket.Conn, cfg Config[T]) *Conn[T] {
	return &Conn[T]{ws: ws, cfg: cfg, queue: make(chan T, cfg.Queue), done: make(chan struct{})}
}

// Run reads until the connection ends, with the writer running, and
// returns once both have stopped and the connection is closed.
func (c *Conn[T]) Run() {
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		defer c.recoverPanic()
		c.writeLoop()
	}()
	func() {
		defer c.recoverPanic()
		c.readLoop()
	}()
	c.Close(websocket.CloseNormalClosure, "")
	<-writerDone
}

func (c *Conn[T]) recoverPanic() {
	if v := recover(); v != nil {
		if c.cfg.Panicked != nil {
			c.cfg.Panicked(v, debug.Stack())
		}
		c.Close(c.cfg.InternalErrorCode, c.cfg.InternalErrorReason)
	}
}

// Offer queues item without waiting; false when the queue is full or the
// connection closed.
func (c *Conn[T]) Offer(item T) bool {
	select {
	case <-c.done:
		return false
	default:
	}
	select {
	case c.queue <- item:
		return true
	default:
		return false
	}
}

// Send queues item, waiting for room; false when the connection closed
// first. Only the connection's own reader should wait so.
func (c *Conn[T]) Send(item T) bool {
	select {
	case <-c.done:
		return false
	default:
	}
	select {
	case c.queue <- item:
		return true
	case <-c.done:
		return false
	}
}

// Queued is the number of items waiting to be written.
func (c *Conn[T]) Queued() int { return len(c.queue) }

// Pending is the send queue, for a test or benchmark that drains it
// itself instead of running the connection.
func (c *Conn[T]) Pending() <-chan T { return c.queue }

// Done is closed when the connection closes.
func (c *Conn[T]) Done() <-chan struct{} { return c.done }

// Close ends the connection once: a close frame with code and reason
// (none for websocket.CloseAbnormalClosure), then the socket.
func (c *Conn[T]) Close(code int, reason string) {
	c.once.Do(func() {
		close(c.done)
		if c.ws == nil {
			return
		}
		if code != websocket.CloseAbnormalClosure {
			c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason), time.Now().Add(time.Second))
		}
		// fasthttp closes a hijacked connection only when the handler
		// returns (its Close is a no-op); a deadline in the past wakes the
		// reader and a writer stuck on a full socket at once.
		nc := c.ws.NetConn()
		nc.SetDeadline(time.Now())
		nc.Close()
	})
}

func (c *Conn[T]) readDeadline() time.Time {
	return time.Now().Add(2*c.cfg.PingInterval + c.cfg.WriteTimeout)
}

func (c *Conn[T]) readLoop() {
	ws := c.ws
	ws.SetReadLimit(c.cfg.ReadLimit)
	ws.SetReadDeadline(c.readDeadline())
	ws.SetPongHandler(func(string) error {
		c.pong.Store(true)
		return ws.SetReadDeadline(c.readDeadline())
	})
	for {
		_, r, err := ws.NextReader()
		if err != nil {
			if errors.Is(err, websocket.ErrReadLimit) && c.cfg.ReadLimitHit != nil {
				c.cfg.ReadLimitHit()
			}
			return
		}
		ws.SetReadDeadline(c.readDeadline())
		head := r
		if c.cfg.MessageLimit > 0 {
			head = io.LimitReader(r, int64(c.cfg.MessageLimit)+1)
		}
		data, err := io.ReadAll(head)
		if err != nil {
			if errors.Is(err, websocket.ErrReadLimit) && c.cfg.ReadLimitHit != nil {
				c.cfg.ReadLimitHit()
			}
			return
		}
		if c.cfg.MessageLimit > 0 && len(data) > c.cfg.MessageLimit {
			if _, err := io.Copy(io.Discard, r); err != nil {
				return
			}
			if c.cfg.Oversize != nil {
				c.cfg.Oversize()
			}
			continue
		}
		if !c.cfg.Handle(data) {
			return
		}
	}
}

func (c *Conn[T]) writeLoop() {
	ticker := time.NewTicker(c.cfg.PingInterval)
	defer ticker.Stop()
	pinged := false
	for {
		select {
		case item := <-c.queue:
			stop, err := c.cfg.Write(c.ws, item, c.queue)
			if err != nil {
				c.Close(websocket.CloseAbnormalClosure, "")
				return
			}
			if stop {
				return
			}
		case <-ticker.C:
			if c.cfg.NoPongCode != 0 && pinged && !c.pong.Load() {
				if c.cfg.NoPong != nil {
					c.cfg.NoPong()
				}
				c.Close(c.cfg.NoPongCode, "no pong")
				return
			}
			c.pong.Store(false)
			if err := c.ws.WriteControl(websocket.PingMessage, nil, time.Now().Add(c.cfg.WriteTimeout)); err != nil {
				c.Close(websocket.CloseAbnormalClosure, "")
				return
			}
			pinged = true
		case <-c.done:
			return
		}
	}
}
