package cloud

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/dop251/goja"
	"github.com/dop251/goja_nodejs/require"
)

// errOutsideCloud refuses a require() of a file outside the cloud folder
// and the node_modules folders Node would search from it.
var errOutsideCloud = errors.New("modules must be inside the cloud folder or a node_modules folder")

// inCloud reports whether require() may read path: a file under the
// cloud folder (the folder of main.js), or under a node_modules folder
// of the cloud folder or of one of its parents, as Node searches them.
// Symbolic links are followed, so a link cannot lead out.
func (s *Scripts) inCloud(path string) bool {
	if !s.under(path) {
		return false
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return true // missing: the loader says so
	}
	return s.under(real)
}

func (s *Scripts) under(path string) bool {
	path = filepath.Clean(path)
	for _, dir := range []string{s.dir, s.realDir} {
		if dir != "" && strings.HasPrefix(path, dir+string(filepath.Separator)) {
			return true
		}
	}
	for d := s.dir; ; d = filepath.Dir(d) {
		if strings.HasPrefix(path, filepath.Join(d, "node_modules")+string(filepath.Separator)) {
			return true
		}
		if filepath.Dir(d) == d {
			return false
		}
	}
}

// enableRequire replaces the runtime's require with one that resolves
// packages' "exports" maps and names the module that failed (goja_nodejs
// says "Invalid module", or names the last path it probed) without
// showing where the app is installed. __quarryImport is the same under
// import's conditions: esbuild's rewrite of an ES module calls it for
// its import declarations and import().
func (s *Scripts) enableRequire(vm *goja.Runtime) {
	rm := s.req.Enable(vm)
	vm.Set("require", s.requireFunc(vm, rm, requireConditions))
	vm.Set("__quarryImport", s.requireFunc(vm, rm, importConditions))
}

func (s *Scripts) requireFunc(vm *goja.Runtime, rm *require.RequireModule, conds []string) func(goja.FunctionCall) goja.Value {
	return func(call goja.FunctionCall) goja.Value {
		name := call.Argument(0).String()
		target, err := s.resolveExports(callerDir(vm, s.dir), name, conds)
		var v goja.Value
		if err == nil {
			if target == "" {
				target = name
			}
			v, err = rm.Require(target)
		}
		if err == nil {
			return v
		}
		var ex *goja.Exception
		if errors.As(err, &ex) {
			panic(ex) // thrown by the module's own code
		}
		shown := s.relative(name)
		if filepath.IsAbs(shown) {
			shown = "…/" + filepath.Base(shown) // where the machine's files are is not the app's business
		}
		switch {
		case errors.Is(err, errOutsideCloud):
			err = fmt.Errorf("Cannot load module '%s': %w.", shown, errOutsideCloud)
		case errors.Is(err, require.InvalidModuleError), errors.Is(err, os.ErrNotExist):
			err = fmt.Errorf("Cannot find module '%s'.", shown)
		default:
			err = fmt.Errorf("Cannot load module '%s': %s", shown, s.relative(err.Error()))
		}
		panic(vm.NewGoError(err))
	}
}

// callerDir is the folder of the file that called require, as
// goja_nodejs finds it (the frame below the native function); dir when
// Go called it.
func callerDir(vm *goja.Runtime, dir string) string {
	var buf [2]goja.StackFrame
	frames := vm.CaptureCallStack(2, buf[:0])
	if len(frames) < 2 || frames[1].SrcName() == "" || !filepath.IsAbs(frames[1].SrcName()) {
		return dir
	}
	return filepath.Dir(frames[1].SrcName())
}

// relative removes the cloud folder from paths in text.
func (s *Scripts) relative(text string) string {
	if s.dir == "" {
		return text
	}
	text = strings.ReplaceAll(text, s.dir+string(filepath.Separator), "")
	if s.realDir != "" {
		text = strings.ReplaceAll(text, s.realDir+string(filepath.Separator), "")
	}
	return text
}
