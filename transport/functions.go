package transport

import (
	"encoding/json"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
)

// functionRoutes serve cloud code: functions and jobs.
func functionRoutes() []route {
	return []route{
		{method: "POST", pattern: "/functions/{name}", fn: runFunction},
		{method: "POST", pattern: "/jobs/{name}", fn: startJob},
		// Parse Dashboard names the job in the body: {jobName, …}.
		{method: "POST", pattern: "/jobs", fn: startJob},
		// Parse Dashboard's Jobs page: schedules in _JobSchedule, sent
		// as {"job_schedule": {...}}.
		{method: "GET", pattern: "/cloud_code/jobs", fn: listJobSchedules},
		{method: "GET", pattern: "/cloud_code/jobs/data", fn: jobsData},
		{method: "POST", pattern: "/cloud_code/jobs", fn: saveJobSchedule},
		{method: "PUT", pattern: "/cloud_code/jobs/{objectId}", fn: saveJobSchedule},
		{method: "DELETE", pattern: "/cloud_code/jobs/{objectId}", fn: deleteJobSchedule},
	}
}

func listJobSchedules(s *Server, c *call) (any, error) {
	if err := requireMaster(c); err != nil {
		return nil, err
	}
	list, err := s.jobs.JobSchedules(c.auth)
	if err != nil {
		return nil, err
	}
	out := make([]any, len(list))
	for i, o := range list {
		out[i] = o
	}
	return out, nil
}

func jobsData(s *Server, c *call) (any, error) {
	if err := requireMaster(c); err != nil {
		return nil, err
	}
	names, err := s.svc.JobNames(c.auth)
	if err != nil {
		return nil, err
	}
	scheduled, err := s.jobs.JobSchedules(c.auth)
	if err != nil {
		return nil, err
	}
	inUse := []string{}
	for _, o := range scheduled {
		if n, ok := o["jobName"].(string); ok {
			inUse = append(inUse, n)
		}
	}
	return map[string]any{"in_use": inUse, "jobs": names}, nil
}

func saveJobSchedule(s *Server, c *call) (any, error) {
	if err := requireMaster(c); err != nil {
		return nil, err
	}
	body, ok := c.body["job_schedule"].(map[string]any)
	if !ok {
		return nil, schema.Errorf(schema.CodeInvalidJSON, "job_schedule must be an object")
	}
	if c.params.get("objectId") == "" {
		c.status = fasthttp.StatusCreated
	}
	return s.jobs.SaveJobSchedule(c.auth, c.params.get("objectId"), body)
}

func deleteJobSchedule(s *Server, c *call) (any, error) {
	if err := requireMaster(c); err != nil {
		return nil, err
	}
	return map[string]any{}, s.jobs.DeleteJobSchedule(c.auth, c.params.get("objectId"))
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
	res, err := s.svc.RunFunction(c.auth, c.params.get("name"), cloudParams(c))
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
	name := c.params.get("name")
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

// parseContext decodes a context sent as a JSON string ("" is none).
func parseContext(s string) map[string]any {
	if s == "" {
		return nil
	}
	var m map[string]any
	_ = json.Unmarshal([]byte(s), &m)
	return m
}

// requestInfo collects what cloud code may read of a request: its
// headers (names lower-cased, as Node gives them), the client's address
// and the cloud context (the body's _context, else headerContext: the
// X-Parse-Cloud-Context header).
func (s *Server) requestInfo(ctx *fasthttp.RequestCtx, body map[string]any, headerContext []byte, withHeaders bool) *service.RequestInfo {
	var cloudContext map[string]any
	raw, inBody := body["_context"]
	switch v := raw.(type) {
	case map[string]any:
		cloudContext = v
	case string:
		cloudContext = parseContext(v)
	case nil:
		if !inBody && len(headerContext) > 0 {
			cloudContext = parseContext(string(headerContext))
		}
	}
	if cloudContext == nil && !withHeaders {
		return nil
	}
	info := &service.RequestInfo{Context: cloudContext}
	if withHeaders {
		info.Headers = map[string]string{}
		ctx.Request.Header.VisitAll(func(k, v []byte) {
			info.Headers[strings.ToLower(string(k))] = string(v)
		})
		info.IP = s.clientIP(ctx) // trustProxy
	}
	return info
}
