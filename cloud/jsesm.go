package cloud

import (
	"bytes"
	"encoding/json"
	"net/url"
	"path/filepath"

	"github.com/dop251/goja"
	"github.com/dop251/goja/parser"
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
	return transformModule(path, src)
}

// packageMain makes goja_nodejs, which reads only a package.json's
// "main", load the file the package's "exports" names for the package
// itself under require()'s conditions, as Node does ("exports" wins over
// "main"; packages published as ES modules often have no "main"). A
// package.json without "exports", or whose "exports" names no entry for
// ".", is returned unchanged. (require() resolves bare names through
// resolveExports first; this covers a package loaded by its folder.)
func packageMain(src []byte) []byte {
	target, has, err := exportsTarget(src, ".", requireConditions)
	if !has || err != nil {
		return src
	}
	var pkg map[string]json.RawMessage
	if json.Unmarshal(src, &pkg) != nil {
		return src
	}
	pkg["main"], _ = json.Marshal(target)
	out, err := json.Marshal(pkg)
	if err != nil {
		return src
	}
	return out
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
