  // Prelude part cloud.js: Parse.Cloud (define and the trigger kinds,
  // validators, run, httpRequest), logging, and the global Parse object.
  // The parts are joined in the order js.go lists them (core, objects,
  // query, cloud, invoke) into the body of the one function core.js opens
  // and invoke.js closes, so they share its scope.

  function logger(level) {
    return function () {
      native.log(level, [].map.call(arguments, function (a) {
        return typeof a === 'string' ? a : JSON.stringify(a);
      }).join(' '));
    };
  }
  var log = { info: logger('info'), warn: logger('warn'), error: logger('error'), debug: logger('debug') };

  function define(kind) {
    return function (name, handler, validator) {
      if (typeof name !== 'string') {
        name = name.className || (name.prototype && name.prototype.className) || String(name);
      }
      if (typeof handler !== 'function') {
        throw new TypeError('Parse.Cloud.' + kind + ': the handler must be a function');
      }
      if (typeof validator === 'function') {
        handler = validatedBy(validator, handler);
        validator = undefined;
      }
      native.define(kind, name, handler, validator === undefined ? null : validatorJSON(validator));
    };
  }

  // classless defines a trigger that names no class (it has a fixed one).
  function classless(kind, className) {
    var d = define(kind);
    return function (handler, validator) { d(className, handler, validator); };
  }

  // validatedBy runs a validator function before the handler: what it
  // throws (or rejects with) refuses the request with 142, or with the
  // code of a Parse.Error.
  function validatedBy(validate, handler) {
    function refuse(e) {
      if (e instanceof ParseError || (e && typeof e.code === 'number' && e.message !== undefined)) {
        throw e;
      }
      var msg = typeof e === 'string' ? e : (e && e.message) || 'Validation failed.';
      throw new ParseError(codes.VALIDATION_ERROR, msg);
    }
    return function (req) {
      var v;
      try {
        v = validate(req);
      } catch (e) {
        refuse(e);
      }
      if (v && typeof v.then === 'function') {
        return v.then(function () { return handler(req); }, refuse);
      }
      return handler(req);
    };
  }

  // validatorJSON turns a validator object (types given as constructors
  // such as String, or names) into JSON for the Go side.
  function validatorJSON(v) {
    var out = { requireUser: !!v.requireUser, requireMaster: !!v.requireMaster, skipWithMasterKey: !!v.skipWithMasterKey,
      validateMasterKey: !!v.validateMasterKey, fields: {},
      rateLimit: v.rateLimit || null };
    if (Array.isArray(v.fields)) {
      v.fields.forEach(function (k) { out.fields[k] = { required: true }; });
    } else if (v.fields) {
      Object.keys(v.fields).forEach(function (k) {
        var f = v.fields[k];
        if (typeof f === 'function') { f = { type: f }; }
        var t = typeof f.type === 'function' ? f.type.name : f.type;
        out.fields[k] = { type: t || '', required: !!f.required, default: f['default'], options: f.options };
      });
    }
    return JSON.stringify(out);
  }

  function run(name, params, options) {
    return new Promise(function (resolve) {
      resolve(decode(call('run', [name, JSON.stringify(encode(params || {})), opts(options)])));
    });
  }

  // httpRequest sends options.body as is when it is a string, its bytes
  // when it is a Buffer, ArrayBuffer or typed array, as JSON when it is an
  // object (form-encoded with that Content-Type); the promise resolves
  // with {status, headers, buffer, text, data} for a 2xx answer and
  // rejects with the same response otherwise.
  function httpRequest(options) {
    options = options || {};
    var headers = {};
    Object.keys(options.headers || {}).forEach(function (k) { headers[k] = String(options.headers[k]); });
    var body = options.body, raw;
    if (body instanceof ArrayBuffer || ArrayBuffer.isView(body)) {
      raw = bytes(body).toString('base64');
      body = undefined;
    } else if (body !== undefined && body !== null && typeof body !== 'string') {
      var type = '';
      Object.keys(headers).forEach(function (k) { if (k.toLowerCase() === 'content-type') { type = headers[k]; } });
      if (/x-www-form-urlencoded/.test(type)) {
        body = Object.keys(body).map(function (k) {
          return encodeURIComponent(k) + '=' + encodeURIComponent(body[k]);
        }).join('&');
      } else {
        body = JSON.stringify(body);
        if (!type) { headers['Content-Type'] = 'application/json'; }
      }
    }
    var params = {};
    Object.keys(options.params || {}).forEach(function (k) { params[k] = String(options.params[k]); });
    var sent = JSON.stringify({ url: options.url, method: options.method, headers: headers, params: params,
      body: body === undefined || body === null ? undefined : String(body), bodyBase64: raw, followRedirects: !!options.followRedirects });
    return native.httpRequest(sent).then(function (r) {
      var buffer = bytes(r.body);
      var res = { status: r.status, headers: copy(r.headers), buffer: buffer, text: buffer.toString('utf8') };
      try { res.data = JSON.parse(res.text); } catch (e) { res.data = undefined; }
      if (res.status < 200 || res.status >= 300) { throw res; }
      return res;
    }, function (e) { throw new ParseError(codes.CONNECTION_FAILED, String(e)); });
  }

  global.Parse = {
    Error: ParseError,
    Object: ParseObject,
    User: ParseUser,
    Session: ParseSession,
    File: ParseFile,
    ACL: ParseACL,
    Role: ParseRole,
    Relation: ParseRelation,
    Query: ParseQuery,
    Cloud: {
      define: define('function'),
      job: define('job'),
      beforeSave: define('beforeSave'),
      afterSave: define('afterSave'),
      beforeDelete: define('beforeDelete'),
      afterDelete: define('afterDelete'),
      beforeFind: define('beforeFind'),
      afterFind: define('afterFind'),
      beforeSaveFile: classless('beforeSaveFile', '@File'),
      afterSaveFile: classless('afterSaveFile', '@File'),
      beforeDeleteFile: classless('beforeDeleteFile', '@File'),
      afterDeleteFile: classless('afterDeleteFile', '@File'),
      beforeConnect: classless('beforeConnect', '@Connect'),
      beforeSubscribe: define('beforeSubscribe'),
      afterLiveQueryEvent: define('afterLiveQueryEvent'),
      beforeLogin: classless('beforeLogin', '_User'),
      afterLogin: classless('afterLogin', '_User'),
      afterLogout: classless('afterLogout', '_Session'),
      run: run,
      httpRequest: httpRequest
    },
    _encode: encode,
    _decode: decode
  };
