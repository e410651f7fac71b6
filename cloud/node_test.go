package cloud_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/quarrydata/quarry/config"
)

const nodeJS = `
const crypto = require('crypto');
const nodeCrypto = require('node:crypto');
const path = require('path');
const qs = require('querystring');
const util = require('util');
const EventEmitter = require('events');
Parse.Cloud.define('crypto', () => {
  const id = crypto.randomUUID();
  return {
    md5: crypto.createHash('md5').update('abc').digest('hex'),
    sha1: crypto.createHash('sha1').update('ab').update('c').digest('hex'),
    sha256: crypto.createHash('sha256').update('abc').digest('base64'),
    hmac: crypto.createHmac('sha256', 'key').update('The quick brown fox jumps over the lazy dog').digest('hex'),
    random: crypto.randomBytes(16).length, uuid: /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(id),
    same: crypto.timingSafeEqual(Buffer.from('abc'), Buffer.from('abc')), differ: crypto.timingSafeEqual(Buffer.from('abc'), Buffer.from('abd')),
    prefixed: nodeCrypto === crypto,
  };
});
Parse.Cloud.define('buffer', () => {
  const b = Buffer.from('héllo', 'utf8');
  return {
    hex: b.toString('hex'), base64: b.toString('base64'), back: Buffer.from(b.toString('base64'), 'base64').toString('utf8'),
    concat: Buffer.concat([Buffer.from('ab'), Buffer.from('cd')]).toString(), byteLength: Buffer.byteLength('héllo'),
    alloc: Buffer.alloc(3).length, isBuffer: Buffer.isBuffer(b),
    encoded: Array.from(new TextEncoder().encode('hé')), decoded: new TextDecoder().decode(new TextEncoder().encode('hé')),
  };
});
Parse.Cloud.define('modules', () => {
  const u = new URL('https://example.com:8080/a/b?x=1&y=two#frag');
  const e = new EventEmitter();
  let heard = '';
  e.once('ping', (v) => { heard += v; });
  e.emit('ping', 'a'); e.emit('ping', 'b');
  return {
    join: path.join('/a/b', '../c', 'd.txt'), base: path.basename('/x/y/file.js', '.js'), ext: path.extname('f.tar.gz'), dir: path.dirname('/x/y/z'),
    qs: qs.stringify({ a: 1, b: ['x', 'y z'] }), parsed: qs.parse('a=1&b=x&b=y%20z'),
    host: u.hostname, port: u.port, y: u.searchParams.get('y'), params: new URLSearchParams({ q: 'a b' }).toString(),
    format: util.format('%s has %d items', 'cart', 3), heard, promisify: typeof util.promisify(setTimeout),
  };
});
Parse.Cloud.define('env', () => ({ allowed: process.env.QUARRY_TEST_ALLOWED, hidden: process.env.QUARRY_TEST_HIDDEN === undefined,
  path: process.env.PATH === undefined, platform: process.platform }));
Parse.Cloud.define('refused', () => require('fs'));
Parse.Cloud.define('timer', async () => {
  const t0 = Date.now();
  await new Promise((resolve) => setTimeout(resolve, 5));
  return { waited: Date.now() - t0 >= 0 };
});
Parse.Cloud.define('fetch', async (req) => {
  const res = await fetch(req.params.url + '/echo?x=1', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ a: 1 }) });
  const body = await res.json();
  const missing = await fetch(req.params.url + '/missing');
  return { ok: res.ok, status: res.status, type: res.headers.get('content-type'), body, missing: missing.status, missingOk: missing.ok };
});
Parse.Cloud.define('fetchPrivate', async () => { const r = await fetch('http://127.0.0.1:1/'); return r.status; });
Parse.Cloud.define('withFunction', () => ({ name: 'x', helper() { return 1; }, list: [1, () => 2], nested: { fn: function () {} }, when: new Date(0) }));
Parse.Cloud.define('onlyFunction', () => function () {});
`

// TestNodeModules: crypto, Buffer, TextEncoder, URL, path, querystring,
// util, events, timers and process.env in cloud code; fs refused by name.
func TestNodeModules(t *testing.T) {
	t.Setenv("QUARRY_TEST_ALLOWED", "yes")
	t.Setenv("QUARRY_TEST_HIDDEN", "secret")
	srv := startScriptWith(t, nodeJS, func(o *config.Options) { o.CloudCodeEnv = []string{"QUARRY_TEST_ALLOWED", "QUARRY_TEST_UNSET"} })
	run(t, srv, []scenario{
		{name: "crypto", method: "POST", path: "/functions/crypto", status: 200, has: []string{
			`"md5":"900150983cd24fb0d6963f7d28e17f72"`, `"sha1":"a9993e364706816aba3e25717850c26c9cd0d89d"`,
			`"sha256":"ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0="`,
			`"hmac":"f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8"`, `"random":16`, `"uuid":true`,
			`"same":true`, `"differ":false`, `"prefixed":true`}},
		{name: "Buffer and TextEncoder", method: "POST", path: "/functions/buffer", status: 200, has: []string{
			`"hex":"68c3a96c6c6f"`, `"base64":"aMOpbGxv"`, `"back":"héllo"`, `"concat":"abcd"`, `"byteLength":6`, `"alloc":3`,
			`"isBuffer":true`, `"encoded":[104,195,169]`, `"decoded":"hé"`}},
		{name: "path, querystring, URL, util, events", method: "POST", path: "/functions/modules", status: 200, has: []string{
			`"join":"/a/c/d.txt"`, `"base":"file"`, `"ext":".gz"`, `"dir":"/x/y"`, `"qs":"a=1\u0026b=x\u0026b=y%20z"`,
			`"parsed":{"a":"1","b":["x","y z"]}`, `"host":"example.com"`, `"port":"8080"`, `"y":"two"`, `"params":"q=a+b"`,
			`"format":"cart has 3 items"`, `"heard":"a"`, `"promisify":"function"`}},
		{name: "process.env shows only the allowed variables", method: "POST", path: "/functions/env", status: 200,
			has: []string{`"allowed":"yes"`, `"hidden":true`, `"path":true`, `"platform":"linux"`}, hasNot: []string{"secret"}},
		{name: "fs is refused by name", method: "POST", path: "/functions/refused", status: 400,
			has: []string{`"code":141`, "Cannot load module 'fs': cloud code has no access"}},
		{name: "setTimeout resolves within the call", method: "POST", path: "/functions/timer", status: 200, has: []string{`"waited":true`}},
		{name: "fetch refuses private addresses by default", method: "POST", path: "/functions/fetchPrivate", status: 400,
			has: []string{"fetch failed", "not allowed by the outbound policy"}},
	})
}

// TestResultWithFunctions: a function's answer holding JavaScript
// functions answers what JSON.stringify makes of it (Parse's answer):
// functions dropped from objects, null in arrays.
func TestResultWithFunctions(t *testing.T) {
	srv := startScript(t, nodeJS)
	run(t, srv, []scenario{
		{name: "functions dropped", method: "POST", path: "/functions/withFunction", status: 200,
			has: []string{`{"result":{"list":[1,null],"name":"x","nested":{},"when":{"__type":"Date","iso":"1970-01-01T00:00:00.000Z"}}}`}},
		{name: "a function alone", method: "POST", path: "/functions/onlyFunction", status: 200},
	})
}

// TestFetch: fetch goes through the outbound policy Parse.Cloud.
// httpRequest uses; with private addresses allowed it reaches a local
// server and reads JSON, headers and statuses.
func TestFetch(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/echo" {
			http.NotFound(w, r)
			return
		}
		var b strings.Builder
		buf := make([]byte, 512)
		n, _ := r.Body.Read(buf)
		b.Write(buf[:n])
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"method":"` + r.Method + `","x":"` + r.URL.Query().Get("x") + `","got":` + b.String() + `}`))
	}))
	defer backend.Close()
	srv := startScriptWith(t, nodeJS, allowPrivateOutbound)
	run(t, srv, []scenario{
		{name: "fetch", method: "POST", path: "/functions/fetch", body: map[string]any{"url": backend.URL}, status: 200, has: []string{
			`"ok":true`, `"status":200`, `"type":"application/json"`, `"body":{"got":{"a":1},"method":"POST","x":"1"}`,
			`"missing":404`, `"missingOk":false`}},
	})
}
