package transport

import (
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

// clientIP is the address rate limits count by.
func clientIP(ctx *fasthttp.RequestCtx) string { return ctx.RemoteIP().String() }
