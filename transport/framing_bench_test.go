package transport

import (
	"bufio"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// BenchmarkFramingChecks_GET_8Headers is the cost the framing and path
// checks add to a typical SDK GET.
func BenchmarkFramingChecks_GET_8Headers(b *testing.B) {
	head := "GET /parse/classes/Post/abcdefghij?include=author HTTP/1.1\r\nHost: api.example.com\r\n" +
		"X-Parse-Application-Id: myAppId\r\nX-Parse-Session-Token: r:0123456789abcdef0123456789abcdef\r\n" +
		"X-Parse-Client-Version: js5.3.0\r\nX-Parse-Installation-Id: 6b7c2a4e-1111-2222-3333-444455556666\r\n" +
		"User-Agent: Mozilla/5.0\r\nAccept: */*\r\nAccept-Encoding: gzip\r\n\r\n"
	var req fasthttp.Request
	if err := req.Read(bufio.NewReader(strings.NewReader(head))); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if framingError(&req.Header) != "" || hasDotSegment(req.Header.RequestURI()) {
			b.Fatal("refused")
		}
	}
}

// BenchmarkRequestLineFollow_GET_8Headers is what following a connection's
// framing costs per typical SDK GET (the request-line bare-LF check).
func BenchmarkRequestLineFollow_GET_8Headers(b *testing.B) {
	head := []byte("GET /parse/classes/Post/abcdefghij?include=author HTTP/1.1\r\nHost: api.example.com\r\n" +
		"X-Parse-Application-Id: myAppId\r\nX-Parse-Session-Token: r:0123456789abcdef0123456789abcdef\r\n" +
		"X-Parse-Client-Version: js5.3.0\r\nX-Parse-Installation-Id: 6b7c2a4e-1111-2222-3333-444455556666\r\n" +
		"User-Agent: Mozilla/5.0\r\nAccept: */*\r\nAccept-Encoding: gzip\r\n\r\n")
	var s requestStream
	b.SetBytes(int64(len(head)))
	b.ReportAllocs()
	for b.Loop() {
		s.feed(head)
		if len(s.bareLF) != 0 {
			b.Fatal("flagged")
		}
	}
}
