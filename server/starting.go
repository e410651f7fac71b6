package server

import (
	"errors"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/transport"
)

// Starting holds the server's port while its data loads, so load balancers
// and orchestrators see a live, not-yet-ready server instead of refused
// connections: /health answers 503 {"status":"initialized"}, the liveness
// path /health/live 200, and every other request 503 with a Parse error and
// Retry-After. Ready hands the port to the loaded server.
type Starting struct {
	tcp  *net.TCPListener
	ln   *pausable
	hs   *fasthttp.Server
	done chan struct{}
}

// ListenEarly binds opts' host and port and answers as Starting.
func ListenEarly(opts *config.Options) (*Starting, error) {
	ln, err := listen(opts.Host, opts.Port)
	if err != nil {
		return nil, err
	}
	tcp, ok := ln.(*net.TCPListener)
	if !ok {
		ln.Close()
		return nil, errors.New("server: the listener is not TCP")
	}
	mount := opts.MountPath
	st := &Starting{tcp: tcp, ln: &pausable{TCPListener: tcp}, done: make(chan struct{})}
	st.hs = &fasthttp.Server{
		Name: "quarry", NoDefaultServerHeader: true, ReadTimeout: 10 * time.Second,
		Handler: transport.RefuseAmbiguous(func(ctx *fasthttp.RequestCtx) {
			path := strings.TrimPrefix(string(ctx.Path()), mount)
			ctx.SetContentType("application/json; charset=utf-8")
			switch path {
			case "/health/live":
				ctx.SetBodyString(`{"status":"ok"}`)
			case "/health":
				ctx.Response.Header.Set("Retry-After", "1")
				ctx.SetStatusCode(fasthttp.StatusServiceUnavailable)
				ctx.SetBodyString(`{"status":"initialized"}`)
			default:
				ctx.Response.Header.Set("Retry-After", "1")
				ctx.SetStatusCode(fasthttp.StatusServiceUnavailable)
				ctx.SetBodyString(`{"code":1,"error":"Quarry is starting: its data is loading. Try again shortly."}`)
			}
		}),
	}
	go func() {
		defer close(st.done)
		_ = st.hs.Serve(transport.CheckRequestLines(st.ln))
	}()
	return st, nil
}

// Addr is the bound address.
func (st *Starting) Addr() net.Addr { return st.tcp.Addr() }

// Ready stops the starting answers (requests in flight finish) and gives
// the port to srv, whose Serve then accepts on it.
func (st *Starting) Ready(srv *Server) error {
	if err := st.stop(); err != nil {
		return err
	}
	srv.ln = st.tcp
	return nil
}

// Close releases the port when the server could not be opened.
func (st *Starting) Close() error {
	_ = st.stop()
	return st.tcp.Close()
}

func (st *Starting) stop() error {
	// Close first: if the Serve goroutine has not reached Accept yet, a
	// Shutdown alone would find no listener to stop and Serve would run on.
	st.ln.Close()
	err := st.hs.Shutdown()
	<-st.done
	// The accept deadline that stopped the starting server must not stop
	// the real one.
	return errors.Join(err, st.tcp.SetDeadline(time.Time{}))
}

// pausable is the TCP listener as the starting server sees it: Close
// makes Accept return (through a deadline) without closing the socket,
// which the loaded server goes on using.
type pausable struct {
	*net.TCPListener
	once   sync.Once
	closed atomic.Bool
}

func (p *pausable) Close() error {
	p.once.Do(func() {
		p.closed.Store(true)
		_ = p.TCPListener.SetDeadline(time.Now())
	})
	return nil
}

// Accept reports the deadline Close set as a closed listener, so the
// starting server's accept loop ends instead of retrying.
func (p *pausable) Accept() (net.Conn, error) {
	if p.closed.Load() {
		return nil, net.ErrClosed
	}
	c, err := p.TCPListener.Accept()
	if err != nil && p.closed.Load() {
		return nil, net.ErrClosed
	}
	return c, err
}
