  // Prelude part invoke.js: __quarryInvoke: a Go request made into the handler's
  // request object, and its answer made back into Go values.
  // The parts are joined in the order js.go lists them (core, objects,
  // query, cloud, invoke) into the body of the one function core.js opens
  // and invoke.js closes, so they share its scope.

  // errorJSON is what the client gets (code and message) and, for the
  // server log only, the error's stack.
  function errorJSON(e) {
    var stack = e && typeof e.stack === 'string' ? e.stack : undefined;
    if (e instanceof ParseError || (e && typeof e.code === 'number' && e.message !== undefined)) {
      return { code: e.code, message: String(e.message), stack: stack };
    }
    if (e instanceof Error) {
      return { code: 141, message: e.message, stack: stack };
    }
    if (typeof e === 'string') {
      return { code: 141, message: e };
    }
    return { code: 141, message: JSON.stringify(e) };
  }

  function objectFrom(json, className) {
    if (!json) { return undefined; }
    var o = ParseObject._create(className || json.className);
    o._setServerData(json);
    return o;
  }

  // Request is the object a handler receives. Each field is built from the
  // Go request on its first read and then kept as the request's own
  // property (so it may be changed or replaced): most handlers read one or
  // two fields, a no-op handler none, and nothing is built for them.
  function Request(r) {
    this._r = r; // r.triggerName is the kind, r.message a job's callback
  }
  Request.prototype._has = Object.prototype.hasOwnProperty;
  var fileKinds = { beforeSaveFile: true, afterSaveFile: true, beforeDeleteFile: true, afterDeleteFile: true };
  function hasObject(kind) { return kind !== 'beforeConnect' && !fileKinds[kind]; }
  var SENT = { set: true };
  var fields = {
    params: function (r) { return r.params ? decode(r.params) : {}; },
    master: function (r) { return !!r.master; },
    installationId: function (r) { return r.installationId; },
    headers: function (r) { return r.headers || {}; },
    ip: function (r) { return r.ip; },
    // The Go map itself: what a before trigger adds reaches the after one.
    context: function (r) { return r.context || {}; },
    log: function () { return log; },
    functionName: function (r) { return r.functionName; },
    triggerName: function (r, kind) { return kind; },
    jobId: function (r) { return r.jobId; },
    event: function (r) { return r.event; },
    sendEvent: function () { return true; },
    user: function (r) {
      if (!r.user) { return undefined; }
      var u = objectFrom(r.user);
      u._sessionToken = r.sessionToken;
      return u;
    },
    useMasterKey: function (r, kind) { return kind === 'beforeConnect' ? !!r.master : undefined; },
    sessionToken: function (r, kind) { return kind === 'beforeConnect' ? r.sessionToken : undefined; },
    clients: function (r, kind) { return kind === 'beforeConnect' ? r.object.clients : undefined; },
    subscriptions: function (r, kind) { return kind === 'beforeConnect' ? r.object.subscriptions : undefined; },
    file: function (r, kind) { return fileKinds[kind] ? ParseFile._from(r.object) : undefined; },
    fileSize: function (r, kind) { return fileKinds[kind] ? r.object.size : undefined; },
    contentLength: function (r, kind) { return fileKinds[kind] ? r.object.size : undefined; },
    object: function (r, kind) {
      if (!r.object || !hasObject(kind)) { return undefined; }
      var o = objectFrom(r.object, r.className);
      // The fields the client sent count as dirty. One shared mark: a
      // later set() replaces it, increment() only sets .set, which it is.
      o._existed = !!r.original;
      var marked = r.original ? Object.keys(r.dirty || {}) : Object.keys(o._data);
      for (var i = 0; i < marked.length; i++) { o._ops[marked[i]] = SENT; }
      return o;
    },
    original: function (r, kind) { return r.original && hasObject(kind) ? objectFrom(r.original, r.className) : undefined; },
    query: function (r) { return r.query ? new ParseQuery(r.className)._fromJSON(r.query) : undefined; },
    isGet: function (r) { return r.query || r.results ? !!r.isGet : undefined; },
    objects: function (r) { return r.results ? r.results.map(function (o) { return objectFrom(o); }) : undefined; },
    message: function (r, kind) {
      var message = r.message;
      return kind === 'job' ? function (m) { message(String(m)); } : undefined;
    }
  };
  function setOwn(o, name, v) {
    Object.defineProperty(o, name, { value: v, writable: true, enumerable: true, configurable: true });
  }
  Object.keys(fields).forEach(function (name) {
    var build = fields[name];
    Object.defineProperty(Request.prototype, name, {
      configurable: true,
      get: function () {
        var r = this._r;
        var v = build.call(this, r, r.triggerName);
        setOwn(this, name, v);
        return v;
      },
      set: function (v) { setOwn(this, name, v); }
    });
  });
  // built is a field the handler read or set (undefined otherwise).
  function built(req, name) { return req._has(name) ? req[name] : undefined; }

  // outcome turns what a handler returned into the Go side's answer; an
  // object, query or list the handler never read goes back as it came,
  // and undefined (nothing to export) says the handler changed nothing.
  function outcome(kind, req, value) {
    var o;
    switch (kind) {
      case 'beforeSave':
        o = built(req, 'object');
        return o && o._touched ? { object: o.toJSON() } : undefined;
      case 'beforeSaveFile':
        var f = value instanceof ParseFile ? value : built(req, 'file');
        return f ? { object: { name: f._name, metadata: f._metadata, tags: f._tags } } : undefined;
      case 'afterLiveQueryEvent':
        o = built(req, 'object');
        var out = { sendEvent: built(req, 'sendEvent') !== false };
        if (req._has('object')) { out.object = o ? o.toJSON() : null; }
        return out;
      case 'beforeFind':
      case 'beforeSubscribe':
        if (value instanceof ParseQuery) { return { query: value.toJSON() }; }
        var q = built(req, 'query');
        return q && q._touched ? { query: q.toJSON() } : undefined;
      case 'afterFind':
        var list = Array.isArray(value) ? value : built(req, 'objects');
        return list ? { results: list.map(function (x) { return x.toJSON(); }) } : undefined;
      default:
        return value === undefined ? undefined : { result: encodeResult(value) };
    }
  }

  // __quarryInvoke runs a handler with the Go request r (Go values, read
  // only: the Request copies what the handler may change) and gives done
  // the answer as a plain object. A handler that returns no promise is
  // answered at once, without a promise job.
  global.__quarryInvoke = function (kind, handler, r, done) {
    var req, value;
    try {
      req = new Request(r);
      value = handler(req);
      if (value && typeof value.then === 'function') {
        settleLater(kind, req, value, done);
        return;
      }
      var out = outcome(kind, req, value);
      done(out);
    } catch (e) {
      done({ error: errorJSON(e) });
    }
  };

  // settleLater answers when a handler's promise settles (the closures
  // are made only for handlers that return one).
  function settleLater(kind, req, promise, done) {
    promise.then(function (v) {
      try {
        var out = outcome(kind, req, v);
        done(out);
      } catch (e) {
        done({ error: errorJSON(e) });
      }
    }, function (e) { done({ error: errorJSON(e) }); });
  }
})(this);
