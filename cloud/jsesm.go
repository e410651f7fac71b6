package cloud

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"

	"github.com/dop251/goja"
	"github.com/dop251/goja/parser"
	"github.com/evanw/esbuild/pkg/api"
)

// ES modules and syntax goja lacks. goja runs CommonJS scripts only and
// rejects a few newer forms (async generators, for await, import(),
// import.meta). A file goja cannot parse is rewritten by esbuild into
// CommonJS, with only those forms lowered, and an inline source map, so
// that stacks still name the original file, line and column. A file goja
// parses as it is runs unchanged: apps that ran before run the same code.

// requireWrapper is how goja_nodejs wraps a module's source; the probe
// parses the same text so that it accepts exactly what require would.
const (
	requireWrapperStart = "(function(exports,require,module,__filename,__dirname){"
	requireWrapperEnd   = "\n})"
)

// gojaLacks are the esbuild features goja does not parse (checked
// against goja by TestGojaLacks): esbuild lowers these and keeps every
// other form of the newest JavaScript as written.
var gojaLacks = map[string]bool{
	"async-generator":      false,
	"for-await":            false,
	"dynamic-import":       false,
	"import-meta":          false,
	"hashbang":             false,
	"regexp-match-indices": false,
}

// scriptSource gives require() a module's source goja can run: .js,
// .cjs and .mjs files (and files without an extension) that goja does not
// parse are transformed; JSON and source maps pass unchanged. An error
// names the file, line and column as goja's syntax errors do.
func scriptSource(path string, src []byte) ([]byte, error) {
	if filepath.Base(path) == "package.json" {
		return packageMain(src), nil
	}
	switch filepath.Ext(path) {
	case ".js", ".cjs", ".mjs", "":
	default:
		return src, nil
	}
	src = blankHashbang(src)
	if gojaCompiles(path, src) {
		return src, nil
	}
	out := api.Transform(string(src), api.TransformOptions{
		Loader:     api.LoaderJS,
		Format:     api.FormatCommonJS,
		Platform:   api.PlatformNode,
		Target:     api.ESNext,
		Supported:  gojaLacks,
		Sourcemap:  api.SourceMapInline,
		Sourcefile: filepath.Base(path),
		// The map's sources name the file; its text is on disk already.
		SourcesContent: api.SourcesContentExclude,
		LogLevel:       api.LogLevelSilent,
		Define:         importMeta(path),
	})
	if len(out.Errors) > 0 {
		m := out.Errors[0]
		if m.Location == nil {
			return nil, fmt.Errorf("SyntaxError: %s: %s", path, m.Text)
		}
		return nil, fmt.Errorf("SyntaxError: %s: Line %d:%d %s", path, m.Location.Line, m.Location.Column+1, m.Text)
	}
	return out.Code, nil
}

// exportConditions are the conditions of a package's "exports" require()
// follows, in order. "import" comes last: an ES module entry loads too,
// rewritten by esbuild.
var exportConditions = []string{"require", "node", "default", "import"}

// packageMain makes goja_nodejs, which reads only a package.json's
// "main", load the file the package's "exports" names for the package
// itself, as Node does ("exports" wins over "main"; packages published as
// ES modules often have no "main"). A package.json without "exports", or
// whose "exports" names no entry for ".", is returned unchanged; subpaths
// ("pkg/feature") still resolve as files.
func packageMain(src []byte) []byte {
	var pkg map[string]json.RawMessage
	if json.Unmarshal(src, &pkg) != nil {
		return src
	}
	exports, ok := pkg["exports"]
	if !ok {
		return src
	}
	target := exportTarget(exports, true)
	if target == "" {
		return src
	}
	pkg["main"], _ = json.Marshal(target)
	out, err := json.Marshal(pkg)
	if err != nil {
		return src
	}
	return out
}

// exportTarget is the file an "exports" value names for the package
// itself: a string, the first usable entry of an array, an object of
// conditions, or (at the top only) an object of subpaths whose "." entry
// it follows.
func exportTarget(raw json.RawMessage, top bool) string {
	var target string
	if json.Unmarshal(raw, &target) == nil {
		return target
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) == nil {
		for _, e := range list {
			if t := exportTarget(e, false); t != "" {
				return t
			}
		}
		return ""
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return ""
	}
	if dot, ok := m["."]; ok && top {
		return exportTarget(dot, false)
	}
	for _, cond := range exportConditions {
		if v, ok := m[cond]; ok {
			if t := exportTarget(v, false); t != "" {
				return t
			}
		}
	}
	return ""
}

// gojaCompiles reports whether goja compiles src as require would: some
// forms (async generators, a regular expression's flags) parse and fail
// only when compiled.
func gojaCompiles(path string, src []byte) bool {
	prg, err := goja.Parse(path, requireWrapperStart+string(src)+requireWrapperEnd, parser.WithDisableSourceMaps)
	if err != nil {
		return false
	}
	_, err = goja.CompileAST(prg, false)
	return err == nil
}

// importMeta gives import.meta's fields their Node values (esbuild
// makes import.meta an empty object in CommonJS).
func importMeta(path string) map[string]string {
	quote := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	return map[string]string{
		"import.meta.url":      quote((&url.URL{Scheme: "file", Path: filepath.ToSlash(path)}).String()),
		"import.meta.filename": quote(path),
		"import.meta.dirname":  quote(filepath.Dir(path)),
	}
}

// blankHashbang turns a first line "#!/usr/bin/env node" into a comment,
// as Node ignores it; goja would read it inside require's wrapper. Lines
// keep their numbers.
func blankHashbang(src []byte) []byte {
	if !bytes.HasPrefix(src, []byte("#!")) {
		return src
	}
	out := append([]byte("//"), src[2:]...)
	return out
}
