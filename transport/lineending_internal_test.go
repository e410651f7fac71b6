package transport

import (
	"slices"
	"testing"
)

// TestRequestStreamFindsBareLFRequestLines: the follower numbers request
// lines as fasthttp does and flags those ending in a bare LF, whatever
// the bodies between them hold and however the bytes arrive.
func TestRequestStreamFindsBareLFRequestLines(t *testing.T) {
	get := "GET /a HTTP/1.1\r\nHost: x\r\n\r\n"
	bareGet := "GET /a HTTP/1.1\nHost: x\r\n\r\n"
	cases := []struct {
		name   string
		stream string
		bareLF []uint64
	}{
		{"well framed", get + get, nil},
		{"second line bare", get + bareGet + get, []uint64{2}},
		{"empty lines before a request are skipped", "\r\n\n" + bareGet, []uint64{1}},
		{"content-length body with LFs", "POST /a HTTP/1.1\r\nContent-Length: 19\r\n\r\nGET /x HTTP/1.1\n\n\n" + bareGet, []uint64{2}},
		{"header names in any case", "POST /a HTTP/1.1\r\ncOnTeNt-LeNgTh:   3  \r\n\r\n\n\n\n" + bareGet, []uint64{2}},
		{"chunked body with LFs", "POST /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\na\nb\nc\r\n0\r\nTrailer: 1\r\n\r\n" + bareGet, []uint64{2}},
		{"a GET with a body", "GET /a HTTP/1.1\r\nContent-Length: 2\r\n\r\n\n\n" + get + bareGet, []uint64{3}},
	}
	for _, tc := range cases {
		for _, step := range []int{1, 2, 7, len(tc.stream)} {
			var s requestStream
			for b := []byte(tc.stream); len(b) > 0; {
				n := min(step, len(b))
				s.feed(b[:n])
				b = b[n:]
			}
			if !slices.Equal(s.bareLF, tc.bareLF) || s.state == streamUntracked {
				t.Errorf("%s, fed %d bytes at a time: bare LF in requests %v (state %d), want %v", tc.name, step, s.bareLF, s.state, tc.bareLF)
			}
		}
	}
}

// TestRequestStreamStopsWhereUnsure: after an upgrade or a size it cannot
// read, the follower flags nothing more rather than guess.
func TestRequestStreamStopsWhereUnsure(t *testing.T) {
	for _, stream := range []string{
		"GET /ws HTTP/1.1\r\nUpgrade: websocket\r\n\r\nGET / HTTP/1.1\n\n",
		"POST / HTTP/1.1\r\nContent-Length: 1x\r\n\r\nGET / HTTP/1.1\n\n",
		"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nGET / HTTP/1.1\n\n",
	} {
		var s requestStream
		s.feed([]byte(stream))
		if s.state != streamUntracked || len(s.bareLF) != 0 {
			t.Errorf("%q: state %d, bare LF %v; want untracked and nothing flagged", stream, s.state, s.bareLF)
		}
	}
}
