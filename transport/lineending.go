package transport

import (
	"bytes"
	"net"
	"sync"
)

// fasthttp keeps no trace of how a request line ended: "GET / HTTP/1.1\n"
// and "GET / HTTP/1.1\r\n" give the same parsed request, and RawHeaders
// starts after that line. So the bare-LF check of framingError cannot see
// the request line. A connection from CheckRequestLines follows the bytes
// fasthttp reads, request by request (head, then Content-Length or
// chunked body), and remembers which request lines ended in a bare LF;
// the handler asks by fasthttp's per-connection request number.
//
// The follower needs no buffering beyond the start of one line: bodies
// are skipped by count, and a head line is only looked into for the three
// headers that decide where the next request starts. Whenever it cannot
// be sure where that is (an upgrade to WebSocket, a header line too long
// to read, a malformed size), it stops following the connection and
// flags nothing more: fasthttp, which refuses malformed framing itself,
// stays the judge there.

// CheckRequestLines wraps ln so that the framing checks of this package
// also see request lines that end in a bare LF.
func CheckRequestLines(ln net.Listener) net.Listener { return requestLineListener{ln} }

type requestLineListener struct{ net.Listener }

func (l requestLineListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &requestLineConn{Conn: c}, nil
}

// requestLineConn is an accepted connection whose reads feed a
// requestStream.
type requestLineConn struct {
	net.Conn
	mu     sync.Mutex
	stream requestStream
}

func (c *requestLineConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.mu.Lock()
		c.stream.feed(p[:n])
		c.mu.Unlock()
	}
	return n, err
}

// NetConn is the connection underneath, for code that looks at the
// socket itself (the GraphQL hang-up watch peeks at it).
func (c *requestLineConn) NetConn() net.Conn { return c.Conn }

// requestLineEndsInBareLF reports whether request num (1-based, in the
// order read on this connection) had a request line ending in a bare LF.
// Requests are asked about in order, so the earlier ones are forgotten.
func (c *requestLineConn) requestLineEndsInBareLF(num uint64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	bad := c.stream.bareLF
	for len(bad) > 0 && bad[0] < num {
		bad = bad[1:]
	}
	c.stream.bareLF = bad
	return len(bad) > 0 && bad[0] == num
}

// requestLineBareLF says why a request is refused for its request line's
// ending, or "".
func requestLineBareLF(conn net.Conn, num uint64) string {
	if c, ok := conn.(*requestLineConn); ok && c.requestLineEndsInBareLF(num) {
		return "the request line ends in a bare LF"
	}
	return ""
}

type streamState uint8

const (
	streamRequestLine streamState = iota // before or in a request line
	streamHeaders                        // in the header lines of a head
	streamBody                           // in a Content-Length body
	streamChunkSize                      // at a chunk-size line
	streamChunkData                      // in a chunk's data
	streamChunkEnd                       // at the CRLF after a chunk's data
	streamTrailer                        // in the trailer after the last chunk
	streamUntracked                      // no longer followed
)

// maxTrackedLine is how much of a line's start is kept: enough for the
// headers that frame a body and a chunk size, with a little padding; a
// framing header padded beyond it stops the following.
const maxTrackedLine = 64

// maxRemembered bounds the bare-LF request numbers kept for a
// connection whose handler has not asked yet (pipelined requests).
const maxRemembered = 64

// requestStream follows HTTP/1.1 requests through a connection's bytes.
type requestStream struct {
	state     streamState
	line      []byte // the current line's first bytes, at most maxTrackedLine
	lineLen   int    // the current line's length so far
	lastByte  byte   // the current line's last byte so far
	remaining int64  // bytes left in a body or chunk

	contentLength int64
	chunked       bool
	upgrade       bool

	requests uint64   // request lines seen
	bareLF   []uint64 // numbers of those that ended in a bare LF, ascending
}

func (s *requestStream) feed(p []byte) {
	for len(p) > 0 && s.state != streamUntracked {
		if s.state == streamBody || s.state == streamChunkData {
			n := min(int64(len(p)), s.remaining)
			p, s.remaining = p[n:], s.remaining-n
			if s.remaining == 0 {
				if s.state == streamBody {
					s.state = streamRequestLine
				} else {
					s.state = streamChunkEnd
				}
			}
			continue
		}
		end := bytes.IndexByte(p, '\n')
		if end < 0 {
			s.extendLine(p)
			return
		}
		s.extendLine(p[:end])
		p = p[end+1:]
		s.endLine()
	}
}

func (s *requestStream) extendLine(b []byte) {
	if len(b) == 0 {
		return
	}
	if room := maxTrackedLine - len(s.line); room > 0 {
		s.line = append(s.line, b[:min(room, len(b))]...)
	}
	s.lineLen += len(b)
	s.lastByte = b[len(b)-1]
}

// endLine acts on the line just ended by an LF.
func (s *requestStream) endLine() {
	crlf := s.lineLen > 0 && s.lastByte == '\r'
	whole := s.lineLen <= maxTrackedLine
	line := s.line
	if crlf && whole {
		line = line[:len(line)-1]
	}
	empty := s.lineLen == 0 || crlf && s.lineLen == 1
	s.line, s.lineLen, s.lastByte = s.line[:0], 0, 0

	switch s.state {
	case streamRequestLine:
		if empty {
			return // fasthttp skips empty lines before a request line
		}
		s.requests++
		if !crlf {
			if len(s.bareLF) == maxRemembered {
				s.state = streamUntracked
				return
			}
			s.bareLF = append(s.bareLF, s.requests)
		}
		s.contentLength, s.chunked, s.upgrade = 0, false, false
		s.state = streamHeaders
	case streamHeaders:
		if empty {
			s.endHead()
			return
		}
		s.headerLine(line, whole)
	case streamChunkSize:
		size, ok := parseChunkSize(line)
		switch {
		case !ok || !whole:
			s.state = streamUntracked
		case size == 0:
			s.state = streamTrailer
		default:
			s.remaining, s.state = size, streamChunkData
		}
	case streamChunkEnd:
		s.state = streamChunkSize
	case streamTrailer:
		if empty {
			s.state = streamRequestLine
		}
	}
}

// headerLine notes the headers that say where the next request starts.
func (s *requestStream) headerLine(line []byte, whole bool) {
	switch {
	case hasPrefixFold(line, "content-length:"):
		n, ok := parseDecimal(bytes.TrimSpace(line[len("content-length:"):]))
		if !ok || !whole {
			s.state = streamUntracked
			return
		}
		s.contentLength = n
	case hasPrefixFold(line, "transfer-encoding:"):
		if !whole {
			s.state = streamUntracked
			return
		}
		s.chunked = bytes.EqualFold(bytes.TrimSpace(line[len("transfer-encoding:"):]), []byte("chunked"))
	case hasPrefixFold(line, "upgrade:"):
		s.upgrade = true
	}
}

func (s *requestStream) endHead() {
	switch {
	case s.upgrade:
		// What follows a switch of protocols is not HTTP.
		s.state = streamUntracked
	case s.chunked:
		s.state = streamChunkSize
	case s.contentLength > 0:
		s.remaining, s.state = s.contentLength, streamBody
	default:
		s.state = streamRequestLine
	}
}

func parseDecimal(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// parseChunkSize reads the hex size before any chunk extension.
func parseChunkSize(line []byte) (int64, bool) {
	if i := bytes.IndexByte(line, ';'); i >= 0 {
		line = line[:i]
	}
	line = bytes.TrimSpace(line)
	if len(line) == 0 || len(line) > 15 {
		return 0, false
	}
	var n int64
	for _, c := range line {
		if !isHex(c) {
			return 0, false
		}
		n = n<<4 | int64(unhex(c))
	}
	return n, true
}
