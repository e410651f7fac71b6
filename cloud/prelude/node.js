  // Prelude part node.js: Node's everyday modules and globals for cloud
  // code (crypto, path, querystring, events, util, process, TextEncoder,
  // TextDecoder, fetch), over the Go natives in jsnode.go. Buffer, URL and
  // URLSearchParams come from goja_nodejs. require() answers the modules
  // from global __quarryNode (jsnode.go registers them).
  // The parts are joined in the order js.go lists them into the body of
  // the one function core.js opens and invoke.js closes.

  var node = native.node;
  var NodeBuffer = global.Buffer;
  NodeBuffer.isBuffer = function (b) { return b instanceof NodeBuffer; };
  NodeBuffer.byteLength = function (s, enc) {
    if (typeof s !== 'string') { return s.byteLength; }
    return NodeBuffer.from(s, enc).length;
  };
  NodeBuffer.allocUnsafe = function (n) { return NodeBuffer.alloc(n); };
  NodeBuffer.isEncoding = function (e) {
    return ['utf8', 'utf-8', 'hex', 'base64', 'base64url', 'ascii', 'latin1', 'binary', 'ucs2', 'utf16le'].indexOf(String(e).toLowerCase()) >= 0;
  };
  function bytes(data, enc) {
    if (typeof data === 'string') { return NodeBuffer.from(data, enc || 'utf8'); }
    if (data instanceof ArrayBuffer) { return NodeBuffer.from(data); }
    if (ArrayBuffer.isView(data)) { return NodeBuffer.from(data.buffer, data.byteOffset, data.byteLength); }
    throw new TypeError('The "data" argument must be of type string or an instance of Buffer, TypedArray, or DataView.');
  }

  // crypto: hashes and HMACs gather their input and digest in Go.
  function Hash(alg, key) { this._alg = alg; this._key = key; this._chunks = []; this._done = false; }
  Hash.prototype.update = function (data, enc) {
    if (this._done) { throw new Error('Digest already called'); }
    this._chunks.push(bytes(data, enc));
    return this;
  };
  Hash.prototype.digest = function (enc) {
    if (this._done) { throw new Error('Digest already called'); }
    this._done = true;
    var out = node.digest(this._alg, this._key, this._chunks);
    return enc ? out.toString(enc) : out;
  };
  Hash.prototype.copy = function () { var h = new Hash(this._alg, this._key); h._chunks = this._chunks.slice(); return h; };
  function uuid() {
    var b = node.randomBytes(16);
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    var h = b.toString('hex');
    return h.slice(0, 8) + '-' + h.slice(8, 12) + '-' + h.slice(12, 16) + '-' + h.slice(16, 20) + '-' + h.slice(20);
  }
  var crypto = {
    createHash: function (alg) { node.digest(alg, undefined, []); return new Hash(alg); },
    createHmac: function (alg, key) { node.digest(alg, bytes(key), []); return new Hash(alg, bytes(key)); },
    randomBytes: function (n, cb) {
      var b = node.randomBytes(n);
      if (typeof cb === 'function') { setTimeout(function () { cb(null, b); }, 0); return undefined; }
      return b;
    },
    randomUUID: uuid,
    randomInt: function (min, max) {
      if (max === undefined) { max = min; min = 0; }
      var range = max - min, b = node.randomBytes(6), n = 0;
      for (var i = 0; i < 6; i++) { n = n * 256 + b[i]; }
      return min + (n % range);
    },
    getRandomValues: function (arr) {
      var b = node.randomBytes(arr.byteLength);
      new Uint8Array(arr.buffer, arr.byteOffset, arr.byteLength).set(b);
      return arr;
    },
    timingSafeEqual: function (a, b) { return node.timingSafeEqual(a, b); },
    getHashes: function () { return ['md5', 'sha1', 'sha224', 'sha256', 'sha384', 'sha512']; }
  };
  crypto.webcrypto = { getRandomValues: crypto.getRandomValues, randomUUID: uuid };

  // path: POSIX paths, as on the servers Parse runs on.
  function normalize(p) {
    var abs = p.charAt(0) === '/', trail = p.length > 1 && p.charAt(p.length - 1) === '/';
    var out = [];
    p.split('/').forEach(function (seg) {
      if (seg === '' || seg === '.') { return; }
      if (seg === '..') {
        if (out.length && out[out.length - 1] !== '..') { out.pop(); } else if (!abs) { out.push('..'); }
        return;
      }
      out.push(seg);
    });
    var s = (abs ? '/' : '') + out.join('/');
    if (!s) { return abs ? '/' : '.'; }
    return trail && s !== '/' ? s + '/' : s;
  }
  function basename(p, ext) {
    var b = p.replace(/\/+$/, '').split('/').pop() || '';
    if (ext && b.slice(-ext.length) === ext && b !== ext) { b = b.slice(0, -ext.length); }
    return b;
  }
  function extname(p) {
    var b = basename(p), i = b.lastIndexOf('.');
    return i <= 0 ? '' : b.slice(i);
  }
  function dirname(p) {
    var s = p.replace(/\/+$/, '');
    var i = s.lastIndexOf('/');
    if (i < 0) { return '.'; }
    return i === 0 ? '/' : s.slice(0, i);
  }
  var path = {
    sep: '/', delimiter: ':', normalize: normalize, basename: basename, extname: extname, dirname: dirname,
    isAbsolute: function (p) { return p.charAt(0) === '/'; },
    join: function () { var parts = [].slice.call(arguments).filter(function (x) { return x !== ''; }); return parts.length ? normalize(parts.join('/')) : '.'; },
    resolve: function () {
      var r = '';
      for (var i = arguments.length - 1; i >= 0 && r.charAt(0) !== '/'; i--) { if (arguments[i]) { r = arguments[i] + (r ? '/' + r : ''); } }
      return normalize(r.charAt(0) === '/' ? r : '/' + r).replace(/(.)\/$/, '$1');
    },
    relative: function (from, to) {
      var a = path.resolve(from).split('/').filter(Boolean), b = path.resolve(to).split('/').filter(Boolean);
      var i = 0;
      while (i < a.length && i < b.length && a[i] === b[i]) { i++; }
      return a.slice(i).map(function () { return '..'; }).concat(b.slice(i)).join('/');
    },
    parse: function (p) {
      var base = basename(p), ext = extname(p);
      return { root: p.charAt(0) === '/' ? '/' : '', dir: dirname(p), base: base, ext: ext, name: ext ? base.slice(0, -ext.length) : base };
    },
    format: function (o) { var dir = o.dir || o.root || ''; var base = o.base || ((o.name || '') + (o.ext || '')); return dir ? (dir === o.root ? dir + base : dir + '/' + base) : base; }
  };
  path.posix = path;

  // querystring.
  function qsEscape(s) { return encodeURIComponent(s); }
  function qsUnescape(s) { try { return decodeURIComponent(s); } catch (e) { return s; } }
  var querystring = {
    escape: qsEscape, unescape: qsUnescape,
    stringify: function (obj, sep, eq) {
      sep = sep || '&'; eq = eq || '=';
      return Object.keys(obj || {}).map(function (k) {
        var v = obj[k];
        var one = function (x) { return qsEscape(k) + eq + qsEscape(x === undefined || x === null ? '' : typeof x === 'object' ? '' : String(x)); };
        return Array.isArray(v) ? v.map(one).join(sep) : one(v);
      }).filter(Boolean).join(sep);
    },
    parse: function (str, sep, eq) {
      sep = sep || '&'; eq = eq || '=';
      var out = {};
      String(str || '').split(sep).forEach(function (part) {
        if (!part) { return; }
        var i = part.indexOf(eq);
        var k = qsUnescape((i < 0 ? part : part.slice(0, i)).replace(/\+/g, ' '));
        var v = i < 0 ? '' : qsUnescape(part.slice(i + eq.length).replace(/\+/g, ' '));
        if (Object.prototype.hasOwnProperty.call(out, k)) { out[k] = [].concat(out[k], v); } else { out[k] = v; }
      });
      return out;
    }
  };
  querystring.encode = querystring.stringify;
  querystring.decode = querystring.parse;

  // events: EventEmitter.
  function EventEmitter() { this._events = {}; }
  var E = EventEmitter.prototype;
  E._list = function (n) { if (!this._events) { this._events = {}; } return this._events[n] || (this._events[n] = []); };
  E.on = E.addListener = function (n, fn) { this._list(n).push(fn); return this; };
  E.prependListener = function (n, fn) { this._list(n).unshift(fn); return this; };
  E.once = function (n, fn) {
    var self = this;
    function once() { self.off(n, once); return fn.apply(this, arguments); }
    once.listener = fn;
    return this.on(n, once);
  };
  E.off = E.removeListener = function (n, fn) {
    var l = this._list(n);
    for (var i = l.length - 1; i >= 0; i--) { if (l[i] === fn || l[i].listener === fn) { l.splice(i, 1); break; } }
    return this;
  };
  E.removeAllListeners = function (n) { if (n === undefined) { this._events = {}; } else { delete this._list(n) && delete this._events[n]; } return this; };
  E.emit = function (n) {
    var args = [].slice.call(arguments, 1), l = this._list(n).slice();
    if (n === 'error' && !l.length) { throw args[0] instanceof Error ? args[0] : new Error('Unhandled error. (' + args[0] + ')'); }
    var self = this;
    l.forEach(function (fn) { fn.apply(self, args); });
    return l.length > 0;
  };
  E.listeners = function (n) { return this._list(n).map(function (f) { return f.listener || f; }); };
  E.listenerCount = function (n) { return this._list(n).length; };
  E.eventNames = function () { var ev = this._events || {}; return Object.keys(ev).filter(function (k) { return ev[k].length; }); };
  E.setMaxListeners = function () { return this; };
  EventEmitter.EventEmitter = EventEmitter;
  EventEmitter.defaultMaxListeners = 10;
  EventEmitter.once = function (em, n) { return new Promise(function (resolve) { em.once(n, function () { resolve([].slice.call(arguments)); }); }); };

  // TextEncoder and TextDecoder (UTF-8).
  function TextEncoder() {}
  TextEncoder.prototype.encoding = 'utf-8';
  TextEncoder.prototype.encode = function (s) { var b = NodeBuffer.from(String(s === undefined ? '' : s), 'utf8'); return new Uint8Array(b.buffer, b.byteOffset, b.length).slice(); };
  function TextDecoder(enc) {
    enc = String(enc || 'utf-8').toLowerCase();
    if (enc !== 'utf-8' && enc !== 'utf8') { throw new RangeError('The "' + enc + '" encoding is not supported'); }
    this.encoding = 'utf-8';
  }
  TextDecoder.prototype.decode = function (b) { return b === undefined ? '' : bytes(b).toString('utf8'); };

  // util.
  function inspect(v) {
    if (typeof v === 'string') { return "'" + v + "'"; }
    if (typeof v === 'function') { return '[Function: ' + (v.name || 'anonymous') + ']'; }
    if (v instanceof Error) { return v.stack || String(v); }
    try { return JSON.stringify(v) || String(v); } catch (e) { return String(v); }
  }
  var util = {
    format: node.format,
    inspect: inspect,
    promisify: function (fn) {
      return function () {
        var args = [].slice.call(arguments), self = this;
        return new Promise(function (resolve, reject) {
          fn.apply(self, args.concat(function (err, v) { if (err) { reject(err); } else { resolve(v); } }));
        });
      };
    },
    callbackify: function (fn) {
      return function () {
        var args = [].slice.call(arguments), cb = args.pop();
        fn.apply(this, args).then(function (v) { cb(null, v); }, function (e) { cb(e); });
      };
    },
    inherits: function (ctor, sup) { Object.setPrototypeOf(ctor.prototype, sup.prototype); ctor.super_ = sup; },
    deprecate: function (fn) { return fn; },
    isDeepStrictEqual: function (a, b) { return JSON.stringify(sortedKeys(a)) === JSON.stringify(sortedKeys(b)); },
    types: { isDate: function (v) { return v instanceof Date; }, isRegExp: function (v) { return v instanceof RegExp; },
      isPromise: function (v) { return v instanceof Promise; } },
    TextEncoder: TextEncoder, TextDecoder: TextDecoder
  };

  // process: env holds only what the operator allows (cloudCodeEnv).
  var started = Date.now();
  var nodeProcess = new EventEmitter();
  nodeProcess.env = node.env;
  nodeProcess.version = 'v20.0.0';
  nodeProcess.versions = { node: '20.0.0' };
  nodeProcess.platform = 'linux';
  nodeProcess.argv = [];
  nodeProcess.cwd = function () { return '/'; };
  nodeProcess.uptime = function () { return (Date.now() - started) / 1000; };
  nodeProcess.nextTick = function (fn) { var args = [].slice.call(arguments, 1); Promise.resolve().then(function () { fn.apply(null, args); }); };
  nodeProcess.hrtime = function (prev) {
    var ms = Date.now(), s = Math.floor(ms / 1000), ns = (ms % 1000) * 1e6;
    if (prev) { s -= prev[0]; ns -= prev[1]; if (ns < 0) { s--; ns += 1e9; } }
    return [s, ns];
  };
  nodeProcess.hrtime.bigint = function () { return BigInt(Date.now()) * 1000000n; };
  nodeProcess.memoryUsage = function () { return { rss: 0, heapTotal: 0, heapUsed: 0, external: 0 }; };
  nodeProcess.exit = function () { throw new Error('process.exit is not available in cloud code'); };

  // fetch: Parse.Cloud.httpRequest's outbound policy, with fetch's
  // Response (no streaming: the body is read whole).
  function Headers(init) {
    var m = this._m = {};
    if (init instanceof Headers) { init.forEach(function (v, k) { m[k] = v; }); } else if (Array.isArray(init)) {
      init.forEach(function (kv) { m[String(kv[0]).toLowerCase()] = String(kv[1]); });
    } else if (init) { Object.keys(init).forEach(function (k) { m[k.toLowerCase()] = String(init[k]); }); }
  }
  Headers.prototype.get = function (k) { var v = this._m[String(k).toLowerCase()]; return v === undefined ? null : v; };
  Headers.prototype.has = function (k) { return this._m[String(k).toLowerCase()] !== undefined; };
  Headers.prototype.set = function (k, v) { this._m[String(k).toLowerCase()] = String(v); };
  Headers.prototype.append = function (k, v) { var c = this.get(k); this.set(k, c === null ? v : c + ', ' + v); };
  Headers.prototype.delete = function (k) { delete this._m[String(k).toLowerCase()]; };
  Headers.prototype.forEach = function (fn) { var m = this._m; Object.keys(m).forEach(function (k) { fn(m[k], k); }); };
  Headers.prototype.entries = function () { var m = this._m; return Object.keys(m).map(function (k) { return [k, m[k]]; })[Symbol.iterator](); };
  Headers.prototype[Symbol.iterator] = Headers.prototype.entries;
  // A Response holds the body's bytes (an ArrayBuffer, a string, a
  // Buffer or typed array when made by hand); text() decodes them as UTF-8.
  function Response(body, init) {
    init = init || {};
    this._bytes = body === undefined || body === null ? NodeBuffer.alloc(0) : bytes(body);
    this.status = init.status === undefined ? 200 : init.status;
    this.statusText = init.statusText || '';
    this.ok = this.status >= 200 && this.status < 300;
    this.headers = new Headers(init.headers);
    this.url = init.url || '';
    this.redirected = false;
    this.bodyUsed = false;
  }
  Response.prototype._take = function () { this.bodyUsed = true; return this._bytes; };
  Response.prototype.text = function () { return Promise.resolve(this._take().toString('utf8')); };
  Response.prototype.json = function () { var b = this._take(); return new Promise(function (r) { r(JSON.parse(b.toString('utf8'))); }); };
  Response.prototype.arrayBuffer = function () {
    var b = this._take();
    return Promise.resolve(b.buffer.slice(b.byteOffset, b.byteOffset + b.length));
  };
  Response.prototype.bytes = function () { var b = this._take(); return Promise.resolve(new Uint8Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.length))); };
  Response.prototype.clone = function () { return new Response(this._bytes, { status: this.status, statusText: this.statusText, headers: this.headers._m, url: this.url }); };
  function fetch(input, init) {
    init = init || {};
    var target = typeof input === 'string' ? input : input instanceof URL ? input.toString() : input.url;
    var headers = {};
    new Headers(init.headers).forEach(function (v, k) { headers[k] = v; });
    var body = init.body, raw;
    if (body instanceof URLSearchParams) {
      body = body.toString();
      if (!headers['content-type']) { headers['content-type'] = 'application/x-www-form-urlencoded;charset=UTF-8'; }
    } else if (body !== undefined && body !== null && typeof body !== 'string') {
      raw = bytes(body).toString('base64'); // byte for byte
      body = undefined;
    }
    var sent = JSON.stringify({ url: String(target), method: (init.method || 'GET').toUpperCase(), headers: headers, params: {},
      body: body === undefined || body === null ? undefined : body, bodyBase64: raw, followRedirects: init.redirect !== 'manual' });
    return native.httpRequest(sent).then(function (r) {
      return new Response(r.body, { status: r.status, headers: r.headers, url: String(target) });
    }, function (e) { throw new TypeError('fetch failed: ' + String(e)); });
  }

  global.process = nodeProcess;
  global.TextEncoder = TextEncoder;
  global.TextDecoder = TextDecoder;
  global.fetch = fetch;
  global.Headers = Headers;
  global.Response = Response;
  global.queueMicrotask = function (fn) { Promise.resolve().then(fn); };
  if (typeof global.structuredClone !== 'function') {
    global.structuredClone = function (v) { return v === undefined ? undefined : JSON.parse(JSON.stringify(v)); };
  }
  // url: goja_nodejs gives URL and URLSearchParams; ES modules turn
  // import.meta.url into a path with fileURLToPath, and older apps call
  // the legacy parse, format and resolve.
  var NODE_BUILTINS = ['buffer', 'crypto', 'events', 'module', 'path', 'process', 'querystring', 'string_decoder', 'timers', 'url', 'util'];
  var RELATIVE_BASE = 'http://relative.invalid/'; // parses paths without a scheme
  var urlModule = global.require('url');
  urlModule.fileURLToPath = function (u) {
    var parsed = typeof u === 'string' ? new URL(u) : u;
    if (!parsed || parsed.protocol !== 'file:') { throw new TypeError('The URL must be of scheme file'); }
    return decodeURIComponent(parsed.pathname);
  };
  urlModule.pathToFileURL = function (p) {
    var u = new URL('file:///');
    u.pathname = path.resolve(String(p));
    return u;
  };
  urlModule.parse = function (text, parseQuery) {
    text = String(text);
    var absolute = /^[a-z][a-z0-9+.-]*:/i.test(text);
    var u = new URL(text, absolute ? undefined : RELATIVE_BASE);
    var out = {
      protocol: absolute ? u.protocol : null, slashes: absolute && /^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? true : null,
      auth: u.username ? decodeURIComponent(u.username) + (u.password ? ':' + decodeURIComponent(u.password) : '') : null,
      host: absolute && u.host ? u.host : null, port: absolute && u.port ? u.port : null, hostname: absolute && u.hostname ? u.hostname : null,
      hash: u.hash || null, search: u.search || null, pathname: u.pathname || null
    };
    out.query = parseQuery ? querystring.parse(u.search.slice(1)) : (u.search ? u.search.slice(1) : null);
    if (parseQuery && !u.search) { out.search = ''; }
    out.path = (out.pathname || '') + (u.search || '');
    out.href = absolute ? u.href : out.path + (u.hash || '');
    return out;
  };
  urlModule.format = function (u) {
    if (typeof u === 'string') { return u; }
    if (u instanceof URL) { return u.href; }
    var host = u.host || ((u.hostname || '') + (u.port ? ':' + u.port : ''));
    var search = u.search || (u.query && typeof u.query === 'object' && Object.keys(u.query).length ? '?' + querystring.stringify(u.query) : '');
    var proto = u.protocol ? (u.protocol.slice(-1) === ':' ? u.protocol : u.protocol + ':') : '';
    return proto + (host || u.slashes ? '//' : '') + (u.auth ? u.auth + '@' : '') + host + (u.pathname || '') + search + (u.hash || '');
  };
  urlModule.resolve = function (from, to) {
    from = String(from); to = String(to);
    if (/^[a-z][a-z0-9+.-]*:/i.test(to)) { return new URL(to).href; }
    var base = /^[a-z][a-z0-9+.-]*:/i.test(from) ? new URL(from) : null;
    if (to.slice(0, 2) === '//') { return base ? base.protocol + to : to; }
    var fromPath = base ? base.pathname : from.split(/[?#]/)[0];
    var target = to.charAt(0) === '/' ? to : path.resolve(fromPath.slice(0, fromPath.lastIndexOf('/') + 1) || '/', to) + (/\/$/.test(to) ? '/' : '');
    return base ? base.origin + target : target;
  };
  // console loaded goja_nodejs's util already (cached by require):
  // complete that one object, so that every require('util') agrees.
  var loadedUtil = global.require('util');
  Object.keys(util).forEach(function (k) { loadedUtil[k] = util[k]; });
  util = loadedUtil;
  global.__quarryNode = {
    crypto: crypto, path: path, querystring: querystring, events: EventEmitter, util: util, process: nodeProcess,
    stringdecoder: { StringDecoder: function (enc) { this.write = function (b) { return bytes(b).toString(enc || 'utf8'); }; this.end = function (b) { return b ? this.write(b) : ''; }; } },
    // module: ES modules get a require with createRequire(import.meta.url);
    // the require given resolves from the file that calls it, which is
    // that file in this idiom.
    module: { createRequire: function () { return global.require; }, builtinModules: NODE_BUILTINS.slice() },
    timers: { setTimeout: global.setTimeout, clearTimeout: global.clearTimeout, setInterval: global.setInterval,
      clearInterval: global.clearInterval, setImmediate: global.setImmediate, clearImmediate: global.clearImmediate }
  };
