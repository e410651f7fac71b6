package cloud

import (
	"bytes"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/dop251/goja"
	"github.com/evanw/esbuild/pkg/api"
)

// ES modules with top-level await, and importers that wait for them.
//
// esbuild refuses top-level await when it writes CommonJS, and goja runs
// CommonJS only. So an ES module's body runs inside an async function
// (esmOpen … esmClose): module.exports is set before its first await, as
// esbuild's rewrite assigns it first, and the function's promise is the
// module's completion. Before the rewrite each top-level "await" (esbuild
// lists them all in its errors) is swapped for a unary operator of the
// same precedence the file does not use ("void ", "~~~~~"), which esbuild
// then prints back in place; the output's markers become "await" again.
// Import declarations and import() wait for a module whose top-level
// await is still running (__quarryESM in prelude/esm.js); a module that
// awaits nothing still runs to its end inside require(), as before.

const (
	esmOpen  = "__quarryESM.loaded(module, (async () => { let __quarryModule;"
	esmClose = "})());"
	tlaError = "Top-level await is currently not supported"
)

// awaitMarkers stand for a top-level await during the rewrite: unary
// operators with await's precedence. The first one whose text (absent)
// the file does not hold is used, when the rewritten code holds it once
// per await. A one-character operator must be absent altogether: in
// "~(await x)" the parentheses go and "~~~~~~x" would be ambiguous.
// "typeof" is one byte longer: columns after it on its line shift by one.
var awaitMarkers = []struct{ marker, absent string }{
	{"void ", "void "},
	{"~~~~~", "~"},
	{"typeof", "typeof"},
}

var (
	// importLine is a declaration esbuild writes for an import: the
	// require becomes a wait for the module when it is still running.
	importLine = regexp.MustCompile(`(?m)^((?:var [\w$]+ = |__reExport\([\w$]+, )(?:__toESM\()?)require\(("(?:[^"\\\n]|\\.)*")\)`)
	// dynamicImport is esbuild's lowering of import(x).
	dynamicImport = regexp.MustCompile(`Promise\.resolve\(\)\.then\(\(\) => __toESM\(require\(([^()]*)\)(, 1)?\)\)`)
)

// transformModule rewrites src, which goja does not compile, into
// CommonJS goja runs (see scriptSource).
func transformModule(path string, src []byte) ([]byte, error) {
	out := esbuildCJS(path, src, false)
	marker := ""
	if awaits := topLevelAwaits(out.Errors); len(awaits) > 0 {
		var err error
		if out, marker, err = rewriteAwaits(path, src, awaits); err != nil {
			return nil, err
		}
	}
	if len(out.Errors) > 0 {
		return nil, syntaxError(path, out.Errors[0])
	}
	if marker == "" && (bytes.Contains(out.Code, []byte("module.exports = __toCommonJS(")) || importLine.Match(out.Code)) {
		out = esbuildCJS(path, src, true) // exports or imports: wrap it so that its imports can wait
		if len(out.Errors) > 0 {
			return nil, syntaxError(path, out.Errors[0])
		}
	}
	code := string(out.Code)
	code = dynamicImport.ReplaceAllString(code, "__quarryESM.dynamic(() => __quarryImport($1), (m) => __toESM(m$2))")
	if !strings.Contains(code, esmOpen) {
		return []byte(code), nil
	}
	code = importLine.ReplaceAllString(code,
		"${1}(__quarryESM.isPending(__quarryModule = __quarryImport($2)) ? await __quarryESM.ready(__quarryModule) : __quarryModule)")
	if marker != "" {
		code = strings.ReplaceAll(code, marker, "await ")
	}
	return []byte(code), nil
}

// esbuildCJS runs esbuild's rewrite to CommonJS, lowering only what goja
// lacks; wrap puts the body in the async function of an ES module.
func esbuildCJS(path string, src []byte, wrap bool) api.TransformResult {
	opts := api.TransformOptions{
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
	}
	if wrap {
		opts.Banner, opts.Footer = esmOpen, esmClose
	}
	return api.Transform(string(src), opts)
}

func syntaxError(path string, m api.Message) error {
	if m.Location == nil {
		return fmt.Errorf("SyntaxError: %s: %s", path, m.Text)
	}
	return fmt.Errorf("SyntaxError: %s: Line %d:%d %s", path, m.Location.Line, m.Location.Column+1, m.Text)
}

// topLevelAwaits are the places of the top-level awaits esbuild refused,
// or none when any other error is among them (that one is reported).
func topLevelAwaits(errs []api.Message) []api.Location {
	var out []api.Location
	for _, e := range errs {
		if !strings.HasPrefix(e.Text, tlaError) || e.Location == nil {
			return nil
		}
		out = append(out, *e.Location)
	}
	return out
}

// rewriteAwaits runs the wrapped rewrite with the top-level awaits
// swapped for the first marker that comes out once per await. A top-level
// "for await" or "await using" has no such stand-in: it is refused with
// its line, and so is an await of a constant, which esbuild folds away.
func rewriteAwaits(path string, src []byte, awaits []api.Location) (api.TransformResult, string, error) {
	lines := lineStarts(src)
	offsets := make([]int, len(awaits))
	for i, loc := range awaits {
		if loc.Line < 1 || loc.Line > len(lines) {
			return api.TransformResult{}, "", fmt.Errorf("SyntaxError: %s: Line %d: %s", path, loc.Line, tlaError)
		}
		off := lines[loc.Line-1] + loc.Column
		if off+5 > len(src) || string(src[off:off+5]) != "await" {
			return api.TransformResult{}, "", fmt.Errorf("SyntaxError: %s: Line %d:%d unexpected top-level await", path, loc.Line, loc.Column+1)
		}
		before := strings.TrimRight(string(src[lines[loc.Line-1]:off]), " \t")
		after := strings.TrimLeft(string(src[off+5:min(len(src), off+64)]), " \t\r\n")
		if strings.HasSuffix(before, "for") || strings.HasPrefix(after, "using") {
			return api.TransformResult{}, "", fmt.Errorf("SyntaxError: %s: Line %d:%d a top-level \"for await\" or \"await using\" is not supported: put it in an async function and await that", path, loc.Line, loc.Column+1)
		}
		offsets[i] = off
	}
	sort.Ints(offsets)
	folded := false
	for _, m := range awaitMarkers {
		marker := m.marker
		if bytes.Contains(src, []byte(m.absent)) {
			continue // the file has the text itself
		}
		out := esbuildCJS(path, markAwaits(src, offsets, marker), true)
		if len(out.Errors) > 0 {
			return out, "", nil
		}
		if strings.Count(string(out.Code), marker) == len(awaits) {
			return out, marker, nil
		}
		folded = true
	}
	if folded {
		return api.TransformResult{}, "", fmt.Errorf("SyntaxError: %s: top-level await of a constant is not supported (await a promise or a call)", path)
	}
	return api.TransformResult{}, "", fmt.Errorf("SyntaxError: %s: Line %d:%d this top-level await could not be rewritten", path, awaits[0].Line, awaits[0].Column+1)
}

// markAwaits swaps the "await" at each offset for marker.
func markAwaits(src []byte, offsets []int, marker string) []byte {
	out := make([]byte, 0, len(src)+len(offsets))
	last := 0
	for _, off := range offsets {
		out = append(append(out, src[last:off]...), marker...)
		last = off + 5
	}
	return append(out, src[last:]...)
}

// lineStarts are the byte offsets where src's lines start.
func lineStarts(src []byte) []int {
	starts := []int{0}
	for i, c := range src {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// promiseState is the prelude's look at a promise (native.promiseState):
// {state: "pending" | "fulfilled" | "rejected", result}.
func promiseState(v goja.Value) map[string]any {
	p, ok := v.Export().(*goja.Promise)
	if !ok {
		return map[string]any{"state": "fulfilled", "result": v}
	}
	switch p.State() {
	case goja.PromiseStateRejected:
		return map[string]any{"state": "rejected", "result": p.Result()}
	case goja.PromiseStateFulfilled:
		return map[string]any{"state": "fulfilled", "result": p.Result()}
	}
	return map[string]any{"state": "pending"}
}

// pendingModule is the completion of a module whose top-level await is
// still running when require() returned its exports; nil otherwise.
func pendingModule(vm *goja.Runtime, exports goja.Value) *goja.Promise {
	esm, ok := vm.Get("__quarryESM").(*goja.Object)
	if !ok {
		return nil
	}
	ready, ok := goja.AssertFunction(esm.Get("ready"))
	if !ok {
		return nil
	}
	v, err := ready(esm, exports)
	if err != nil || v == nil || goja.IsUndefined(v) {
		return nil
	}
	p, _ := v.Export().(*goja.Promise)
	return p
}

// awaitMain waits, after the loop's first run, for main.js's top-level
// await: the loop goes on while an HTTP request it awaits is out; a
// rejection is a load error with the JavaScript stack (file:line of the
// files as written), and a promise nothing will settle is one too.
func (s *Scripts) awaitMain(rt *jsRuntime) error {
	p := rt.loading
	rt.loading = nil
	for p.State() == goja.PromiseStatePending && rt.queued {
		rt.queued = false
		rt.loop.Run(func(*goja.Runtime) {})
	}
	rt.queued = false
	switch p.State() {
	case goja.PromiseStateRejected:
		return fmt.Errorf("cloud code %s: %s", s.main, rejectionText(p.Result()))
	case goja.PromiseStatePending:
		return fmt.Errorf("cloud code %s: its top-level await never settled (nothing left to run could settle it)", s.main)
	}
	return nil
}

// rejectionText is a rejection's reason with its stack when it is an
// Error.
func rejectionText(v goja.Value) string {
	if o, ok := v.(*goja.Object); ok {
		if st := o.Get("stack"); st != nil && !goja.IsUndefined(st) {
			return st.String()
		}
	}
	return v.String()
}
