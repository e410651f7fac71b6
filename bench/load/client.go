package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/valyala/fasthttp"
)

// target is a Parse-compatible server and the credentials to reach it.
type target struct {
	base      *url.URL // e.g. http://127.0.0.1:1337/parse
	appID     string
	masterKey string
	prefix    string // header prefix, "X-Parse-" for Parse Server
	timeout   time.Duration
}

// mountPath is the path of the REST API below the host ("/parse").
func (t *target) mountPath() string { return strings.TrimRight(t.base.Path, "/") }

// uri returns the absolute request URI of path (relative to the mount) with
// an optional query.
func (t *target) uri(path string, query url.Values) string {
	u := *t.base
	u.Path = t.mountPath() + path
	u.RawQuery = query.Encode()
	return u.String()
}

// checkLoopback refuses any host that is not on this machine: the load
// tool is for servers we run ourselves.
func checkLoopback(u *url.URL) error {
	host := u.Hostname()
	if host == "localhost" {
		return nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%s is not a loopback address; pass -allow-remote to load a server elsewhere", host)
	}
	return nil
}

// client sends requests for one worker, reusing its request and response.
type client struct {
	t    *target
	hc   *fasthttp.HostClient
	req  *fasthttp.Request
	resp *fasthttp.Response
	// The header names, joined to the prefix once rather than per request.
	appIDHeader, masterKeyHeader string
}

func newHostClient(t *target, conns int) *fasthttp.HostClient {
	return &fasthttp.HostClient{
		Addr:                     t.base.Host,
		IsTLS:                    t.base.Scheme == "https",
		MaxConns:                 conns,
		ReadTimeout:              t.timeout,
		WriteTimeout:             t.timeout,
		MaxIdleConnDuration:      time.Minute,
		NoDefaultUserAgentHeader: true,
		MaxResponseBodySize:      64 << 20,
	}
}

func newClient(t *target, hc *fasthttp.HostClient) *client {
	return &client{t: t, hc: hc, req: fasthttp.AcquireRequest(), resp: fasthttp.AcquireResponse(),
		appIDHeader: t.prefix + "Application-Id", masterKeyHeader: t.prefix + "Master-Key"}
}

// errTransport wraps failures below HTTP: refused connections, timeouts.
var errTransport = errors.New("transport")

// do sends one request (body nil, []byte or a value encoded as JSON) to an
// absolute URI and returns the status and the body, valid until the next
// call.
func (c *client) do(method, uri string, body any) (int, []byte, error) {
	req, resp := c.req, c.resp
	req.Reset()
	resp.Reset()
	req.Header.SetMethod(method)
	req.SetRequestURI(uri)
	req.Header.Set(c.appIDHeader, c.t.appID)
	if c.t.masterKey != "" {
		req.Header.Set(c.masterKeyHeader, c.t.masterKey)
	}
	switch b := body.(type) {
	case nil:
	case []byte:
		req.Header.SetContentType("application/json")
		req.SetBody(b)
	default:
		enc, err := json.Marshal(b)
		if err != nil {
			return 0, nil, err
		}
		req.Header.SetContentType("application/json")
		req.SetBody(enc)
	}
	if err := c.hc.DoTimeout(req, resp, c.t.timeout); err != nil {
		return 0, nil, fmt.Errorf("%w: %s %s: %v", errTransport, method, uri, err)
	}
	return resp.StatusCode(), resp.Body(), nil
}

// statusError is a reply whose HTTP status is not the expected one.
type statusError struct {
	Method, URI string
	Got, Want   int
	Body        string
}

func (e *statusError) Error() string {
	return fmt.Sprintf("%s %s: status %d, want %d: %s", e.Method, shortURI(e.URI), e.Got, e.Want, e.Body)
}

// refusal reports whether the server declined the request as something it
// does not do (4xx or 501) rather than failing at it.
func (e *statusError) refusal() bool {
	return e.Got >= 400 && e.Got < 500 || e.Got == fasthttp.StatusNotImplemented
}

// expect sends a request and fails unless the status is want.
func (c *client) expect(want int, method, uri string, body any) ([]byte, error) {
	status, out, err := c.do(method, uri, body)
	if err != nil {
		return nil, err
	}
	if status != want {
		return out, &statusError{Method: method, URI: uri, Got: status, Want: want, Body: clip(string(out), 200)}
	}
	return out, nil
}

func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// shortURI drops scheme and host and clips the query, for messages.
func shortURI(uri string) string {
	if u, err := url.Parse(uri); err == nil {
		s := u.Path
		if u.RawQuery != "" {
			q, _ := url.QueryUnescape(u.RawQuery)
			s += "?" + q
		}
		return clip(s, 160)
	}
	return clip(uri, 160)
}
