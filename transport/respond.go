package transport

import (
	"encoding/json"
	"errors"
	"syscall"

	gojson "github.com/goccy/go-json"
	"github.com/valyala/fasthttp"

	"github.com/quarrydata/quarry/ratelimit"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/store"
)

func writeJSON(ctx *fasthttp.RequestCtx, status int, v any) {
	if a, ok := v.(appender); ok {
		// Appended straight into the response's own (pooled) buffer.
		buf, err := a.appendJSON(ctx.Response.SwapBody(nil)[:0])
		if err == nil {
			ctx.SetStatusCode(status)
			ctx.SetContentType("application/json; charset=utf-8")
			ctx.Response.SwapBody(buf)
			return
		}
		ctx.Response.SwapBody(buf[:0])
		v = failed{}
	}
	b, err := marshalReply(v)
	if err != nil {
		status, b = fasthttp.StatusInternalServerError, []byte(`{"code":1,"message":"Internal server error."}`)
	}
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json; charset=utf-8")
	ctx.SetBody(b)
}

// marshalReply encodes a reply that is not an appender. A plain map (the
// replies of create, update, delete and most small endpoints) goes through
// goccy/go-json, which writes the same bytes as encoding/json for such
// values (service.TestEncodeStoredMatchesEncodingJSON) at a tenth of the
// cost; anything else, such as structs with tags, stays with encoding/json.
func marshalReply(v any) ([]byte, error) {
	if m, ok := v.(map[string]any); ok {
		return gojson.Marshal(m)
	}
	return json.Marshal(v)
}

// failed is a value encoding/json refuses, as a body that failed to
// encode: writeJSON answers 500 for it.
type failed struct{}

func (failed) MarshalJSON() ([]byte, error) { return nil, errors.New("transport: reply not encoded") }

// statusOf maps a Parse error code to its HTTP status as Parse Server does.
func statusOf(code int) int {
	switch code {
	case schema.CodeInternalServerError:
		return fasthttp.StatusInternalServerError
	case schema.CodeObjectNotFound:
		return fasthttp.StatusNotFound
	}
	return fasthttp.StatusBadRequest
}

// errorBody turns any error into Parse's wire form, never leaking internal
// details (paths, stack traces) for errors without a Parse code.
func (s *Server) errorBody(err error) (int, map[string]any) {
	var ua errUnauthorized
	if errors.As(err, &ua) {
		return fasthttp.StatusForbidden, map[string]any{"error": ua.msg}
	}
	var limited *ratelimit.Error
	if errors.As(err, &limited) {
		pe, _ := schema.AsError(err)
		return fasthttp.StatusTooManyRequests, map[string]any{"code": pe.Code, "error": pe.Message}
	}
	var eh errHTTP
	if errors.As(err, &eh) {
		return eh.status, map[string]any{"error": eh.msg}
	}
	if pe, ok := schema.AsError(err); ok {
		if pe.Code == schema.CodeInefficientQuery {
			s.opts.Metrics.Refused()
		}
		return statusOf(pe.Code), map[string]any{"code": pe.Code, "error": pe.Message}
	}
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		// Nothing was stored and nothing is lost: the client may try again
		// (the SDKs retry a 503), and reads go on meanwhile.
		s.diskFull.Log("err", err)
		return fasthttp.StatusServiceUnavailable, map[string]any{"code": schema.CodeInternalServerError,
			"error": "The server's disk is full: the write was not saved. Try again later."}
	}
	if errors.Is(err, store.ErrUnavailable) {
		// Nothing was changed (a commit whose outcome was unknown is
		// answered only once it is known). Not logged per request: the
		// store reports the outage once when it starts and once when it
		// ends.
		return fasthttp.StatusServiceUnavailable, map[string]any{"code": schema.CodeInternalServerError, "error": msgUnavailable}
	}
	if errors.Is(err, store.ErrUnwritable) {
		// The data file is gone or an fsync failed: nothing more can be
		// made durable until an operator restarts on a sound file, and
		// /health says so meanwhile.
		s.unwritable.Log("err", err)
		return fasthttp.StatusServiceUnavailable, map[string]any{"code": schema.CodeInternalServerError,
			"error": "The server cannot write its data: the write was not saved. Try again later."}
	}
	s.log.Error("internal error", "err", err)
	return fasthttp.StatusInternalServerError, map[string]any{"code": schema.CodeInternalServerError, "message": "Internal server error."}
}

func (s *Server) writeError(ctx *fasthttp.RequestCtx, err error) {
	status, body := s.errorBody(err)
	if code, ok := body["code"].(int); ok {
		ctx.SetUserValue(codeKey, code)
	}
	if status == fasthttp.StatusServiceUnavailable {
		retry := retryAfterSeconds
		if errors.Is(err, store.ErrUnavailable) {
			retry = retryAfterUnavailable
		}
		ctx.Response.Header.Set("Retry-After", retry)
	}
	writeJSON(ctx, status, body)
}

// retryAfterSeconds is the Retry-After of a 503: long enough for an
// operator's alert to fire, short enough for a client to be back soon.
const retryAfterSeconds = "30"

// retryAfterUnavailable is the Retry-After while the shared database
// cannot be reached: a restart or a fail-over takes seconds.
const retryAfterUnavailable = "5"

// msgUnavailable is the error of a request refused because the database
// cannot be reached.
const msgUnavailable = "The database is unavailable: nothing was saved. Try again later."
