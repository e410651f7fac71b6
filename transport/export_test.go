package transport

import "time"

// HandleForTest adds a route below the mount path whose endpoint runs fn,
// so tests can make a request fail in ways no real endpoint does.
func HandleForTest(s *Server, method, pattern string, fn func()) {
	s.routes = append(s.routes, route{method: method, pattern: pattern, fn: func(*Server, *call) (any, error) {
		fn()
		return map[string]any{}, nil
	}})
	s.routes[len(s.routes)-1].compile()
	s.table = newRouteTable(s.routes)
}

// SetSlowQueryForTest sets the slow-query threshold below the options'
// whole milliseconds, so a test can make every query count as slow.
func SetSlowQueryForTest(s *Server, d time.Duration) { s.reqLog.slow = d }
