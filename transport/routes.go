package transport

import (
	"strings"

	"github.com/valyala/fasthttp"
)

// endpoint is one API operation over a decoded call.
type endpoint func(s *Server, c *call) (any, error)

// route binds a method and a path pattern (segments, "{name}" binds) below
// the mount path to an endpoint. The same table serves HTTP and batch.
type route struct {
	method  string
	pattern string
	segs    []string
	fn      endpoint
	// batchable routes may appear in POST /batch.
	batchable bool
}

// routeFamilies lists each endpoint family's routes; each family lives in
// its own file (classes.go, batch.go, …) and adds one line here.
var routeFamilies = []func() []route{
	objectRoutes,
	batchRoutes,
	userRoutes,
	sessionRoutes,
	roleRoutes,
	schemaRoutes,
	configRoutes,
	aggregateRoutes,
	installationRoutes,
	analyticsRoutes,
	serverInfoRoutes,
	scriptLogRoutes,
	audienceRoutes,
	pushRoutes,
	graphQLConfigRoutes,
	functionRoutes,
	jobScheduleRoutes,
	hookRoutes,
}

func (s *Server) registerRoutes() {
	s.routes = nil
	for _, family := range routeFamilies {
		s.routes = append(s.routes, family()...)
	}
	s.families = map[string]bool{"health": true, "files": true}
	for i := range s.routes {
		r := &s.routes[i]
		r.segs = strings.Split(strings.Trim(r.pattern, "/"), "/")
		s.families[r.segs[0]] = true
		s.router.Handle(r.method, s.opts.MountPath+r.pattern, s.httpHandler(r))
	}
}

// match finds the route for a method and a path relative to the mount.
func (s *Server) match(method, rel string) (*route, map[string]string) {
	segs := strings.Split(strings.Trim(rel, "/"), "/")
	for i := range s.routes {
		r := &s.routes[i]
		if r.method != method || len(r.segs) != len(segs) {
			continue
		}
		params := map[string]string{}
		ok := true
		for j, p := range r.segs {
			if strings.HasPrefix(p, "{") {
				if segs[j] == "" {
					ok = false
					break
				}
				params[p[1:len(p)-1]] = segs[j]
			} else if p != segs[j] {
				ok = false
				break
			}
		}
		if ok {
			return r, params
		}
	}
	return nil, nil
}

const callKey = "quarry.call"

func (s *Server) httpHandler(r *route) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		c, _ := ctx.UserValue(callKey).(*call)
		if c == nil {
			s.router.NotFound(ctx)
			return
		}
		c.params = map[string]string{}
		for _, seg := range r.segs {
			if strings.HasPrefix(seg, "{") {
				name := seg[1 : len(seg)-1]
				c.params[name], _ = ctx.UserValue(name).(string)
			}
		}
		s.run(ctx, r, c)
	}
}

func (s *Server) run(ctx *fasthttp.RequestCtx, r *route, c *call) {
	c.base = s.baseURL(ctx)
	out, err := r.fn(s, c)
	if err != nil {
		s.writeError(ctx, err)
		return
	}
	if c.location != "" {
		ctx.Response.Header.Set("Location", c.location)
	}
	for _, h := range c.headers {
		ctx.Response.Header.Set(h[0], h[1])
	}
	writeJSON(ctx, c.status, out)
}

func (s *Server) baseURL(ctx *fasthttp.RequestCtx) string {
	if s.opts.ServerURL != "" {
		return strings.TrimRight(s.opts.ServerURL, "/")
	}
	scheme := "http"
	if ctx.IsTLS() {
		scheme = "https"
	}
	return scheme + "://" + string(ctx.Host()) + s.opts.MountPath
}
