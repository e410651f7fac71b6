package transport

import (
	"encoding/json"
	"errors"

	"github.com/valyala/fasthttp"

	"github.com/quarrydata/quarry/schema"
)

func writeJSON(ctx *fasthttp.RequestCtx, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = fasthttp.StatusInternalServerError, []byte(`{"code":1,"message":"Internal server error."}`)
	}
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json; charset=utf-8")
	ctx.SetBody(b)
}

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
	var eh errHTTP
	if errors.As(err, &eh) {
		return eh.status, map[string]any{"error": eh.msg}
	}
	if pe, ok := schema.AsError(err); ok {
		return statusOf(pe.Code), map[string]any{"code": pe.Code, "error": pe.Message}
	}
	s.log.Error("internal error", "err", err)
	return fasthttp.StatusInternalServerError, map[string]any{"code": schema.CodeInternalServerError, "message": "Internal server error."}
}

func (s *Server) writeError(ctx *fasthttp.RequestCtx, err error) {
	status, body := s.errorBody(err)
	writeJSON(ctx, status, body)
}
