package transport

import (
	"fmt"
	"log/slog"
	"net/netip"
	"regexp"
	"sync"
	"time"

	"github.com/valyala/fasthttp"
)

// Connection error lines are limited to connLogBurst per connLogWindow: a
// client opening thousands of broken connections must not fill the disk
// with log. What is held back is counted and reported once the window ends.
const (
	connLogBurst  = 10
	connLogWindow = time.Minute
)

// ConnErrorLog is the fasthttp.Logger of Quarry's HTTP servers. Together
// with fasthttp's SecureErrorLogMessage (set by every server that uses it)
// it keeps request bytes, and so keys and session tokens, out of the log.
type ConnErrorLog struct {
	log *slog.Logger
	now func() time.Time

	mu          sync.Mutex
	windowStart time.Time
	logged      int
	held        int
}

// NewConnErrorLog writes fasthttp's connection errors to log.
func NewConnErrorLog(log *slog.Logger) *ConnErrorLog {
	return &ConnErrorLog{log: log, now: time.Now}
}

// Printf implements fasthttp.Logger.
func (l *ConnErrorLog) Printf(format string, args ...any) {
	now := l.now()
	l.mu.Lock()
	heldBefore := 0
	if now.Sub(l.windowStart) >= connLogWindow {
		heldBefore = l.held
		l.windowStart, l.logged, l.held = now, 0, 0
	}
	write := l.logged < connLogBurst
	if write {
		l.logged++
	} else {
		l.held++
	}
	l.mu.Unlock()
	if heldBefore > 0 {
		l.log.Warn("http: connection errors not logged (rate limit)", "count", heldBefore, "window", connLogWindow)
	}
	if write {
		l.log.Warn("http: connection error: " + redactQuoted(fmt.Sprintf(format, args...)))
	}
}

// quoted matches a Go-quoted string, as fasthttp quotes addresses and the
// bytes it could not parse.
var quoted = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)

// redactQuoted replaces every quoted part of a fasthttp error line but the
// connection's addresses: even with SecureErrorLogMessage, fasthttp quotes
// an unparseable request line (which may hold a session token or a where
// clause) in its message.
func redactQuoted(line string) string {
	return quoted.ReplaceAllStringFunc(line, func(q string) string {
		if addr, err := netip.ParseAddrPort(q[1 : len(q)-1]); err == nil {
			return addr.String()
		}
		return `"…"`
	})
}

var _ fasthttp.Logger = (*ConnErrorLog)(nil)
