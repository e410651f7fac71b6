package hangup

import (
	"context"
	"net"
	"testing"
	"time"
)

// tcpPair returns both ends of a loopback TCP connection.
func tcpPair(tb testing.TB) (server, client net.Conn) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer ln.Close()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		tb.Fatal(err)
	}
	if server, err = ln.Accept(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { server.Close(); client.Close() })
	return server, client
}

// TestPeerClosed: waiting bytes are neither a hang-up nor consumed; a
// closed peer is one.
func TestPeerClosed(t *testing.T) {
	server, client := tcpPair(t)
	if peerClosed(server) {
		t.Fatal("an idle open connection reads as closed")
	}
	if _, err := client.Write([]byte("GET")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	if peerClosed(server) {
		t.Fatal("a connection with bytes waiting reads as closed")
	}
	buf := make([]byte, 3)
	if _, err := server.Read(buf); err != nil || string(buf) != "GET" {
		t.Fatalf("the peek consumed the bytes: %q %v", buf, err)
	}
	client.Close()
	time.Sleep(50 * time.Millisecond)
	if !peerClosed(server) {
		t.Fatal("a closed peer reads as open")
	}
}

// TestContextEndsOnHangup: a watched request's context ends once its
// client closes the connection, and a stopped watch never ends it.
func TestContextEndsOnHangup(t *testing.T) {
	server, client := tcpPair(t)
	hc := Watch(server)
	done := hc.Done()
	if hc.Err() != nil {
		t.Fatal("ended before the client left")
	}
	client.Close()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the context did not end after the client hung up")
	}
	if hc.Err() != context.Canceled {
		t.Fatalf("Err = %v, want context.Canceled", hc.Err())
	}

	server, client = tcpPair(t)
	hc = Watch(server)
	done = hc.Done()
	hc.Stop()
	client.Close()
	time.Sleep(3 * Poll)
	select {
	case <-done:
		t.Fatal("a stopped watch ended its context")
	default:
	}
}

// Benchmark_Watch_ShortRequest is what the hang-up watch adds to a
// request answered without asking for Done (from memory).
func Benchmark_Watch_ShortRequest(b *testing.B) {
	server, _ := tcpPair(b)
	b.ReportAllocs()
	for b.Loop() {
		Watch(server).Stop()
	}
}

// Benchmark_Watch_Started is the watch of a request whose work asked
// for Done (a query of a class kept in PostgreSQL) and ended before the
// first look.
func Benchmark_Watch_Started(b *testing.B) {
	server, _ := tcpPair(b)
	b.ReportAllocs()
	for b.Loop() {
		hc := Watch(server)
		hc.Done()
		hc.Stop()
	}
}

// Benchmark_PeerClosed is one look at an open connection.
func Benchmark_PeerClosed(b *testing.B) {
	server, _ := tcpPair(b)
	b.ReportAllocs()
	for b.Loop() {
		peerClosed(server)
	}
}
