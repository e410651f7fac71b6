package pgtest

import (
	"bytes"
	"net"
	"net/url"
	"sync"
	"testing"
)

// Proxy is a TCP proxy on 127.0.0.1 between an instance and the shared
// PostgreSQL server, so a test can make the database unreachable for that
// instance alone (the server itself is shared and must keep running):
// Cut drops every connection and refuses new ones until Restore.
type Proxy struct {
	ln     net.Listener
	target string

	mu       sync.Mutex
	cut      bool
	conns    map[net.Conn]bool
	atCommit chan struct{} // armed by CutAtCommit; closed when it fired
	// beforeCommit is armed by CutBeforeCommit; closed when it fired.
	beforeCommit chan struct{}
}

// NewProxy forwards a new loopback port to the server of uri; it stops
// when the test ends.
func NewProxy(tb testing.TB, uri string) *Proxy {
	tb.Helper()
	u, err := url.Parse(uri)
	if err != nil {
		tb.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	p := &Proxy{ln: ln, target: u.Host, conns: map[net.Conn]bool{}}
	go p.accept()
	tb.Cleanup(func() {
		ln.Close()
		p.Cut()
	})
	return p
}

// URI is uri with its host and port replaced by the proxy's.
func (p *Proxy) URI(uri string) string {
	u, err := url.Parse(uri)
	if err != nil {
		panic(err)
	}
	u.Host = p.ln.Addr().String()
	return u.String()
}

// Cut drops every open connection and refuses new ones until Restore.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cutLocked()
}

func (p *Proxy) cutLocked() {
	p.cut = true
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

// Restore accepts connections again.
func (p *Proxy) Restore() {
	p.mu.Lock()
	p.cut = false
	p.mu.Unlock()
}

// CutAtCommit arms a cut at the next COMMIT: when PostgreSQL's reply that
// a transaction committed passes through, it is not forwarded and the
// proxy cuts as Cut does, so the client cannot know that its transaction
// committed. The channel is closed once that happened.
func (p *Proxy) CutAtCommit() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.atCommit = make(chan struct{})
	return p.atCommit
}

// CutBeforeCommit arms a cut at the next COMMIT statement a client sends
// as text (its first on a connection: pgx prepares it then): that message
// is not forwarded and the proxy cuts as Cut does, so the transaction
// never commits though the client cannot know it. The channel is closed
// once that happened.
func (p *Proxy) CutBeforeCommit() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.beforeCommit = make(chan struct{})
	return p.beforeCommit
}

func (p *Proxy) accept() {
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		cut := p.cut
		p.mu.Unlock()
		if cut {
			client.Close()
			continue
		}
		server, err := net.Dial("tcp", p.target)
		if err != nil {
			client.Close()
			continue
		}
		p.mu.Lock()
		if p.cut {
			p.mu.Unlock()
			client.Close()
			server.Close()
			continue
		}
		p.conns[client], p.conns[server] = true, true
		p.mu.Unlock()
		go p.requests(client, server)
		go p.replies(client, server)
	}
}

// commandCompleteCommit is the CommandComplete message ('C') of COMMIT.
var commandCompleteCommit = append([]byte{'C', 0, 0, 0, 11}, "COMMIT\x00"...)

// commitStatement is the text of a COMMIT statement in a Query or Parse
// message.
var commitStatement = []byte("COMMIT\x00")

// requests forwards the client's messages, watching for an armed cut.
func (p *Proxy) requests(client, server net.Conn) {
	defer client.Close()
	defer server.Close()
	buf := make([]byte, 64<<10)
	for {
		n, err := client.Read(buf)
		if n > 0 {
			p.mu.Lock()
			if p.beforeCommit != nil && bytes.Contains(buf[:n], commitStatement) {
				close(p.beforeCommit)
				p.beforeCommit = nil
				p.cutLocked()
				p.mu.Unlock()
				return
			}
			p.mu.Unlock()
			if _, err := server.Write(buf[:n]); err != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// replies forwards the server's replies, watching for an armed cut.
func (p *Proxy) replies(client, server net.Conn) {
	defer client.Close()
	defer server.Close()
	buf := make([]byte, 64<<10)
	for {
		n, err := server.Read(buf)
		if n > 0 {
			p.mu.Lock()
			if p.atCommit != nil && bytes.Contains(buf[:n], commandCompleteCommit) {
				close(p.atCommit)
				p.atCommit = nil
				p.cutLocked()
				p.mu.Unlock()
				return
			}
			p.mu.Unlock()
			if _, err := client.Write(buf[:n]); err != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
