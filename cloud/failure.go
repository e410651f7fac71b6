package cloud

import (
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"

	"github.com/quarrydata/quarry/schema"
)

// scriptFailure is a JavaScript handler's error: what the client gets
// (err, Parse's code and message) and what only the server log shows
// (the stack, with file:line of main.js and the modules it requires).
type scriptFailure struct {
	err   *schema.Error
	stack string
}

func (f *scriptFailure) Error() string { return f.err.Error() }
func (f *scriptFailure) Unwrap() error { return f.err }

// panicMessage is what a client gets for a panic in a Go handler: the
// panic's value and stack are logged, never sent.
const panicMessage = "Cloud code failed with an internal error; the server log has the details."

// logFailure logs a handler's failure at error level, as Parse Server
// does, with the JavaScript stack in the message itself so that Parse
// Dashboard's Logs page (which shows messages) has it; it returns the
// error the client gets.
func (r *Registry) logFailure(what string, err error) error {
	var sf *scriptFailure
	if f, ok := err.(*scriptFailure); ok {
		sf = f
		err = f.err
	}
	code, text := schema.CodeScriptFailed, err.Error()
	if pe, ok := schema.AsError(err); ok {
		code, text = pe.Code, pe.Message
	}
	msg := fmt.Sprintf("Failed running cloud code %s (code %d): %s", what, code, text)
	if sf != nil && sf.stack != "" {
		msg += "\n" + sf.stack
	}
	r.log.Error(msg, "source", "cloud", "code", code)
	return err
}

// logPanic logs a Go handler's panic with its Go stack and returns the
// generic error the client gets.
func (r *Registry) logPanic(what string, v any) error {
	r.log.Error("Failed running cloud code "+what+": panic: "+fmt.Sprint(v), "source", "cloud", "stack", string(debug.Stack()))
	return schema.Errorf(schema.CodeScriptFailed, "%s", panicMessage)
}

// gojaPC is the program counter goja adds to a stack frame's position
// ("main.js:3:11(17)"): of no use to a developer.
var gojaPC = regexp.MustCompile(`(:\d+:\d+)\(\d+\)`)

// shortStack makes a stack readable: file names relative to the cloud
// folder (the log need not show where the app is installed), without
// goja's program counters.
func (s *Scripts) shortStack(stack string) string {
	if stack == "" {
		return ""
	}
	dir := filepath.Dir(s.main) + string(filepath.Separator)
	stack = strings.ReplaceAll(stack, dir, "")
	// A file loaded through esbuild (jsesm.go) is named by its source
	// map, as a URL: the folder may show escaped ("my%20app").
	if escaped := (&url.URL{Path: filepath.ToSlash(dir)}).String(); escaped != dir {
		stack = strings.ReplaceAll(stack, escaped, "")
	}
	lines := strings.Split(gojaPC.ReplaceAllString(stack, "$1"), "\n")
	kept := lines[:0]
	for _, l := range lines {
		if !strings.Contains(l, preludeName) { // the SDK's own frames
			kept = append(kept, l)
		}
	}
	return strings.Join(kept, "\n")
}
