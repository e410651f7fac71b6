package transport

import (
	"strings"
)

// Limits of what a log line repeats of a request line: a client decides
// those bytes, so they are bounded and escaped before they are written.
const (
	// maxLoggedPath is the most bytes of a path a log line holds.
	maxLoggedPath = 256
	// maxLoggedMethod is the most bytes of an unknown method it holds.
	maxLoggedMethod = 16
	// minTokenLikeLen is the shortest segment that may be a bare token.
	minTokenLikeLen = 24
)

// redacted stands in for a path segment that looks like a session token.
const redacted = "[redacted]"

// logPath is path as a log line may hold it: segments shaped like a
// session token (a client that put its token in a URL) replaced, bytes
// other than printable ASCII escaped as %XX, and the whole cut to
// maxLoggedPath. A plain path is returned as it is, without allocating.
func logPath(path string) string {
	if plainLogPath(path) {
		return path
	}
	var b strings.Builder
	for i, seg := range strings.Split(path, "/") {
		if i > 0 {
			b.WriteByte('/')
		}
		if tokenLike(seg) {
			b.WriteString(redacted)
		} else {
			writeEscaped(&b, seg)
		}
		if b.Len() > maxLoggedPath {
			break
		}
	}
	out := b.String()
	if len(out) > maxLoggedPath {
		out = out[:maxLoggedPath] + "...(cut)"
	}
	return out
}

// plainLogPath reports whether path can be logged as it is: short,
// printable ASCII, and no segment like a token.
func plainLogPath(path string) bool {
	if len(path) > maxLoggedPath {
		return false
	}
	start := 0
	for i := 0; i <= len(path); i++ {
		if i == len(path) || path[i] == '/' {
			if tokenLike(path[start:i]) {
				return false
			}
			start = i + 1
			continue
		}
		if c := path[i]; c <= ' ' || c >= 0x7f || c == '%' {
			return false
		}
	}
	return true
}

// tokenLike reports whether a path segment may be a session token: Parse's
// "r:" + hex, or a long run of letters and digits holding both (a legacy
// token, a bare hex token) — an objectId or a class name is neither.
func tokenLike(seg string) bool {
	if len(seg) > 2 && (seg[0] == 'r' || seg[0] == 'R') && seg[1] == ':' {
		return true
	}
	if len(seg) < minTokenLikeLen {
		return false
	}
	var letter, digit bool
	for i := 0; i < len(seg); i++ {
		switch c := seg[i]; {
		case c >= '0' && c <= '9':
			digit = true
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			letter = true
		case c == '-' || c == '_':
		default:
			return false
		}
	}
	return letter && digit
}

// writeEscaped writes s with every byte outside printable ASCII (and %)
// as %XX, so a log line never holds a control character or invalid UTF-8
// a client sent.
func writeEscaped(b *strings.Builder, s string) {
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || c == '%' {
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
			continue
		}
		b.WriteByte(c)
	}
}

// logMethod is a request's method as a log line may hold it: the usual
// ones as they are, another only when it is a short run of letters.
func logMethod(m string) string {
	if len(m) == 0 || len(m) > maxLoggedMethod {
		return "[invalid]"
	}
	for i := 0; i < len(m); i++ {
		if c := m[i]; !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c == '-' || c == '_') {
			return "[invalid]"
		}
	}
	return m
}
