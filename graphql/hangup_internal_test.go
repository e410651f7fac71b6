package graphql

import (
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

// Benchmark_WatchHangup_ShortRequest is what the hang-up watch adds to a
// request that ends before the first look at the connection.
func Benchmark_WatchHangup_ShortRequest(b *testing.B) {
	server, _ := tcpPair(b)
	b.ReportAllocs()
	for b.Loop() {
		_, stop := watchHangup(server)
		stop()
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
