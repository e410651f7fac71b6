package transport

import (
	"bytes"
	"strings"

	"github.com/valyala/fasthttp"
)

// Request framing and paths the HTTP layer accepts but Quarry refuses.
// fasthttp (as of v1.58, and still in later releases) reads a request
// carrying both Content-Length and Transfer-Encoding by the latter, takes
// a bare LF for a line ending, and normalises "/a/../b" to "/b". A proxy
// in front may read such a request differently from the server (request
// smuggling), and a normalised path reaches a route its sender did not
// name. Each is answered 400 and the connection closed; the checks read
// the raw header block and request target fasthttp keeps, so they cost a
// scan of a few hundred bytes per request.

// framingError says what is ambiguous in a request head, or "".
func framingError(h *fasthttp.RequestHeader) string {
	raw := h.RawHeaders()
	// fasthttp refuses a CR inside a header name or value, so in a head
	// it accepted every CR ends a line: as many CRs as LFs means no line
	// ends in a bare LF. Two vectorised counts keep the GET path cheap.
	if bytes.Count(raw, lf) != bytes.Count(raw, cr) {
		return "a header line ends in a bare LF"
	}
	if h.ContentLength() == -2 {
		return "" // neither Content-Length nor chunked: no body framing to doubt
	}
	contentLength, transferEncoding := false, false
	for len(raw) > 0 {
		end := bytes.IndexByte(raw, '\n')
		if end < 0 {
			break
		}
		switch line := raw[:end]; {
		case hasPrefixFold(line, "content-length:"):
			contentLength = true
		case hasPrefixFold(line, "transfer-encoding:"):
			transferEncoding = true
		}
		raw = raw[end+1:]
	}
	if contentLength && transferEncoding {
		return "both Content-Length and Transfer-Encoding"
	}
	return ""
}

var lf, cr = []byte{'\n'}, []byte{'\r'}

// hasPrefixFold reports whether b starts with the lower-case ASCII prefix,
// ignoring case.
func hasPrefixFold(b []byte, prefix string) bool {
	if len(b) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		if b[i]|0x20 != prefix[i] {
			return false
		}
	}
	return true
}

// hasDotSegment reports whether the path of a raw request target has a
// "." or ".." segment, percent-encoded or not, as fasthttp would decode it
// (so "%2f" separates segments too).
func hasDotSegment(target []byte) bool {
	if i := bytes.IndexByte(target, '?'); i >= 0 {
		target = target[:i]
	}
	if bytes.IndexByte(target, '.') < 0 && bytes.IndexByte(target, '%') < 0 {
		return false // the usual API path: nothing to decode
	}
	path := unescapeLenient(target)
	for len(path) > 0 {
		seg := path
		if i := strings.IndexAny(path, `/\`); i >= 0 { // some servers and browsers read a backslash as a slash
			seg, path = path[:i], path[i+1:]
		} else {
			path = ""
		}
		if seg == "." || seg == ".." {
			return true
		}
	}
	return false
}

// unescapeLenient decodes every valid %XX escape and keeps the rest as
// sent, as fasthttp decodes a path.
func unescapeLenient(b []byte) string {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] == '%' && i+2 < len(b) && isHex(b[i+1]) && isHex(b[i+2]) {
			out = append(out, unhex(b[i+1])<<4|unhex(b[i+2]))
			i += 2
			continue
		}
		out = append(out, b[i])
	}
	return string(out)
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c|0x20 && c|0x20 <= 'f'
}

func unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c | 0x20 - 'a' + 10
}

// refuseBadRequest answers a request refused for its framing or path: 400,
// and the connection closed (what follows on it cannot be trusted).
func (s *Server) refuseBadRequest(ctx *fasthttp.RequestCtx, why string) {
	ctx.SetConnectionClose()
	s.cors(ctx)
	writeJSON(ctx, fasthttp.StatusBadRequest, map[string]any{"error": "bad request: " + why})
}

// ambiguity says why a request's framing or path is refused, or "".
func ambiguity(ctx *fasthttp.RequestCtx) string {
	if why := framingError(&ctx.Request.Header); why != "" {
		return why
	}
	if why := requestLineBareLF(ctx.Conn(), ctx.ConnRequestNum()); why != "" {
		return why
	}
	if hasDotSegment(ctx.Request.Header.RequestURI()) {
		return "the path has a . or .. segment"
	}
	return ""
}

// RefuseAmbiguous wraps a handler of another listener (the LiveQuery
// port, the answers given while the data loads) with the same framing and
// path checks the API's listener makes, so no port of the process reads a
// request differently from a proxy in front of it.
func RefuseAmbiguous(next fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		if why := ambiguity(ctx); why != "" {
			ctx.SetConnectionClose()
			writeJSON(ctx, fasthttp.StatusBadRequest, map[string]any{"error": "bad request: " + why})
			return
		}
		next(ctx)
	}
}
