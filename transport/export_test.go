package transport

import (
	"strings"
	"time"
)

// HandleForTest adds a route below the mount path whose endpoint runs fn,
// so tests can make a request fail in ways no real endpoint does.
func HandleForTest(s *Server, method, pattern string, fn func()) {
	r := &route{method: method, pattern: pattern, segs: strings.Split(strings.Trim(pattern, "/"), "/"),
		fn: func(*Server, *call) (any, error) {
			fn()
			return map[string]any{}, nil
		}}
	s.router.Handle(method, s.opts.MountPath+pattern, s.httpHandler(r))
}

// SetSlowQueryForTest sets the slow-query threshold below the options'
// whole milliseconds, so a test can make every query count as slow.
func SetSlowQueryForTest(s *Server, d time.Duration) { s.reqLog.slow = d }
