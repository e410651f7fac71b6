package live

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"encoding/base64"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/fasthttp/websocket"
)

// acceptRaw answers one WebSocket handshake on a raw connection by hand,
// so that the test writes the frames after it itself.
func acceptRaw(t *testing.T, ln net.Listener) net.Conn {
	t.Helper()
	nc, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.ReadRequest(bufio.NewReader(nc))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha1.Sum([]byte(req.Header.Get("Sec-WebSocket-Key") + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	resp := "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " +
		base64.StdEncoding.EncodeToString(sum[:]) + "\r\n\r\n"
	if _, err := nc.Write([]byte(resp)); err != nil {
		t.Fatal(err)
	}
	return nc
}

// TestBurstFramesReadByAWebSocketClient: the messages queued behind the
// first go out framed in one write, each frame length form (7, 16 and 64
// bits) read back whole and in order by a WebSocket client.
func TestBurstFramesReadByAWebSocketClient(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() { accepted <- acceptRaw(t, ln) }()
	raw, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	client, _, err := websocket.NewClient(raw, &url.URL{Scheme: "ws", Host: ln.Addr().String(), Path: "/"}, nil, 1024, 1024)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server := <-accepted
	defer server.Close()

	// The 64-bit length form is over maxBurstBytes: it ends the burst.
	msgs := [][]byte{[]byte(`{"op":"create"}`), bytes.Repeat([]byte("m"), 200), []byte(`{"op":"leave"}`), bytes.Repeat([]byte("l"), 70_000)}
	queue := make(chan []byte, 8)
	for _, m := range msgs[1:] {
		queue <- m
	}
	queue <- []byte("next burst")
	frames, closing := gatherBurst(nil, msgs[0], queue)
	if closing || len(queue) != 1 {
		t.Errorf("closing %v, %d left queued; want false and the one after the big message", closing, len(queue))
	}
	if err := writeBurst(server, frames, time.Now().Add(5*time.Second)); err != nil {
		t.Fatal(err)
	}
	client.SetReadDeadline(time.Now().Add(5 * time.Second))
	for i, want := range msgs {
		kind, got, err := client.ReadMessage()
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		if kind != websocket.TextMessage || !bytes.Equal(got, want) {
			t.Fatalf("message %d: kind %d, %d bytes %.40q, want %d bytes %.40q", i, kind, len(got), got, len(want), want)
		}
	}
}

// TestBurstEndsAtTheCloseMark: the closeAfterFlush mark (nil) ends a
// burst; what follows it stays queued.
func TestBurstEndsAtTheCloseMark(t *testing.T) {
	queue := make(chan []byte, 4)
	queue <- []byte("b")
	queue <- nil
	queue <- []byte("after the mark")
	frames, closing := gatherBurst(nil, []byte("a"), queue)
	if !closing || len(queue) != 1 {
		t.Errorf("closing %v, %d left queued; want true and the one after the mark", closing, len(queue))
	}
	if want := []byte("\x81\x01a\x81\x01b"); !bytes.Equal(frames, want) {
		t.Errorf("frames %q, want %q", frames, want)
	}
}

// TestBurstStopsAtItsSize: a burst takes queued messages until it holds
// maxBurstBytes; the rest wait for the next write.
func TestBurstStopsAtItsSize(t *testing.T) {
	msg := []byte(strings.Repeat("x", 1000))
	queue := make(chan []byte, 200)
	for range cap(queue) {
		queue <- msg
	}
	frames, closing := gatherBurst(nil, msg, queue)
	if closing {
		t.Error("closing without a mark")
	}
	if len(frames) < maxBurstBytes || len(frames) > maxBurstBytes+len(msg)+4 {
		t.Errorf("burst of %d bytes, want just over %d", len(frames), maxBurstBytes)
	}
	if taken := cap(queue) - len(queue); taken == cap(queue) || taken == 0 {
		t.Errorf("took %d of %d queued messages", taken, cap(queue))
	}
}
