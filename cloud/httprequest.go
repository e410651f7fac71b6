package cloud

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/dop251/goja"
	"github.com/dop251/goja_nodejs/buffer"

	"github.com/quarrydata/quarry/outbound"
)

// MaxHTTPResponseBytes bounds the body Parse.Cloud.httpRequest reads.
const MaxHTTPResponseBytes = 16 << 20

// httpOptions are Parse.Cloud.httpRequest's and fetch's options as the
// prelude sends them: a text body as Body, bytes (a Buffer, ArrayBuffer
// or typed array) as BodyBase64, byte for byte.
type httpOptions struct {
	URL             string            `json:"url"`
	Method          string            `json:"method"`
	Headers         map[string]string `json:"headers"`
	Params          map[string]string `json:"params"`
	Body            *string           `json:"body"`
	BodyBase64      *string           `json:"bodyBase64"`
	FollowRedirects bool              `json:"followRedirects"`
}

// httpRequest is the native behind Parse.Cloud.httpRequest: it returns a
// promise and makes the request on another goroutine, so the runtime's
// loop goes on (timers, other promises) meanwhile. It resolves with
// {status, headers, body} whatever the status (the prelude rejects
// non-2xx), body a Buffer of the bytes as they came, and rejects
// when no answer came.
func (s *Scripts) httpRequest(rt *jsRuntime, vm *goja.Runtime, raw string) *goja.Promise {
	p, resolve, reject := vm.NewPromise()
	var o httpOptions
	if err := json.Unmarshal([]byte(raw), &o); err != nil || o.URL == "" {
		reject(vm.ToValue("httpRequest: a url is required"))
		return p
	}
	// The keep-alive timer holds the loop open (EventLoop.Run ends when no
	// timer is left) until the answer is in.
	rt.inflight++
	keep := rt.loop.SetTimeout(func(*goja.Runtime) {}, 24*time.Hour)
	go func() {
		res, body, err := s.doHTTP(o)
		rt.loop.RunOnLoop(func(vm *goja.Runtime) {
			rt.inflight--
			rt.loop.ClearTimeout(keep) // a loop job: see drain
			rt.queued = true
			if err != nil {
				reject(vm.ToValue(err.Error()))
				return
			}
			res["body"] = buffer.WrapBytes(vm, body)
			resolve(vm.ToValue(res))
		})
	}()
	return p
}

func (s *Scripts) doHTTP(o httpOptions) (map[string]any, []byte, error) {
	u, err := url.Parse(o.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, nil, errString("httpRequest: the url must be http or https")
	}
	if len(o.Params) > 0 {
		q := u.Query()
		for k, v := range o.Params {
			q.Set(k, v)
		}
		u.RawQuery = q.Encode()
	}
	method := strings.ToUpper(o.Method)
	if method == "" {
		method = http.MethodGet
	}
	var body io.Reader
	switch {
	case o.BodyBase64 != nil:
		raw, err := base64.StdEncoding.DecodeString(*o.BodyBase64)
		if err != nil {
			return nil, nil, errString("httpRequest: the body's bytes could not be read")
		}
		body = bytes.NewReader(raw)
	case o.Body != nil:
		body = strings.NewReader(*o.Body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.reg.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return nil, nil, errString("httpRequest: " + err.Error())
	}
	for k, v := range o.Headers {
		req.Header.Set(k, v)
	}
	client := &http.Client{Transport: s.reg.outboundTransport()}
	if !o.FollowRedirects {
		client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	}
	resp, err := client.Do(req)
	if errors.Is(err, outbound.ErrRefused) {
		// Which internal address, and why, is the operator's to know.
		s.log.Warn("cloud code: httpRequest refused by the outbound policy (outboundAllowPrivate, outboundAllowList)", "err", err)
		return nil, nil, errString("httpRequest: the address is not allowed by the outbound policy")
	}
	if err != nil {
		s.log.Warn("cloud code: httpRequest failed", "err", err)
		return nil, nil, errString("httpRequest: no answer from the server")
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	if _, err := io.Copy(&buf, io.LimitReader(resp.Body, MaxHTTPResponseBytes)); err != nil {
		return nil, nil, errString("httpRequest: the answer could not be read")
	}
	headers := map[string]any{}
	for k := range resp.Header {
		headers[k] = resp.Header.Get(k)
	}
	return map[string]any{"status": float64(resp.StatusCode), "headers": headers}, buf.Bytes(), nil
}

type errString string

func (e errString) Error() string { return string(e) }
