package cloud_test

import (
	"path/filepath"
	"testing"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server/servertest"
)

// startParseApp serves testdata/parseapp, cloud code written as for
// Parse Server, with a short cloudCodeTimeout.
func startParseApp(t *testing.T) *servertest.Server {
	t.Helper()
	return servertest.StartLogged(t, quiet, func(o *config.Options) {
		o.Cloud = filepath.Join("testdata", "parseapp", "main.js")
		o.CloudCodeTimeout = 500
	})
}

// TestValidatorsSkipMasterKey: as in Parse Server, a validator object
// does not apply to master-key calls unless it sets validateMasterKey.
func TestValidatorsSkipMasterKey(t *testing.T) {
	srv := startParseApp(t)
	run(t, srv, []scenario{
		{name: "requireUser refuses the public", method: "POST", path: "/functions/members", status: 400, has: []string{`"code":142`}},
		{name: "requireUser skipped for master", method: "POST", path: "/functions/members", headers: servertest.Master(), status: 200,
			has: []string{`{"result":"welcome"}`}},
		{name: "validateMasterKey applies to master", method: "POST", path: "/functions/strictMembers", headers: servertest.Master(),
			status: 400, has: []string{`"code":142`, "Please login to continue."}},
		{name: "fields refuse the public", method: "POST", path: "/classes/Order", body: map[string]any{"note": "x"}, status: 400,
			has: []string{`"code":142`, "Please specify data for qty."}},
		{name: "fields skipped for master", method: "POST", path: "/classes/Order", body: map[string]any{"note": "x"},
			headers: servertest.Master(), status: 201},
		{name: "fields with validateMasterKey refuse master", method: "POST", path: "/classes/StrictOrder", body: map[string]any{"note": "x"},
			headers: servertest.Master(), status: 400, has: []string{`"code":142`, "Please specify data for qty."}},
		{name: "fields with validateMasterKey pass a valid object", method: "POST", path: "/classes/StrictOrder",
			body: map[string]any{"qty": 2}, headers: servertest.Master(), status: 201},
	})
}
