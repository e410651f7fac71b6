package transport

import (
	"regexp"
	"strings"
	"time"

	"github.com/valyala/fasthttp"
)

// idempotentPaths refuses repeats of a POST or PUT on the configured paths:
// the request id (X-Parse-Request-Id) is claimed before the request runs,
// and given back when the request fails, so only a request that took
// effect can never run twice.
type idempotentPaths struct {
	paths []*regexp.Regexp
	ttl   time.Duration
}

func newIdempotency(paths []string, ttl time.Duration) (*idempotentPaths, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	out := &idempotentPaths{ttl: ttl}
	for _, p := range paths {
		re, err := regexp.Compile("^(?:" + p + ")$")
		if err != nil {
			return nil, err
		}
		out.paths = append(out.paths, re)
	}
	return out, nil
}

// requestID is the request's id when its method and path are deduplicated.
func (id *idempotentPaths) requestID(ctx *fasthttp.RequestCtx, rel string) string {
	if id == nil || !(ctx.IsPost() || ctx.IsPut()) {
		return ""
	}
	reqID := string(ctx.Request.Header.Peek("X-Parse-Request-Id"))
	if reqID == "" {
		reqID = string(ctx.Request.Header.Peek("X-Svc-Request-Id"))
	}
	if reqID == "" {
		return ""
	}
	rel = strings.Trim(rel, "/")
	for _, re := range id.paths {
		if re.MatchString(rel) {
			return reqID
		}
	}
	return ""
}
