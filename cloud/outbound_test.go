package cloud_test

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server/servertest"
)

// TestOutboundPolicy: by default Parse.Cloud.httpRequest and webhooks may
// not reach a loopback address, directly or through a redirect from an
// allowed one, and the client gets a Parse error without the internal
// service's text; outboundAllowPrivate lets them.
func TestOutboundPolicy(t *testing.T) {
	internal := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(`{"error":"internal-secret-text"}`))
	}))
	t.Cleanup(internal.Close)
	// The redirector listens on 127.0.0.2, which the allow list admits; its
	// redirect target (127.0.0.1) is not admitted.
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("cannot listen on 127.0.0.2: %v", err)
	}
	redirector := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, internal.URL+"/x", http.StatusFound)
	}))
	redirector.Listener = ln
	redirector.Start()
	t.Cleanup(redirector.Close)

	js := httpRequestJS + `
Parse.Cloud.define('follow', async (req) => {
  try {
    const res = await Parse.Cloud.httpRequest({ url: req.params.url, followRedirects: true });
    return { status: res.status, text: res.text };
  } catch (e) {
    if (e.status) { return { failed: e.status, text: e.text }; }
    throw e;
  }
});`
	hook := map[string]any{"functionName": "hooked", "url": internal.URL + "/hook"}
	refused := []string{`"code":100`, "not allowed by the outbound policy"}
	for _, c := range []struct {
		name  string
		edit  func(*config.Options)
		cases []scenario
	}{
		{name: "default", edit: func(o *config.Options) { o.OutboundAllowList = []string{"127.0.0.2"} }, cases: []scenario{
			{name: "loopback", method: "POST", path: "/functions/fetch", body: map[string]any{"url": internal.URL + "/x"},
				status: 400, has: refused, hasNot: []string{"internal-secret-text", "127.0.0.1"}},
			{name: "localhost by name", method: "POST", path: "/functions/fetch",
				body:   map[string]any{"url": fmt.Sprintf("http://localhost:%d/x", internal.Listener.Addr().(*net.TCPAddr).Port)},
				status: 400, has: refused, hasNot: []string{"internal-secret-text"}},
			{name: "IPv6 loopback", method: "POST", path: "/functions/fetch", body: map[string]any{"url": "http://[::1]:9/x"},
				status: 400, has: refused},
			{name: "link-local", method: "POST", path: "/functions/fetch", body: map[string]any{"url": "http://169.254.169.254/latest/meta-data/"},
				status: 400, has: refused},
			{name: "redirect into loopback", method: "POST", path: "/functions/follow", body: map[string]any{"url": redirector.URL},
				status: 400, has: refused, hasNot: []string{"internal-secret-text", "127.0.0.1"}},
			{name: "the allowed address itself answers", method: "POST", path: "/functions/fetch", body: map[string]any{"url": redirector.URL},
				status: 200, has: []string{`"failed":302`}},
			{name: "webhook defined", method: "POST", path: "/hooks/functions", body: hook, headers: servertest.Master(), status: 200},
			{name: "webhook refused", method: "POST", path: "/functions/hooked", status: 400,
				has: []string{`"code":141`, "not allowed by the outbound policy"}, hasNot: []string{"internal-secret-text", "127.0.0.1"}},
		}},
		{name: "outboundAllowPrivate", edit: allowPrivateOutbound, cases: []scenario{
			{name: "loopback", method: "POST", path: "/functions/fetch", body: map[string]any{"url": internal.URL + "/x"},
				status: 200, has: []string{`"failed":403`}},
			{name: "redirect into loopback", method: "POST", path: "/functions/follow", body: map[string]any{"url": redirector.URL},
				status: 200, has: []string{`"failed":403`, "internal-secret-text"}},
			{name: "webhook defined", method: "POST", path: "/hooks/functions", body: hook, headers: servertest.Master(), status: 200},
			{name: "webhook reached", method: "POST", path: "/functions/hooked", status: 400, has: []string{"internal-secret-text"}},
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			run(t, startScriptWith(t, js, c.edit), c.cases)
		})
	}
}
