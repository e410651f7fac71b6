package cloud_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/quarrydata/quarry/cloud"
	"github.com/quarrydata/quarry/service"
)

// TestESModuleIdioms: what ES module apps written for Node do to find
// their files and load JSON (each failed to load before): fileURLToPath
// of import.meta.url, createRequire, JSON imports with attributes, and the
// legacy url functions older apps call.
func TestESModuleIdioms(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cloud")
	files := map[string]string{
		"data.json":    `{"name":"x","n":3}`,
		"package.json": `{"type":"module"}`,
		"main.js": `import data from './data.json' with { type: 'json' };
import { fileURLToPath, pathToFileURL } from 'node:url';
import url from 'url';
import path from 'path';
import { createRequire } from 'module';
const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));
Parse.Cloud.define('dirname', () => here.endsWith('/cloud') && here === import.meta.dirname);
Parse.Cloud.define('jsonImport', () => data);
Parse.Cloud.define('createRequire', () => require('./data.json').n);
Parse.Cloud.define('pathToFileURL', () => pathToFileURL('/srv/my app/x.js').href);
Parse.Cloud.define('fileURLToPath', () => fileURLToPath('file:///srv/my%20app/x.js'));
Parse.Cloud.define('urlParse', () => {
  const u = url.parse('https://user:pw@example.com:8080/a/b?x=1&y=2#frag', true);
  return [u.protocol, u.auth, u.host, u.hostname, u.port, u.pathname, u.search, u.query, u.hash, u.path];
});
Parse.Cloud.define('urlFormat', () => url.format({ protocol: 'https', hostname: 'example.com', pathname: '/p', query: { a: 1 } }));
Parse.Cloud.define('urlResolve', () => [url.resolve('http://a.com/b/c', '../d'), url.resolve('/one/two', 'three')]);
`,
	}
	for name, src := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	reg := cloud.New(quiet, 0)
	scripts, err := cloud.LoadJS(reg, cloud.JSOptions{Main: filepath.Join(dir, "main.js"), Size: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer scripts.Close()
	for _, c := range []struct{ fn, want string }{
		{"dirname", `true`},
		{"jsonImport", `{"n":3,"name":"x"}`},
		{"createRequire", `3`},
		{"pathToFileURL", `"file:///srv/my%20app/x.js"`},
		{"fileURLToPath", `"/srv/my app/x.js"`},
		{"urlParse", `["https:","user:pw","example.com:8080","example.com","8080","/a/b","?x=1\u0026y=2",{"x":"1","y":"2"},"#frag","/a/b?x=1\u0026y=2"]`},
		{"urlFormat", `"https://example.com/p?a=1"`},
		{"urlResolve", `["http://a.com/d","/one/three"]`},
	} {
		t.Run(c.fn, func(t *testing.T) {
			out, err := reg.RunFunction(service.Auth{Master: true}, c.fn, nil)
			if err != nil {
				t.Fatal(err)
			}
			if b, _ := json.Marshal(out); string(b) != c.want {
				t.Errorf("%s = %s, want %s", c.fn, b, c.want)
			}
		})
	}
}
