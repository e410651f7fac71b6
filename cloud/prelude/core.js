// Quarry's cloud code prelude: the global Parse object every cloud code
// runtime starts with. It is a small in-process SDK: Parse.Object and
// Parse.Query call the service through the __quarry natives (never HTTP),
// and __quarryInvoke turns a Go request into the request object a handler
// receives. Written for Quarry; the names follow Parse's public SDK.
//
// The prelude is one function cut by concern into parts that js.go joins
// in order: core.js (this one: timers, natives, Parse.Error, encoding),
// objects.js, query.js, cloud.js and invoke.js, which closes the function.
(function (global) {
  'use strict';
  var native = global.__quarry;

  // Array.prototype.fill runs as one call into the engine, which the
  // watchdog cannot interrupt: new Array(1e8).fill(x) ran for minutes past
  // cloudCodeTimeout. A long fill goes in slices, between which it can.
  var nativeFill = Array.prototype.fill;
  var FILL_SLICE = 65536;
  function fillIndex(v, len, dflt) {
    if (v === undefined) { return dflt; }
    var n = Math.trunc(Number(v)) || 0;
    return n < 0 ? Math.max(len + n, 0) : Math.min(n, len);
  }
  Object.defineProperty(Array.prototype, 'fill', {
    writable: true, configurable: true, enumerable: false,
    value: function fill(value) {
      var start = arguments[1], end = arguments[2];
      var len = Math.min(Math.max(Math.trunc(Number(this.length)) || 0, 0), Number.MAX_SAFE_INTEGER);
      if (len <= FILL_SLICE) { return nativeFill.call(this, value, start, end); }
      var from = fillIndex(start, len, 0), to = fillIndex(end, len, len);
      for (var i = from; i < to; i += FILL_SLICE) {
        nativeFill.call(this, value, i, Math.min(i + FILL_SLICE, to));
      }
      return this;
    }
  });

  // Timers are counted (in Go, through native.timers) so that Go knows
  // whether a runtime still has work after its handler answered: the
  // runtime's loop turns only when asked.
  var timers = new Set();
  function track(h) { timers.add(h); native.timers(1); }
  function untrack(h) {
    if (timers.delete(h)) { native.timers(-1); }
  }
  ['Timeout', 'Immediate'].forEach(function (name) {
    var set = global['set' + name];
    var clear = global['clear' + name];
    global['set' + name] = function (fn) {
      var args = Array.prototype.slice.call(arguments);
      if (typeof fn !== 'function') { return set.apply(null, args); }
      var handle;
      args[0] = function () { untrack(handle); return fn.apply(this, arguments); };
      handle = set.apply(null, args);
      track(handle);
      return handle;
    };
    global['clear' + name] = function (h) { untrack(h); return clear(h); };
  });
  var setIntervalRaw = global.setInterval;
  var clearIntervalRaw = global.clearInterval;
  global.setInterval = function (fn) {
    var h = setIntervalRaw.apply(null, arguments);
    if (typeof fn === 'function') { track(h); }
    return h;
  };
  global.clearInterval = function (h) { untrack(h); return clearIntervalRaw(h); };

  // call runs a native that answers a JSON string: {ok: value} or
  // {error: {code, message}}.
  function call(name, args) {
    var out = JSON.parse(native[name].apply(null, args));
    if (out.error) {
      throw new ParseError(out.error.code, out.error.message);
    }
    return out.ok;
  }

  function ParseError(code, message) {
    this.code = code;
    this.message = message;
    // The stack is for the server log: where the handler failed.
    this.stack = 'ParseError: ' + message + new Error().stack.replace(/^Error[^\n]*/, '');
  }
  ParseError.prototype = Object.create(Error.prototype);
  ParseError.prototype.constructor = ParseError;
  ParseError.prototype.name = 'ParseError';
  ParseError.prototype.toString = function () {
    return 'ParseError: ' + this.code + ' ' + this.message;
  };
  var codes = {
    OTHER_CAUSE: -1, INTERNAL_SERVER_ERROR: 1, CONNECTION_FAILED: 100, OBJECT_NOT_FOUND: 101,
    INVALID_QUERY: 102, INVALID_CLASS_NAME: 103, MISSING_OBJECT_ID: 104, INVALID_KEY_NAME: 105,
    INVALID_POINTER: 106, INVALID_JSON: 107, COMMAND_UNAVAILABLE: 108, NOT_INITIALIZED: 109,
    INCORRECT_TYPE: 111, INVALID_CHANNEL_NAME: 112, PUSH_MISCONFIGURED: 115, OBJECT_TOO_LARGE: 116,
    OPERATION_FORBIDDEN: 119, CACHE_MISS: 120, INVALID_NESTED_KEY: 121, INVALID_FILE_NAME: 122,
    INVALID_ACL: 123, TIMEOUT: 124, INVALID_EMAIL_ADDRESS: 125, DUPLICATE_VALUE: 137,
    INVALID_ROLE_NAME: 139, EXCEEDED_QUOTA: 140, SCRIPT_FAILED: 141, VALIDATION_ERROR: 142,
    USERNAME_MISSING: 200, PASSWORD_MISSING: 201, USERNAME_TAKEN: 202, EMAIL_TAKEN: 203,
    EMAIL_MISSING: 204, EMAIL_NOT_FOUND: 205, SESSION_MISSING: 206, MUST_CREATE_USER_THROUGH_SIGNUP: 207,
    ACCOUNT_ALREADY_LINKED: 208, INVALID_SESSION_TOKEN: 209,
    MISSING_CONTENT_TYPE: 126, MISSING_CONTENT_LENGTH: 127, INVALID_CONTENT_LENGTH: 128, FILE_TOO_LARGE: 129,
    FILE_SAVE_ERROR: 130, INVALID_INSTALLATION_ID: 132, MISSING_REQUIRED_FIELD_ERROR: 135, INVALID_IMAGE_DATA: 143,
    UNSAVED_FILE_ERROR: 151, INVALID_PUSH_TIME_ERROR: 152, FILE_DELETE_ERROR: 153, REQUEST_LIMIT_EXCEEDED: 155,
    DUPLICATE_REQUEST: 159, INVALID_EVENT_NAME: 160, FILE_DELETE_UNNAMED_ERROR: 161, INVALID_VALUE: 162,
    MFA_ERROR: 210, MFA_TOKEN_REQUIRED: 211, LINKED_ID_MISSING: 250, INVALID_LINKED_SESSION: 251,
    UNSUPPORTED_SERVICE: 252, INVALID_SCHEMA_OPERATION: 255, AGGREGATE_ERROR: 600, FILE_READ_ERROR: 601,
    X_DOMAIN_REQUEST: 602
  };
  Object.keys(codes).forEach(function (k) { ParseError[k] = codes[k]; });

  // Values travel as Parse's JSON encoding; decode gives Dates and
  // Parse.Objects, encode turns them back.
  function decode(v) {
    if (Array.isArray(v)) {
      return v.map(decode);
    }
    if (v && typeof v === 'object') {
      if (v.__type === 'Date') {
        return new Date(v.iso);
      }
      if (v.__type === 'Pointer' || v.__type === 'Object') {
        var o = ParseObject._create(v.className);
        o._setServerData(v);
        return o;
      }
      if (v.__type === 'GeoPoint') {
        return new ParseGeoPoint(v.latitude, v.longitude);
      }
      if (v.__type === 'Polygon') {
        return new ParsePolygon(v.coordinates);
      }
      if (v.__type === 'File') {
        return ParseFile._from(v);
      }
      if (v.__type) {
        return v;
      }
      var out = {};
      var keys = Object.keys(v);
      for (var i = 0; i < keys.length; i++) { out[keys[i]] = decode(v[keys[i]]); }
      return out;
    }
    return v;
  }

  // copy is a deep copy of plain values (a Go request's, which scripts
  // must not change in place).
  function copy(v) {
    if (Array.isArray(v)) {
      return v.map(copy);
    }
    if (v && typeof v === 'object') {
      var out = {};
      Object.keys(v).forEach(function (k) { out[k] = copy(v[k]); });
      return out;
    }
    return v;
  }

  function encode(v) {
    if (v === null || typeof v !== 'object') { return v; }
    if (v instanceof ParseACL) {
      return v.toJSON();
    }
    if (v instanceof Date) {
      return { __type: 'Date', iso: v.toISOString() };
    }
    if (v instanceof ParseObject) {
      return v.toPointer();
    }
    if (v instanceof ParseQuery) {
      return v.toJSON();
    }
    if (v instanceof ParseGeoPoint || v instanceof ParsePolygon || v instanceof ParseFile || v instanceof ParseRelation) {
      return v.toJSON();
    }
    if (v && typeof v.opName === 'string' && typeof v.toJSON === 'function') {
      return v.toJSON();
    }
    if (Array.isArray(v)) {
      return v.map(encode);
    }
    if (v && typeof v === 'object') {
      var out = {};
      Object.keys(v).forEach(function (k) { out[k] = encode(v[k]); });
      return out;
    }
    return v;
  }

  // encodeResult is encode, except that objects travel whole (a function
  // returning a Parse.Object answers the object, as Parse does).
  // What JSON cannot hold goes as JSON.stringify leaves it (Parse sends
  // the answer through it): functions and symbols are dropped from
  // objects, null in arrays; objects with their own toJSON (Buffer, URL,
  // Map-like classes) give what it returns.
  function encodeResult(v) {
    if (v === null || typeof v !== 'object') { // the common answer: no instanceof walks
      return typeof v === 'function' || typeof v === 'symbol' ? undefined : v;
    }
    if (v instanceof ParseObject) {
      var out = v.toJSON();
      out.__type = 'Object';
      out.className = v.className;
      return out;
    }
    if (Array.isArray(v)) {
      return v.map(function (e) { e = encodeResult(e); return e === undefined ? null : e; });
    }
    if (v && typeof v === 'object' && !(v instanceof Date) && !(v instanceof ParseQuery) && !(v instanceof ParseGeoPoint) &&
      !(v instanceof ParsePolygon) && !(v instanceof ParseFile) && !(v instanceof ParseACL) && !(v instanceof ParseRelation)) {
      if (typeof v.toJSON === 'function') { return encodeResult(v.toJSON()); }
      var o = {};
      Object.keys(v).forEach(function (k) {
        var e = encodeResult(v[k]);
        if (e !== undefined) { o[k] = e; }
      });
      return o;
    }
    return encode(v);
  }

  function opts(options) {
    options = options || {};
    var o = {};
    if (options.useMasterKey) { o.useMasterKey = true; }
    if (options.sessionToken) { o.sessionToken = options.sessionToken; }
    if (options.context) { o.context = options.context; }
    return JSON.stringify(o);
  }
