package cloud

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dop251/goja"
)

// TestGojaLacks keeps gojaLacks true to goja: each feature listed is
// still one goja rejects (drop it when goja learns it, so that esbuild
// stops lowering it), and esbuild's output for it is code goja compiles
// (a regular expression with flag d then fails when run, not at load).
func TestGojaLacks(t *testing.T) {
	samples := map[string]string{
		"async-generator":      "async function* g() { yield 1 }\nmodule.exports = g;",
		"for-await":            "module.exports = async (it) => { for await (const x of it) {} };",
		"dynamic-import":       "module.exports = () => import('./x.js');",
		"import-meta":          "module.exports = import.meta.url;",
		"hashbang":             "#!/usr/bin/env node\nmodule.exports = 1;",
		"regexp-match-indices": "module.exports = /a/d;",
	}
	for feature := range gojaLacks {
		src, ok := samples[feature]
		if !ok {
			t.Errorf("no sample for %s", feature)
			continue
		}
		t.Run(feature, func(t *testing.T) {
			if _, err := goja.Compile("x.js", requireWrapperStart+src+requireWrapperEnd, false); err == nil {
				t.Errorf("goja now accepts %s: remove it from gojaLacks", feature)
			}
			out, err := scriptSource("/app/x.js", []byte(src))
			if err != nil {
				t.Fatalf("transform: %v", err)
			}
			if _, err := goja.Compile("x.js", requireWrapperStart+string(out)+requireWrapperEnd, false); err != nil {
				t.Errorf("goja rejects the transformed code: %v\n%s", err, out)
			}
		})
	}
}

// TestScriptSourceKeepsWhatGojaRuns: a file goja parses is not rewritten
// (its text, lines and columns stay the app's own), JSON is never
// touched, and a syntax error names the file and line as goja does.
func TestScriptSourceKeepsWhatGojaRuns(t *testing.T) {
	for _, c := range []struct {
		name, path, src, want, err string
	}{
		{name: "modern CommonJS", path: "/app/a.js", src: "class A { #x = 1; static y = 2 }\nmodule.exports = { a: 1n ?? 2, b: A };\n"},
		{name: "JSON", path: "/app/a.json", src: `{"export": "import x from 'y'"}`},
		{name: "ES module", path: "/app/m.js", src: "export const a = 1;\n", want: "module.exports = __toCommonJS("},
		{name: "hashbang kept on its line", path: "/app/b.js", src: "#!/usr/bin/env node\nmodule.exports = 1;\n", want: "//"},
		{name: "syntax error", path: "/app/bad.js", src: "export const a = 1;\nlet = ;\n", err: "SyntaxError: /app/bad.js: Line 2:"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := scriptSource(c.path, []byte(c.src))
			switch {
			case c.err != "":
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
			case err != nil:
				t.Fatal(err)
			case c.want == "" && string(out) != c.src:
				t.Errorf("rewritten:\n%s", out)
			case c.want != "" && !strings.Contains(string(out), c.want):
				t.Errorf("output lacks %q:\n%s", c.want, out)
			}
		})
	}
}

// BenchmarkScriptSource measures what loading costs a file once per
// process: the compile probe alone for CommonJS goja runs, and the probe
// plus esbuild for an ES module (testdata/esmapp's main.js).
func BenchmarkScriptSource(b *testing.B) {
	esm, err := os.ReadFile(filepath.Join("testdata", "esmapp", "main.js"))
	if err != nil {
		b.Fatal(err)
	}
	cjs, err := os.ReadFile(filepath.Join("testdata", "realapp", "main.js"))
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		src  []byte
	}{{"CommonJS_realapp", cjs}, {"ESModule_esmapp", esm}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := scriptSource("/app/main.js", c.src); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestPackageMain: the entry a package.json's "exports" names for the
// package itself becomes its "main", as Node prefers "exports".
func TestPackageMain(t *testing.T) {
	for _, c := range []struct{ name, pkg, main string }{
		{"no exports keeps main", `{"main":"lib/a.js"}`, "lib/a.js"},
		{"string", `{"main":"old.js","exports":"./new.js"}`, "./new.js"},
		{"conditions prefer require", `{"exports":{"import":"./m.mjs","require":"./c.cjs"}}`, "./c.cjs"},
		{"dot entry with nested conditions", `{"exports":{".":{"node":{"require":"./n.cjs"},"default":"./d.js"},"./sub":"./s.js"}}`, "./n.cjs"},
		{"import only", `{"type":"module","exports":{"import":"./esm.js"}}`, "./esm.js"},
		{"array", `{"exports":[{"worker":"./w.js"},"./fallback.js"]}`, "./fallback.js"},
		{"subpaths only keep main", `{"main":"m.js","exports":{"./sub":"./s.js"}}`, "m.js"},
		{"browser only keeps main", `{"main":"m.js","exports":{"browser":"./b.js"}}`, "m.js"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := scriptSource("/app/node_modules/p/package.json", []byte(c.pkg))
			if err != nil {
				t.Fatal(err)
			}
			var pkg struct{ Main string }
			if err := json.Unmarshal(out, &pkg); err != nil || pkg.Main != c.main {
				t.Errorf("main %q (%v), want %q: %s", pkg.Main, err, c.main, out)
			}
		})
	}
}
