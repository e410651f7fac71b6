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
		// Parse Dashboard names the job in the body: {jobName, …}.
		{method: "POST", pattern: "/jobs", fn: startJob},
	}
}

// cloudParams are a call's body with its URL parameters merged in.
func cloudParams(c *call) map[string]any {
	params := make(map[string]any, len(c.body)+len(c.query))
	for k, v := range c.query {
		params[k] = v
	}
	for k, v := range c.body {
		params[k] = v
	}
	return params
}

func runFunction(s *Server, c *call) (any, error) {
	res, err := s.svc.RunFunction(c.auth, c.params["name"], cloudParams(c))
	if err != nil {
		return nil, err
	}
	if res == service.NoResult {
		return map[string]any{}, nil
	}
	return map[string]any{"result": res}, nil
}

func startJob(s *Server, c *call) (any, error) {
	if err := requireMaster(c); err != nil {
		return nil, err
	}
	name := c.params["name"]
	if name == "" {
		name, _ = c.body["jobName"].(string)
	}
	id, err := s.svc.StartJob(c.auth, name, cloudParams(c))
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
