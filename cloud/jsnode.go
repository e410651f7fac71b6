package cloud

import (
	"bytes"
	"crypto/hmac"
	"crypto/md5"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"fmt"
	"hash"
	"os"
	"strings"

	"github.com/dop251/goja"
	"github.com/dop251/goja_nodejs/buffer"
	"github.com/dop251/goja_nodejs/url"
	nodeutil "github.com/dop251/goja_nodejs/util"
)

// Node's everyday modules in cloud code. goja_nodejs gives Buffer, URL
// and URLSearchParams (url), util.format and console; the rest (crypto,
// path, querystring, events, util's other helpers, process, TextEncoder,
// fetch) is the prelude's node.js over the Go natives below. Modules that
// reach the machine (fs, child_process, net, …) are refused by name.

// nodeModules are the modules require() answers from the prelude's
// node.js (global __quarryNode), also as "node:<name>".
var nodeModules = []string{"crypto", "path", "querystring", "events", "util", "process", "string_decoder", "timers", "module"}

// parseModules are the parse npm package's entry points apps require or
// import.
var parseModules = []string{"parse", "parse/node"}

// refusedModules reach the file system, processes or the network around
// the outbound policy: require() names them and says so.
var refusedModules = []string{"fs", "fs/promises", "child_process", "net", "tls", "dgram", "http", "https", "http2", "cluster",
	"worker_threads", "vm", "os", "dns", "v8", "inspector", "readline", "repl"}

// maxRandomBytes bounds one crypto.randomBytes call.
const maxRandomBytes = 1 << 20

// registerNode adds the Node modules to the require registry.
func (s *Scripts) registerNode() {
	for _, name := range nodeModules {
		name := name
		load := func(vm *goja.Runtime, module *goja.Object) {
			mods := vm.Get("__quarryNode")
			if name == "util" && (mods == nil || goja.IsUndefined(mods)) {
				// console loads util before the prelude runs: goja_nodejs's
				// util, which node.js then completes in place.
				nodeutil.Require(vm, module)
				return
			}
			if mods == nil || goja.IsUndefined(mods) {
				panic(vm.NewGoError(fmt.Errorf("module %s is not ready", name)))
			}
			module.Set("exports", mods.ToObject(vm).Get(strings.ReplaceAll(name, "_", "")))
		}
		s.req.RegisterNativeModule(name, load)
		s.req.RegisterNativeModule("node:"+name, load)
	}
	// The parse npm package is the global Parse, as in Parse Server where
	// require('parse/node') and the global are the same SDK.
	for _, name := range parseModules {
		s.req.RegisterNativeModule(name, func(vm *goja.Runtime, module *goja.Object) {
			module.Set("exports", vm.Get("Parse"))
		})
	}
	for _, name := range refusedModules {
		name := name
		refuse := func(vm *goja.Runtime, _ *goja.Object) {
			panic(vm.NewGoError(fmt.Errorf("Cannot load module '%s': cloud code has no access to the machine's files, processes or sockets (use fetch or Parse.Cloud.httpRequest for HTTP).", name)))
		}
		s.req.RegisterNativeModule(name, refuse)
		s.req.RegisterNativeModule("node:"+name, refuse)
	}
}

// enableNode sets the globals goja_nodejs provides (URL,
// URLSearchParams; Buffer is set by buffer.Enable).
func enableNode(vm *goja.Runtime) {
	url.Enable(vm)
}

// env is process.env: only the variables the operator lists
// (cloudCodeEnv), read once at load.
func envOf(names []string) map[string]any {
	out := map[string]any{}
	for _, n := range names {
		if v, ok := os.LookupEnv(n); ok {
			out[n] = v
		}
	}
	return out
}

// nodeNatives are the Go halves of crypto, util.format (goja_nodejs's)
// and process.env.
func (s *Scripts) nodeNatives(vm *goja.Runtime) map[string]any {
	u := nodeutil.New(vm)
	return map[string]any{
		"digest": func(alg string, key goja.Value, chunks []goja.Value) goja.Value {
			h, err := newHash(alg, key, vm)
			if err != nil {
				panic(vm.NewGoError(err))
			}
			for _, c := range chunks {
				h.Write(buffer.Bytes(vm, c))
			}
			return buffer.WrapBytes(vm, h.Sum(nil))
		},
		"randomBytes": func(n int) goja.Value {
			if n < 0 || n > maxRandomBytes {
				panic(vm.NewTypeError("randomBytes: size must be between 0 and %d", maxRandomBytes))
			}
			b := make([]byte, n)
			_, _ = rand.Read(b)
			return buffer.WrapBytes(vm, b)
		},
		"timingSafeEqual": func(a, b goja.Value) bool {
			x, y := buffer.Bytes(vm, a), buffer.Bytes(vm, b)
			if len(x) != len(y) {
				panic(vm.NewTypeError("Input buffers must have the same byte length"))
			}
			return subtle.ConstantTimeCompare(x, y) == 1
		},
		"format": func(c goja.FunctionCall) goja.Value {
			if len(c.Arguments) == 0 {
				return vm.ToValue("")
			}
			var b bytes.Buffer
			u.Format(&b, c.Arguments[0].String(), c.Arguments[1:]...)
			return vm.ToValue(b.String())
		},
		"env": envOf(s.env),
	}
}

func newHash(alg string, key goja.Value, vm *goja.Runtime) (hash.Hash, error) {
	var mk func() hash.Hash
	switch strings.ToLower(strings.ReplaceAll(alg, "-", "")) {
	case "md5":
		mk = md5.New
	case "sha1":
		mk = sha1.New
	case "sha256":
		mk = sha256.New
	case "sha224":
		mk = sha256.New224
	case "sha384":
		mk = sha512.New384
	case "sha512":
		mk = sha512.New
	default:
		return nil, fmt.Errorf("Digest method not supported: %s", alg)
	}
	if key == nil || goja.IsUndefined(key) || goja.IsNull(key) {
		return mk(), nil
	}
	return hmac.New(mk, buffer.Bytes(vm, key)), nil
}
