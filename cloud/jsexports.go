package cloud

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Packages' "exports" maps, resolved as Node does: a bare specifier
// ("pkg", "pkg/sub", "@scope/pkg/feature/x") names a package folder in
// the nearest node_modules and a subpath the package's "exports" must
// list, directly or through a "*" pattern; the conditions in effect pick
// among a target's alternatives in the order the package.json lists them.
// goja_nodejs reads only "main", so require() asks this resolver first.

// Condition sets: require() and import (static import declarations and
// import(), which esbuild rewrites to calls of __quarryImport). "default"
// always matches.
var (
	requireConditions = []string{"require", "node"}
	importConditions  = []string{"import", "node"}
)

// errNotExported is a subpath the package's "exports" does not list
// (Node's ERR_PACKAGE_PATH_NOT_EXPORTED).
var errNotExported = errors.New("not exported")

// exportsTarget resolves subpath ("." or "./sub") in a package.json's
// "exports" under conds. It answers the target relative to the package
// folder ("./dist/sub.js"), ok false when the package.json has no
// "exports" (the package resolves by file paths, as before "exports"),
// and errNotExported when "exports" lists no target for subpath. When no
// target matches conds, the other set is tried: an ES module entry loads
// under require() too (esbuild rewrites it), and a CommonJS one under
// import.
func exportsTarget(pkgJSON []byte, subpath string, conds []string) (target string, ok bool, err error) {
	var pkg map[string]json.RawMessage
	if json.Unmarshal(pkgJSON, &pkg) != nil {
		return "", false, nil
	}
	exports, has := pkg["exports"]
	if !has || bytes.Equal(bytes.TrimSpace(exports), []byte("null")) {
		return "", false, nil
	}
	value, match, found := exportsEntry(exports, subpath)
	if !found {
		return "", true, errNotExported
	}
	other := importConditions
	if sameConditions(conds, importConditions) {
		other = requireConditions
	}
	for _, c := range [][]string{conds, other} {
		t, resolved := conditionTarget(value, c)
		if !resolved {
			continue
		}
		if t == "" {
			break // null: explicitly not exported
		}
		if match != "" || strings.Contains(t, "*") {
			t = strings.ReplaceAll(t, "*", match)
		}
		if !validTarget(t) {
			return "", true, errNotExported
		}
		return t, true, nil
	}
	return "", true, errNotExported
}

func sameConditions(a, b []string) bool { return len(a) > 0 && len(b) > 0 && a[0] == b[0] }

// exportsEntry finds subpath's value in "exports": the whole value for
// "." when it is a string, an array or an object of conditions (keys not
// starting with "."), else the subpath map's exact key, else its best
// "*" pattern (the longest prefix, as Node orders them), with the text
// "*" matched.
func exportsEntry(exports json.RawMessage, subpath string) (value json.RawMessage, match string, found bool) {
	keys, values, isObject := orderedObject(exports)
	if !isObject || len(keys) == 0 || !strings.HasPrefix(keys[0], ".") {
		if subpath == "." {
			return exports, "", true
		}
		return nil, "", false
	}
	best := -1
	for i, k := range keys {
		if k == subpath {
			return values[i], "", true
		}
		star := strings.Index(k, "*")
		if star < 0 || strings.Count(k, "*") != 1 {
			continue
		}
		prefix, suffix := k[:star], k[star+1:]
		if !strings.HasPrefix(subpath, prefix) || subpath == prefix ||
			(suffix != "" && (!strings.HasSuffix(subpath, suffix) || len(subpath) < len(k))) {
			continue
		}
		if best < 0 || len(prefix) > strings.Index(keys[best], "*") {
			best = i
			match = subpath[len(prefix) : len(subpath)-len(suffix)]
		}
	}
	if best < 0 {
		return nil, "", false
	}
	return values[best], match, true
}

// conditionTarget follows a target under conds: a string is the target;
// an array's first entry that resolves wins; an object's first key (in
// the file's order) that is "default" or in conds and resolves wins. null
// resolves to "" (not exported); resolved false means no entry applied.
func conditionTarget(raw json.RawMessage, conds []string) (target string, resolved bool) {
	raw = bytes.TrimSpace(raw)
	if bytes.Equal(raw, []byte("null")) {
		return "", true
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) == nil {
		for _, e := range list {
			if t, ok := conditionTarget(e, conds); ok && t != "" {
				return t, true
			}
		}
		return "", false
	}
	keys, values, ok := orderedObject(raw)
	if !ok {
		return "", false
	}
	for i, k := range keys {
		if k != "default" && !contains(conds, k) {
			continue
		}
		if t, ok := conditionTarget(values[i], conds); ok {
			return t, true
		}
	}
	return "", false
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// validTarget: Node accepts only targets inside the package ("./…",
// without ".." or node_modules segments).
func validTarget(t string) bool {
	if !strings.HasPrefix(t, "./") {
		return false
	}
	for _, seg := range strings.Split(t[2:], "/") {
		if seg == ".." || seg == "." || seg == "node_modules" {
			return false
		}
	}
	return true
}

// orderedObject reads a JSON object's keys and values in the file's
// order (which decides among conditions); ok is false for other values.
func orderedObject(raw json.RawMessage) (keys []string, values []json.RawMessage, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, nil, false
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, nil, false
		}
		k, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, false
		}
		keys, values = append(keys, k), append(values, v)
	}
	return keys, values, true
}

// splitBare splits a bare specifier into the package's name and the
// subpath Node looks up in "exports" ("." for the package itself); ok is
// false for relative and absolute paths and built-in "node:" names.
func splitBare(name string) (pkg, subpath string, ok bool) {
	if name == "" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "/") || strings.HasPrefix(name, "node:") || filepath.IsAbs(name) {
		return "", "", false
	}
	parts := strings.SplitN(name, "/", 3)
	n := 1
	if strings.HasPrefix(name, "@") {
		if len(parts) < 2 {
			return "", "", false
		}
		n = 2
	}
	pkg = strings.Join(parts[:n], "/")
	if rest := strings.TrimPrefix(name, pkg); rest != "" {
		return pkg, "." + rest, true
	}
	return pkg, ".", true
}

// resolveExports finds the file a bare specifier names through its
// package's "exports", searching node_modules from dir upwards as Node
// does (the first folder holding the package decides). It answers ""
// with no error when the package is not found or has no "exports", so
// that the loader resolves it by file paths as before.
func (s *Scripts) resolveExports(dir, name string, conds []string) (string, error) {
	pkg, subpath, ok := splitBare(name)
	if !ok || s.builtin(pkg) {
		return "", nil
	}
	for d := dir; ; d = filepath.Dir(d) {
		modules := filepath.Join(d, "node_modules")
		if filepath.Base(d) == "node_modules" {
			modules = d
		}
		pkgDir := filepath.Join(modules, filepath.FromSlash(pkg))
		pkgFile := filepath.Join(pkgDir, "package.json")
		if src, err := os.ReadFile(pkgFile); err == nil && s.inCloud(pkgFile) {
			target, has, err := exportsTarget(src, subpath, conds)
			switch {
			case err != nil:
				return "", fmt.Errorf("Package subpath '%s' is not defined by \"exports\" in %s/package.json.", subpath, pkg)
			case !has:
				return "", nil
			}
			return filepath.Join(pkgDir, filepath.FromSlash(target)), nil
		}
		if filepath.Dir(d) == d {
			return "", nil
		}
	}
}

// builtin reports names the loader answers without node_modules.
func (s *Scripts) builtin(pkg string) bool {
	switch pkg {
	case "console", "buffer", "url", "util", "process", "parse":
		return true
	}
	return contains(nodeModules, pkg) || contains(refusedModules, pkg)
}
