package graphql

import (
	_ "embed"
	"encoding/json"
	"strings"

	"github.com/valyala/fasthttp"
)

//go:embed assets/playground.html
var playgroundHTML string

// Playground returns the handler of the playground page (mountPlayground):
// a small self-contained page, no external assets, whose requests carry
// the application id and the master key, as Parse Server's playground
// does. Never mount it in production.
func Playground(graphQLPath, appID, masterKey string) fasthttp.RequestHandler {
	cfg, _ := json.Marshal(map[string]string{"path": graphQLPath, "appId": appID, "masterKey": masterKey})
	// A JSON island read by the page's script: "<" is escaped by
	// encoding/json, so the values cannot close the script element.
	island := `<script type="application/json" id="cfg">` + string(cfg) + "</script>\n<script>"
	page := []byte(strings.Replace(playgroundHTML, "<script>", island, 1))
	return func(ctx *fasthttp.RequestCtx) {
		if !ctx.IsGet() && !ctx.IsHead() {
			ctx.Response.Header.Set("Allow", "GET, HEAD")
			ctx.SetStatusCode(fasthttp.StatusMethodNotAllowed)
			return
		}
		ctx.Response.Header.Set("Cache-Control", "no-store")
		ctx.Response.Header.Set("X-Content-Type-Options", "nosniff")
		ctx.SetContentType("text/html; charset=utf-8")
		ctx.SetBody(page)
	}
}
