package cloud

import (
	"errors"
	"testing"
)

// TestExportsTarget: a package's "exports" resolved as Node resolves it,
// subpaths, "*" patterns, conditions in the file's order, nested
// conditions, arrays, null and targets outside the package.
func TestExportsTarget(t *testing.T) {
	const subpaths = `{"exports":{
		".":{"import":"./esm/index.js","require":"./cjs/index.cjs"},
		"./sub":{"import":"./esm/sub.js","require":"./cjs/sub.cjs","default":"./sub.js"},
		"./feature/*":"./src/feature/*.js",
		"./feature/internal/*":null,
		"./icons/*.svg":{"default":"./assets/*.svg"},
		"./deep":{"node":{"import":"./deep/node.mjs","default":"./deep/node.js"},"default":"./deep/any.js"},
		"./order":{"node":"./node-first.js","require":"./require.cjs"},
		"./browser":{"browser":"./b.js"},
		"./list":[{"worker":"./w.js"},"./fallback.js"],
		"./escape":"../outside.js",
		"./package.json":"./package.json"}}`
	for _, c := range []struct {
		name, pkg, subpath string
		conds              []string
		want               string
		has                bool
		err                error
	}{
		{"no exports", `{"main":"m.js"}`, "./x", requireConditions, "", false, nil},
		{"string sugar", `{"exports":"./main.js"}`, ".", requireConditions, "./main.js", true, nil},
		{"string sugar lists no subpath", `{"exports":"./main.js"}`, "./x", requireConditions, "", true, errNotExported},
		{"conditions sugar", `{"exports":{"require":"./c.cjs","import":"./m.js"}}`, ".", importConditions, "./m.js", true, nil},
		{"dot under import", subpaths, ".", importConditions, "./esm/index.js", true, nil},
		{"dot under require", subpaths, ".", requireConditions, "./cjs/index.cjs", true, nil},
		{"subpath under import", subpaths, "./sub", importConditions, "./esm/sub.js", true, nil},
		{"subpath under require", subpaths, "./sub", requireConditions, "./cjs/sub.cjs", true, nil},
		{"pattern", subpaths, "./feature/a/b", requireConditions, "./src/feature/a/b.js", true, nil},
		{"longer pattern wins, null hides", subpaths, "./feature/internal/x", requireConditions, "", true, errNotExported},
		{"pattern with a suffix", subpaths, "./icons/home.svg", importConditions, "./assets/home.svg", true, nil},
		{"pattern suffix must match", subpaths, "./icons/home.png", importConditions, "", true, errNotExported},
		{"nested conditions under import", subpaths, "./deep", importConditions, "./deep/node.mjs", true, nil},
		{"nested conditions under require", subpaths, "./deep", requireConditions, "./deep/node.js", true, nil},
		{"the file's order decides", subpaths, "./order", requireConditions, "./node-first.js", true, nil},
		{"no condition applies", subpaths, "./browser", requireConditions, "", true, errNotExported},
		{"array fallback", subpaths, "./list", requireConditions, "./fallback.js", true, nil},
		{"target outside the package", subpaths, "./escape", requireConditions, "", true, errNotExported},
		{"not listed", subpaths, "./src/feature/a.js", requireConditions, "", true, errNotExported},
		{"import only loads under require too", `{"exports":{"./x":{"import":"./x.mjs"}}}`, "./x", requireConditions, "./x.mjs", true, nil},
		{"require only loads under import too", `{"exports":{"./x":{"require":"./x.cjs"}}}`, "./x", importConditions, "./x.cjs", true, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, has, err := exportsTarget([]byte(c.pkg), c.subpath, c.conds)
			if got != c.want || has != c.has || !errors.Is(err, c.err) {
				t.Errorf("exportsTarget(%s) = %q, %v, %v; want %q, %v, %v", c.subpath, got, has, err, c.want, c.has, c.err)
			}
		})
	}
}

// TestSplitBare: the package name and "exports" subpath of a specifier.
func TestSplitBare(t *testing.T) {
	for _, c := range []struct{ name, pkg, subpath string }{
		{"lodash", "lodash", "."},
		{"lodash/fp/map", "lodash", "./fp/map"},
		{"@scope/pkg", "@scope/pkg", "."},
		{"@scope/pkg/a/b.js", "@scope/pkg", "./a/b.js"},
		{"./local.js", "", ""},
		{"/abs/x.js", "", ""},
		{"node:crypto", "", ""},
		{"@scope", "", ""},
	} {
		pkg, subpath, ok := splitBare(c.name)
		if pkg != c.pkg || subpath != c.subpath || ok != (c.pkg != "") {
			t.Errorf("splitBare(%q) = %q, %q, %v; want %q, %q", c.name, pkg, subpath, ok, c.pkg, c.subpath)
		}
	}
}
