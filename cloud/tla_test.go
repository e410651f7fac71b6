package cloud_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quarrydata/quarry/cloud"
	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server/servertest"
	"github.com/quarrydata/quarry/service"
)

// TestTopLevelAwaitApp loads testdata/tlaapp, an ES module app (package.json
// "type": "module") whose main.js awaits Parse.Config.get() and import()
// at top level and imports modules whose own top-level await waits on a
// timer, and a package's "exports" subpaths under import and require.
func TestTopLevelAwaitApp(t *testing.T) {
	srv := servertest.StartLogged(t, quiet, func(o *config.Options) {
		o.Cloud = filepath.Join("testdata", "tlaapp", "main.js")
	})
	run(t, srv, []scenario{
		{name: "values awaited at load", method: "POST", path: "/functions/tla", status: 200,
			has: []string{`"config":true`, `"settings":{"ready":true,"tick":"after a timer"}`, `"slow":"slow done"`}},
		{name: "exports subpaths and conditions", method: "POST", path: "/functions/tla", status: 200,
			has: []string{`"sum":3`, `"greet":"hello ada"`, `"nested":"node-import"`, `"entry":"index"`, `"legacy":"cjs"`}},
		{name: "import() waits for the module's top-level await", method: "POST", path: "/functions/later", status: 200,
			has: []string{`{"result":{"later":true}}`}},
		{name: "a subpath exports maps to null", method: "POST", path: "/functions/notExported", body: map[string]any{"name": "toolkit/internal/secret.js"}, status: 200,
			has: []string{`Cannot load module 'toolkit/internal/secret.js': Package subpath './internal/secret.js' is not defined by \"exports\" in toolkit/package.json.`}},
		{name: "a subpath exports does not list", method: "POST", path: "/functions/notExported", body: map[string]any{"name": "toolkit/src/hidden.js"}, status: 200,
			has: []string{`Package subpath './src/hidden.js' is not defined by \"exports\"`}, hasNot: []string{"testdata", "loaded"}},
		{name: "a listed subpath loads", method: "POST", path: "/functions/notExported", body: map[string]any{"name": "toolkit/feature/greet"}, status: 200,
			has: []string{`{"result":"loaded"}`}},
	})
}

// TestTopLevelAwaitLoad: main.js's top-level await decides whether the
// code loaded. Functions defined after an await exist; a rejection, in
// main.js or a module it imports, stops the start with its message and
// the file and line as written; so does a promise nothing settles and a
// form esbuild cannot rewrite.
func TestTopLevelAwaitLoad(t *testing.T) {
	timer := "await new Promise((resolve) => setTimeout(resolve, 1));\n"
	for _, c := range []struct {
		name  string
		files map[string]string
		fn    string // a function to run, answering want
		want  string // the result's JSON, or a text the load error has
		err   []string
	}{
		{name: "functions defined after awaits", files: map[string]string{
			"main.js": timer + "const n = await Promise.resolve(20);\nParse.Cloud.define('late', () => n + 1);\n"},
			fn: "late", want: "21"},
		{name: "an importer waits for the module", files: map[string]string{
			"main.js": "import { v } from './lib.js';\nParse.Cloud.define('v', () => v);\n",
			"lib.js":  timer + "export const v = 'ready';\n"},
			fn: "v", want: `"ready"`},
		{name: "a chain of modules that await", files: map[string]string{
			"main.js": "import { b } from './b.mjs';\nParse.Cloud.define('b', () => b);\n",
			"b.mjs":   "import { a } from './a.mjs';\n" + timer + "export const b = a + 1;\n",
			"a.mjs":   timer + "export const a = await Promise.resolve(1);\n"},
			fn: "b", want: "2"},
		{name: "await in an expression and a block", files: map[string]string{
			"main.js": "const x = !(await Promise.resolve(false)) && (await Promise.resolve(7));\nif (x) { Parse.Cloud.define('x', () => x + (await Promise.resolve(0))); }\n"},
			err: []string{"main.js: Line 2:"}},
		{name: "await inside and outside a block", files: map[string]string{
			"main.js": "const x = !(await Promise.resolve(false)) && (await Promise.resolve(7));\nif (x) { const y = await Promise.resolve(1); Parse.Cloud.define('x', () => x + y); }\n"},
			fn: "x", want: "8"},
		{name: "a file that uses void and ~", files: map[string]string{
			"main.js": "const n = ~~(await Promise.resolve(3.5));\nvoid 0;\nParse.Cloud.define('n', () => n);\n"},
			fn: "n", want: "3"},
		{name: "a file that says avoid and negates awaits", files: map[string]string{
			"main.js": "const note = 'avoid void ';\nconst n = !(await Promise.resolve(false)) && -(await Promise.resolve(-3));\nParse.Cloud.define('n', () => [note, n, typeof n]);\n"},
			fn: "n", want: `["avoid void ",3,"number"]`},
		{name: "a file that uses void, ~ and typeof", files: map[string]string{
			"main.js": "void 0;\nconst n = ~(await Promise.resolve(-3));\nParse.Cloud.define('n', () => typeof n);\n"},
			err: []string{"main.js: Line 2:", "could not be rewritten"}},
		{name: "CommonJS with top-level await", files: map[string]string{
			"main.js": "const lib = require('./lib.js');\nconst v = await lib.later();\nParse.Cloud.define('c', () => v);\n",
			"lib.js":  "exports.later = async () => 'cjs';\n"},
			fn: "c", want: `"cjs"`},
		{name: "a rejection in main.js", files: map[string]string{
			"main.js": "export const a = 1;\n\nawait Promise.reject(new Error('no config'));\n"},
			err: []string{"no config", "main.js:3:"}},
		{name: "a rejection in an imported module", files: map[string]string{
			"main.js":  "import { x } from './lib/x.js';\n",
			"lib/x.js": timer + "\nthrow new Error('lib failed');\nexport const x = 1;\n"},
			err: []string{"lib failed", "lib/x.js:3:"}},
		{name: "a throw before the first await", files: map[string]string{
			"main.js": "throw new Error('early');\nawait Promise.resolve();\n"},
			err: []string{"early"}},
		{name: "a promise nothing settles", files: map[string]string{
			"main.js": "await new Promise(() => {});\n"},
			err: []string{"main.js: its top-level await never settled"}},
		{name: "for await at top level", files: map[string]string{
			"main.js": "const it = [];\nfor await (const x of it) {}\n"},
			err: []string{"main.js: Line 2:5", `"for await"`}},
		{name: "await of a constant", files: map[string]string{
			"main.js": "await 1;\nconst a = await 2;\nParse.Cloud.define('a', () => a);\n"},
			fn: "a", want: "2"},
		{name: "await of a constant in a file that uses typeof", files: map[string]string{
			"main.js": "await 1;\nParse.Cloud.define('t', () => typeof 1);\n"},
			fn: "t", want: `"number"`},
		{name: "await of a constant in a file that uses void and ~", files: map[string]string{
			"main.js": "void globalThis;\n~globalThis.x;\nawait 1;\n"},
			err: []string{"main.js: top-level await of a constant"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, src := range c.files {
				p := filepath.Join(dir, filepath.FromSlash(name))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			reg := cloud.New(quiet, 0)
			scripts, err := cloud.LoadJS(reg, cloud.JSOptions{Main: filepath.Join(dir, "main.js"), Size: 1})
			if c.err != nil {
				if err == nil {
					scripts.Close()
					t.Fatalf("LoadJS succeeded, want an error with %q", c.err)
				}
				for _, w := range c.err {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("LoadJS: %v\nwant %q in it", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer scripts.Close()
			out, err := reg.RunFunction(service.Auth{Master: true}, c.fn, nil)
			if err != nil {
				t.Fatalf("%s: %v", c.fn, err)
			}
			if b, _ := json.Marshal(out); string(b) != c.want {
				t.Errorf("%s = %s, want %s", c.fn, b, c.want)
			}
		})
	}
}
