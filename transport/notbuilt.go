package transport

import (
	"fmt"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/quarrydata/quarry/schema"
)

// notBuilt names the Parse features Quarry does not serve yet, by the first
// path segment below the mount path: their requests get a Parse error that
// says so (the SDKs show its message), never a plain-text 404, which
// the SDKs report as unparseable JSON.
var notBuilt = map[string]string{
	"files":             "Files are not available: no files adapter is configured.",
	"validate_purchase": "Purchase validation is not available.",
	"security":          "The security check is not available yet.",
}

// notFound answers a request no route serves: a cloud function (none exist
// without cloud code, so Parse's "Invalid function"), a feature not built
// yet, or an unknown path, always as JSON with a Parse code.
func (s *Server) notFound(ctx *fasthttp.RequestCtx) {
	path := string(ctx.Path())
	rel, underMount := strings.CutPrefix(path, s.mount.slash)
	first, rest, _ := strings.Cut(rel, "/")
	var status int
	var err *schema.Error
	switch {
	case underMount && first == "functions" && rest != "":
		status, err = fasthttp.StatusBadRequest, schema.Errorf(schema.CodeScriptFailed, "Invalid function: %q", rest)
	case underMount && notBuilt[first] != "":
		status, err = fasthttp.StatusBadRequest, schema.Errorf(schema.CodeCommandUnavailable, "%s", notBuilt[first])
	case path == "/graphql" || path == "/playground":
		status, err = fasthttp.StatusNotFound, schema.Errorf(schema.CodeCommandUnavailable, "GraphQL is off: start the server with --mountGraphQL (mountGraphQL in the config file).")
	default:
		status, err = fasthttp.StatusNotFound, schema.Errorf(schema.CodeCommandUnavailable,
			"%s", fmt.Sprintf("Quarry has no route %s %s.", ctx.Method(), path))
	}
	ctx.SetUserValue(codeKey, err.Code)
	writeJSON(ctx, status, map[string]any{"code": err.Code, "error": err.Message})
}
