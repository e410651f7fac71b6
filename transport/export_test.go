package transport

import "strings"

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
