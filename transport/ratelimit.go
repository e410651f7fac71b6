package transport

import (
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/quarrydata/quarry/ratelimit"
)

// limit counts one request (or one batch item) against the rateLimit
// rules; rel is its path below the mount path. A POST /batch is counted as
// its items (batch checks them before running any), not as one more.
func (s *Server) limit(c *call, method, rel string) error {
	if s.opts.RateLimit == nil || rel == "/batch" {
		return nil
	}
	return s.opts.RateLimit.Check(ratelimit.Request{Method: method, Path: rel, IP: c.ip, Master: c.auth.Master})
}

// limitFiles counts a /files request (served before the envelope) and
// answers it 429 when it is over a limit; the master key is the header's.
func (s *Server) limitFiles(ctx *fasthttp.RequestCtx, path string) bool {
	if s.opts.RateLimit == nil {
		return false
	}
	rel, ok := strings.CutPrefix(path, s.mount.files)
	if !ok || rel != "" && rel[0] != '/' {
		return false
	}
	master := equalKey(header(ctx, "Master-Key"), s.opts.MasterKey) && s.masterAllowed(ctx)
	err := s.opts.RateLimit.Check(ratelimit.Request{Method: string(ctx.Method()), Path: "/files" + rel, IP: s.clientIP(ctx), Master: master})
	if err == nil {
		return false
	}
	s.writeError(ctx, err)
	return true
}
