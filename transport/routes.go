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
	hookRoutes,
	subscriptionRoutes,
	emailRoutes,
	securityRoutes,
}

func (s *Server) registerRoutes() {
	s.routes = nil
	for _, family := range routeFamilies {
		s.routes = append(s.routes, family()...)
	}
	s.families = map[string]string{"health": "health", "files": "files"}
	for i := range s.routes {
		s.routes[i].compile()
		s.families[s.routes[i].segs[0]] = s.routes[i].segs[0]
	}
	s.table = newRouteTable(s.routes)
}

// maxPathParams bounds the "{name}" segments of one pattern (two today:
// /hooks/triggers/{class}/{trigger}); pathParams holds them inline.
const maxPathParams = 3

// maxPathSegs bounds the segments of one pattern: a longer path matches
// no route without being split further.
const maxPathSegs = 8

// compile splits the pattern into segments, once.
func (r *route) compile() {
	r.segs = strings.Split(strings.Trim(r.pattern, "/"), "/")
	params := 0
	for _, seg := range r.segs {
		if isParamSeg(seg) {
			params++
		}
	}
	if params > maxPathParams || len(r.segs) > maxPathSegs {
		panic("transport: route " + r.pattern + " has more segments or parameters than pathParams holds")
	}
}

func isParamSeg(seg string) bool { return strings.HasPrefix(seg, "{") }

// pathParams are the "{name}" segments of a matched route, kept inline in
// the call (no map per request); values are substrings of the path.
type pathParams struct {
	n      int
	names  [maxPathParams]string
	values [maxPathParams]string
}

// get is the value bound to name, "" when the route has no such segment.
func (p *pathParams) get(name string) string {
	for i := range p.n {
		if p.names[i] == name {
			return p.values[i]
		}
	}
	return ""
}

// set binds name to value, replacing an earlier binding.
func (p *pathParams) set(name, value string) {
	for i := range p.n {
		if p.names[i] == name {
			p.values[i] = value
			return
		}
	}
	if p.n == maxPathParams {
		panic("transport: more path parameters than pathParams holds")
	}
	p.names[p.n], p.values[p.n] = name, value
	p.n++
}

// routeTable finds a request's route with no allocation: routes grouped
// by method and first segment, the most specific match winning.
type routeTable map[string]map[string][]*route

func newRouteTable(routes []route) routeTable {
	t := routeTable{}
	for i := range routes {
		r := &routes[i]
		byFirst := t[r.method]
		if byFirst == nil {
			byFirst = map[string][]*route{}
			t[r.method] = byFirst
		}
		byFirst[r.segs[0]] = append(byFirst[r.segs[0]], r)
	}
	return t
}

// match finds the route for a method and a path relative to the mount
// ("/classes/Item/x"), and binds its parameters into params. Where two
// patterns match, the one with a fixed segment at the first place they
// differ wins (/users/me before /users/{objectId}), as a radix router
// decides.
func (t routeTable) match(method, rel string, params *pathParams) *route {
	var segs [maxPathSegs]string
	n := 0
	rest := strings.Trim(rel, "/")
	for {
		if n == maxPathSegs {
			return nil
		}
		seg, tail, more := strings.Cut(rest, "/")
		segs[n] = seg
		n++
		if !more {
			break
		}
		rest = tail
	}
	var best *route
	bestMask := uint(0)
	for _, r := range t[method][segs[0]] {
		if len(r.segs) != n {
			continue
		}
		mask, ok := uint(0), true
		for j, p := range r.segs {
			if isParamSeg(p) {
				if segs[j] == "" {
					ok = false
					break
				}
				mask |= 1 << (maxPathSegs - 1 - j)
			} else if p != segs[j] {
				ok = false
				break
			}
		}
		if ok && (best == nil || mask < bestMask) {
			best, bestMask = r, mask
		}
	}
	if best == nil {
		return nil
	}
	*params = pathParams{}
	for j, p := range best.segs {
		if isParamSeg(p) {
			params.set(p[1:len(p)-1], segs[j])
		}
	}
	return best
}

// match is the table's match for a batch item, whose parameters live in
// the item.
func (s *Server) match(method, rel string) (*route, pathParams) {
	var params pathParams
	r := s.table.match(method, rel, &params)
	return r, params
}

const callKey = "quarry.call"

// route runs the request's route, or answers 404 in Parse's shape.
func (s *Server) route(ctx *fasthttp.RequestCtx, c *call, path string) {
	rel, ok := strings.CutPrefix(path, s.opts.MountPath)
	var r *route
	if ok && c != nil {
		r = s.table.match(methodName(ctx.Method()), rel, &c.params)
	}
	if r == nil {
		s.notFound(ctx)
		return
	}
	c.routed = r
	s.run(ctx, r, c)
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
	// Clients mostly name one host: the last URL made is kept.
	if last := s.lastBase.Load(); last != nil && last.tls == ctx.IsTLS() && last.host == string(ctx.Host()) {
		return last.url
	}
	scheme := "http"
	if ctx.IsTLS() {
		scheme = "https"
	}
	host := string(ctx.Host())
	url := scheme + "://" + host + s.opts.MountPath
	s.lastBase.Store(&baseURLEntry{host: host, tls: ctx.IsTLS(), url: url})
	return url
}

// baseURLEntry is the base URL made for one Host header.
type baseURLEntry struct {
	host string
	tls  bool
	url  string
}
