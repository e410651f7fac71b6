package transport

import (
	"encoding/json"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/quarrydata/quarry/service"
)

// functionRoutes serve cloud code: functions and jobs.
func functionRoutes() []route {
	return []route{
		{method: "POST", pattern: "/functions/{name}", fn: runFunction},
		{method: "POST", pattern: "/jobs/{name}", fn: startJob},
	}
}

func runFunction(s *Server, c *call) (any, error) {
	res, err := s.svc.RunFunction(c.auth, c.params["name"], c.body)
	if err != nil {
		return nil, err
	}
	return map[string]any{"result": res}, nil
}

func startJob(s *Server, c *call) (any, error) {
	if err := requireMaster(c); err != nil {
		return nil, err
	}
	id, err := s.svc.StartJob(c.auth, c.params["name"], c.body)
	if err != nil {
		return nil, err
	}
	c.headers = append(c.headers, [2]string{"X-Parse-Job-Status-Id", id})
	return map[string]any{}, nil
}

// requestInfo collects what cloud code may read of a request: its
// headers (names lower-cased, as Node gives them), the client's address
// and the cloud context (X-Parse-Cloud-Context or the body's _context).
func requestInfo(ctx *fasthttp.RequestCtx, body map[string]any, withHeaders bool) *service.RequestInfo {
	info := &service.RequestInfo{}
	if withHeaders {
		info.Headers = map[string]string{}
		ctx.Request.Header.VisitAll(func(k, v []byte) {
			info.Headers[strings.ToLower(string(k))] = string(v)
		})
		info.IP = ctx.RemoteIP().String()
	}
	var raw any = header(ctx, "Cloud-Context")
	if v, ok := body["_context"]; ok {
		raw = v
	}
	switch v := raw.(type) {
	case map[string]any:
		info.Context = v
	case string:
		if v != "" {
			_ = json.Unmarshal([]byte(v), &info.Context)
		}
	}
	if info.Context == nil && !withHeaders {
		return nil
	}
	return info
}
