package cloud_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server/servertest"
)

// TestESModules loads testdata/esmapp, cloud code written as ES modules
// (import, export, export default, import(), import.meta, .mjs, an
// ESM-only npm package, the parse package imported by name) with an npm
// package using syntax goja rejects (async generators, for await, a
// hashbang), and runs its functions through REST. An import takes the
// "import" condition of a package's "exports", as in Node.
func TestESModules(t *testing.T) {
	srv := servertest.StartLogged(t, quiet, func(o *config.Options) {
		o.Cloud = filepath.Join("testdata", "esmapp", "main.js")
	})
	run(t, srv, []scenario{
		{name: "static imports of files, built-ins and packages", method: "POST", path: "/functions/esmImports", status: 200,
			has: []string{`"slug":"hello-es-world"`, `"words":3`, `"cents":125`, `"hash":"11f6ad8e"`, `"shout":"HI!"`, `"flavor":"esm"`, `"double":42`, `"version":3`, `"sameParse":true`}},
		{name: "dynamic import() and import.meta", method: "POST", path: "/functions/esmDynamic", status: 200,
			has: []string{`{"result":{"at":true,"lazy":true}}`}},
		{name: "an npm package's async generators and for await", method: "POST", path: "/functions/forAwait", status: 200,
			has: []string{`"out":[1,2,3]`, `"all":[1,2]`, `"next":11`}},
		{name: "an error in an .mjs module", method: "POST", path: "/functions/esmThrows", status: 400,
			has: []string{`"code":141`, "Cannot read property 'amount' of undefined"}, hasNot: []string{".mjs", " at "}},
	})
	checkESMStack(t, srv)
}

// TestESModulesInEscapedFolder: installed in a folder whose name a URL
// escapes ("my app"), the app still loads and its stacks, named through
// the source maps as URLs, show neither the folder nor its escaped form.
func TestESModulesInEscapedFolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "my app")
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("testdata", "esmapp"))); err != nil {
		t.Fatal(err)
	}
	srv := servertest.StartLogged(t, quiet, func(o *config.Options) { o.Cloud = filepath.Join(dir, "main.js") })
	run(t, srv, []scenario{
		{name: "an error in an .mjs module", method: "POST", path: "/functions/esmThrows", status: 400, has: []string{`"code":141`}},
	})
	if msg := checkESMStack(t, srv); strings.Contains(msg, "my%20app") || strings.Contains(msg, "my app") {
		t.Errorf("the stack shows the install folder:\n%s", msg)
	}
}

// checkESMStack finds esmThrows's error-level log entry and checks that
// its stack names the files and lines as written; it returns the entry.
func checkESMStack(t *testing.T, srv *servertest.Server) string {
	t.Helper()
	res := srv.Do(t, "GET", "/scriptlog?level=error&n=100", nil, servertest.Master())
	var entries []map[string]any
	if err := json.Unmarshal(res.Body, &entries); err != nil {
		t.Fatalf("scriptlog: %d %s", res.Status, res.Body)
	}
	for _, e := range entries {
		msg, _ := e["message"].(string)
		if !strings.Contains(msg, "function esmThrows") {
			continue
		}
		// The transformed code's positions map back to the files as written.
		for _, w := range []string{"\tat broken (lib/money.mjs:8:", "main.js:39:"} {
			if !strings.Contains(msg, w) {
				t.Errorf("the stack lacks %q:\n%s", w, msg)
			}
		}
		if strings.Contains(msg, "testdata/") {
			t.Errorf("the stack shows the install path:\n%s", msg)
		}
		return msg
	}
	t.Errorf("no error-level log entry for esmThrows in %s", res.Body)
	return ""
}
