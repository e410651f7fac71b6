// Quarry's cloud code prelude: the global Parse object every cloud code
// runtime starts with. It is a small in-process SDK: Parse.Object and
// Parse.Query call the service through the __quarry natives (never HTTP),
// and __quarryInvoke turns a Go request into the request object a handler
// receives. Written for Quarry; the names follow Parse's public SDK.
(function (global) {
  'use strict';
  var native = global.__quarry;

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
    ACCOUNT_ALREADY_LINKED: 208, INVALID_SESSION_TOKEN: 209
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
  function encodeResult(v) {
    if (v === null || typeof v !== 'object') { return v; } // the common answer: no instanceof walks
    if (v instanceof ParseObject) {
      var out = v.toJSON();
      out.__type = 'Object';
      out.className = v.className;
      return out;
    }
    if (Array.isArray(v)) {
      return v.map(encodeResult);
    }
    if (v && typeof v === 'object' && !(v instanceof Date) && !(v instanceof ParseQuery)) {
      var o = {};
      Object.keys(v).forEach(function (k) { o[k] = encodeResult(v[k]); });
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

  var registry = {};

  function ParseObject(className, attrs) {
    if (!(this instanceof ParseObject)) {
      return new ParseObject(className, attrs);
    }
    this.className = className;
    this.id = undefined;
    this._data = {};
    this._ops = {};
    if (attrs && typeof attrs === 'object') {
      this.set(attrs);
    }
  }
  ParseObject._create = function (className) {
    var Ctor = registry[className];
    if (Ctor) {
      var o = Object.create(Ctor.prototype);
      ParseObject.call(o, className);
      return o;
    }
    return new ParseObject(className);
  };
  ParseObject.extend = function (className, protoProps) {
    if (registry[className]) {
      return registry[className];
    }
    var Sub = function (attrs) {
      if (!(this instanceof Sub)) { return new Sub(attrs); }
      ParseObject.call(this, className, attrs);
    };
    Sub.prototype = Object.create(ParseObject.prototype);
    Sub.prototype.constructor = Sub;
    Object.keys(protoProps || {}).forEach(function (k) { Sub.prototype[k] = protoProps[k]; });
    Sub.className = className;
    Sub.extend = ParseObject.extend;
    Sub.createWithoutData = function (id) { var o = new Sub(); o.id = id; return o; };
    registry[className] = Sub;
    return Sub;
  };
  ParseObject.createWithoutData = function (className, id) {
    var o = ParseObject._create(className);
    o.id = id;
    return o;
  };
  ParseObject.registerSubclass = function (className, Ctor) { registry[className] = Ctor; };
  ParseObject.saveAll = function (list, options) {
    return list.reduce(function (p, o) { return p.then(function () { return o.save(null, options); }); }, Promise.resolve())
      .then(function () { return list; });
  };
  ParseObject.destroyAll = function (list, options) {
    return Promise.all(list.map(function (o) { return o.destroy(options); })).then(function () { return list; });
  };

  var P = ParseObject.prototype;
  P._setServerData = function (json) {
    var keys = Object.keys(json);
    for (var i = 0; i < keys.length; i++) {
      var k = keys[i];
      if (k === 'objectId') {
        this.id = json[k];
      } else if (k === 'createdAt' || k === 'updatedAt') {
        this['_' + k] = typeof json[k] === 'string' ? new Date(json[k]) : decode(json[k]);
      } else if (k !== '__type' && k !== 'className') {
        this._data[k] = decode(json[k]);
      }
    }
    this._ops = {};
  };
  P.get = function (k) {
    if (k === 'objectId') { return this.id; }
    if (k === 'createdAt' || k === 'updatedAt') { return this['_' + k]; }
    return this._data[k];
  };
  P.has = function (k) { return this._data[k] !== undefined && this._data[k] !== null; };
  P.set = function (k, v) {
    var self = this;
    if (k && typeof k === 'object') {
      Object.keys(k).forEach(function (key) { self.set(key, k[key]); });
      return this;
    }
    if (k === 'objectId') { this.id = v; return this; }
    this._data[k] = v;
    this._ops[k] = { set: true };
    this._touched = true;
    return this;
  };
  P.unset = function (k) {
    this._touched = true;
    delete this._data[k];
    this._ops[k] = { unset: true };
    return this;
  };
  P.increment = function (k, amount) {
    if (amount === undefined) { amount = 1; }
    this._touched = true;
    var prev = this._ops[k];
    this._data[k] = (this._data[k] || 0) + amount;
    if (prev && prev.increment !== undefined) {
      prev.increment += amount;
    } else if (prev) {
      prev.set = true;
    } else {
      this._ops[k] = { increment: amount };
    }
    return this;
  };
  P.decrement = function (k, amount) { return this.increment(k, -(amount === undefined ? 1 : amount)); };
  P.add = function (k, v) {
    var arr = (this._data[k] || []).slice();
    arr.push(v);
    return this.set(k, arr);
  };
  P.isNew = function () { return !this.id; };
  P.dirty = function (k) {
    if (k === undefined) { return this.isNew() || Object.keys(this._ops).length > 0; }
    return !!this._ops[k];
  };
  P.dirtyKeys = function () { return Object.keys(this._ops); };
  Object.defineProperty(P, 'createdAt', { get: function () { return this._createdAt; } });
  Object.defineProperty(P, 'updatedAt', { get: function () { return this._updatedAt; } });
  Object.defineProperty(P, 'attributes', { get: function () { return this._data; } });
  P.toPointer = function () { return { __type: 'Pointer', className: this.className, objectId: this.id }; };
  P.toJSON = function () {
    var out = encode(this._data);
    if (this.id) { out.objectId = this.id; }
    if (this._createdAt) { out.createdAt = this._createdAt.toISOString(); }
    if (this._updatedAt) { out.updatedAt = this._updatedAt.toISOString(); }
    return out;
  };
  P._body = function () {
    var self = this;
    var body = {};
    Object.keys(this._ops).forEach(function (k) {
      var op = self._ops[k];
      if (op.raw) {
        body[k] = op.raw;
      } else if (op.unset) {
        body[k] = { __op: 'Delete' };
      } else if (op.increment !== undefined && !op.set) {
        body[k] = { __op: 'Increment', amount: op.increment };
      } else {
        body[k] = encode(self._data[k]);
      }
    });
    return body;
  };
  P.save = function (attrs, options) {
    var self = this;
    if (attrs) { this.set(attrs); }
    return new Promise(function (resolve) {
      var reply = call('save', [self.className, self.id || '', JSON.stringify(self._body()), opts(options)]);
      self._setServerData(reply);
      resolve(self);
    });
  };
  P.destroy = function (options) {
    var self = this;
    return new Promise(function (resolve) {
      call('destroy', [self.className, self.id || '', opts(options)]);
      resolve(self);
    });
  };
  P.fetch = function (options) {
    var self = this;
    return new Promise(function (resolve) {
      var found = call('find', [self.className, JSON.stringify({ where: { objectId: self.id }, limit: 1, get: true }), opts(options)]);
      if (!found.results.length) { throw new ParseError(101, 'Object not found.'); }
      self._data = {};
      self._setServerData(found.results[0]);
      resolve(self);
    });
  };

  // ParseFile is a stored file as cloud code sees it: a name, a url, and
  // metadata and tags; a beforeSaveFile may return a new one to rename.
  function ParseFile(name, data, contentType, metadata, tags) {
    this._name = name;
    this._url = undefined;
    this._contentType = contentType;
    this._metadata = metadata || {};
    this._tags = tags || {};
  }
  ParseFile.prototype.name = function () { return this._name; };
  ParseFile.prototype.url = function () { return this._url; };
  ParseFile.prototype.metadata = function () { return this._metadata; };
  ParseFile.prototype.tags = function () { return this._tags; };
  ParseFile.prototype.setMetadata = function (m) { this._metadata = m || {}; };
  ParseFile.prototype.addMetadata = function (k, v) { this._metadata[k] = v; };
  ParseFile.prototype.setTags = function (t) { this._tags = t || {}; };
  ParseFile.prototype.addTag = function (k, v) { this._tags[k] = v; };
  ParseFile.prototype.toJSON = function () { return { __type: 'File', name: this._name, url: this._url }; };
  ParseFile._from = function (json) {
    var f = new ParseFile(json.name, undefined, json.contentType, copy(json.metadata || {}), copy(json.tags || {}));
    f._url = json.url;
    return f;
  };

  var ParseUser = ParseObject.extend('_User');
  ParseUser.prototype.getUsername = function () { return this.get('username'); };
  ParseUser.prototype.getEmail = function () { return this.get('email'); };
  ParseUser.prototype.getSessionToken = function () { return this._sessionToken; };
  ParseUser.prototype.setUsername = function (v) { return this.set('username', v); };
  ParseUser.prototype.setPassword = function (v) { return this.set('password', v); };
  ParseUser.prototype.setEmail = function (v) { return this.set('email', v); };
  ParseUser.prototype._loggedIn = function (out) {
    this._sessionToken = out.sessionToken;
    delete out.sessionToken;
    this._setServerData(out);
    return this;
  };
  // signUp creates the user and a session (the token is getSessionToken()).
  ParseUser.prototype.signUp = function (attrs, options) {
    var self = this;
    if (attrs) { Object.keys(attrs).forEach(function (k) { self.set(k, attrs[k]); }); }
    return new Promise(function (resolve) {
      var data = self._data;
      var out = call('signUp', [JSON.stringify(self._body()), opts(options)]);
      self._data = data;
      delete self._data.password;
      resolve(self._loggedIn(out));
    });
  };
  ParseUser.signUp = function (username, password, attrs, options) {
    var u = new ParseUser();
    u.set('username', username);
    u.set('password', password);
    return u.signUp(attrs, options);
  };
  ParseUser.logIn = function (username, password, options) {
    return new Promise(function (resolve) {
      var out = call('logIn', [String(username), String(password), opts(options)]);
      resolve(ParseObject._create('_User')._loggedIn(out));
    });
  };

  // There is no current user on a server (as in Parse Server's cloud
  // code): a handler acts for request.user, or for a token it is given.
  ParseUser.current = function () { return null; };
  ParseUser.currentAsync = function () { return Promise.resolve(null); };
  ParseUser.prototype.isCurrent = function () { return false; };
  // become gives the user a session token belongs to (209 for a bad one).
  ParseUser.become = function (sessionToken) {
    return new Promise(function (resolve) {
      var out = call('become', [String(sessionToken || '')]);
      resolve(ParseObject._create('_User')._loggedIn(out));
    });
  };

  // ParseSession is a _Session; query them with the master key.
  var ParseSession = ParseObject.extend('_Session');
  ParseSession.prototype.getSessionToken = function () { return this.get('sessionToken') || ''; };
  // current needs options.sessionToken: there is no current user to take
  // it from (the SDK rejects the same way without one).
  ParseSession.current = function (options) {
    var token = options && options.sessionToken;
    if (!token) { return Promise.reject('There is no current user.'); }
    return new Promise(function (resolve) {
      var s = ParseObject._create('_Session');
      s._setServerData(call('session', [String(token)]));
      resolve(s);
    });
  };
  // Without a current user there is no current session to judge.
  ParseSession.isCurrentSessionRevocable = function () { return false; };

  // ParseRelation edits a relation field with AddRelation/RemoveRelation
  // and queries its members (the target class must be known).
  function ParseRelation(parent, key, targetClassName) {
    this.parent = parent;
    this.key = key;
    this.targetClassName = targetClassName;
  }
  ParseRelation.prototype._op = function (kind, objects) {
    var list = (Array.isArray(objects) ? objects : [objects]).map(function (o) { return o.toPointer(); });
    this.parent._ops[this.key] = { raw: { __op: kind, objects: list } };
    this.parent._touched = true;
    this.parent._data[this.key] = { __type: 'Relation', className: this.targetClassName };
  };
  ParseRelation.prototype.add = function (objects) { this._op('AddRelation', objects); };
  ParseRelation.prototype.remove = function (objects) { this._op('RemoveRelation', objects); };
  ParseRelation.prototype.query = function () {
    var q = new ParseQuery(this.targetClassName);
    q._where.$relatedTo = { object: this.parent.toPointer(), key: this.key };
    return q;
  };
  P.relation = function (key, targetClassName) {
    var cur = this._data[key];
    return new ParseRelation(this, key, targetClassName || (cur && cur.className));
  };

  // ParseACL is an object's access list: '*' (public), user ids and
  // 'role:Name' entries, each with read and write.
  function ParseACL(arg) {
    this.permissionsById = {};
    if (arg instanceof ParseObject) {
      this.setReadAccess(arg, true);
      this.setWriteAccess(arg, true);
    } else if (arg && typeof arg === 'object') {
      var self = this;
      Object.keys(arg).forEach(function (k) { self.permissionsById[k] = copy(arg[k]); });
    }
  }
  function aclKey(who) {
    if (who instanceof ParseObject) { return who.className === '_Role' ? 'role:' + who.get('name') : who.id; }
    return String(who);
  }
  ParseACL.prototype._set = function (key, access, allowed) {
    var p = this.permissionsById[key] || {};
    if (allowed) { p[access] = true; } else { delete p[access]; }
    if (Object.keys(p).length) { this.permissionsById[key] = p; } else { delete this.permissionsById[key]; }
  };
  ParseACL.prototype._get = function (key, access) {
    var p = this.permissionsById[key];
    return !!(p && p[access]);
  };
  ParseACL.prototype.setReadAccess = function (who, allowed) { this._set(aclKey(who), 'read', allowed); };
  ParseACL.prototype.setWriteAccess = function (who, allowed) { this._set(aclKey(who), 'write', allowed); };
  ParseACL.prototype.getReadAccess = function (who) { return this._get(aclKey(who), 'read'); };
  ParseACL.prototype.getWriteAccess = function (who) { return this._get(aclKey(who), 'write'); };
  ParseACL.prototype.setPublicReadAccess = function (allowed) { this._set('*', 'read', allowed); };
  ParseACL.prototype.setPublicWriteAccess = function (allowed) { this._set('*', 'write', allowed); };
  ParseACL.prototype.getPublicReadAccess = function () { return this._get('*', 'read'); };
  ParseACL.prototype.getPublicWriteAccess = function () { return this._get('*', 'write'); };
  function roleKey(role) { return 'role:' + (role instanceof ParseObject ? role.get('name') : role); }
  ParseACL.prototype.setRoleReadAccess = function (role, allowed) { this._set(roleKey(role), 'read', allowed); };
  ParseACL.prototype.setRoleWriteAccess = function (role, allowed) { this._set(roleKey(role), 'write', allowed); };
  ParseACL.prototype.getRoleReadAccess = function (role) { return this._get(roleKey(role), 'read'); };
  ParseACL.prototype.getRoleWriteAccess = function (role) { return this._get(roleKey(role), 'write'); };
  ParseACL.prototype.toJSON = function () { return copy(this.permissionsById); };
  P.setACL = function (acl) { return this.set('ACL', acl instanceof ParseACL ? acl.toJSON() : acl); };
  P.getACL = function () { var a = this._data.ACL; return a ? new ParseACL(a) : undefined; };

  // ParseRole is a _Role: a name, an ACL, and users and roles relations.
  var ParseRole = ParseObject.extend('_Role');
  ParseRole.prototype.getName = function () { return this.get('name'); };
  ParseRole.prototype.setName = function (v) { return this.set('name', v); };
  ParseRole.prototype.getUsers = function () { return this.relation('users', '_User'); };
  ParseRole.prototype.getRoles = function () { return this.relation('roles', '_Role'); };
  var makeRole = ParseRole;
  ParseRole = function (name, acl) {
    var r = ParseObject._create('_Role');
    if (name !== undefined) { r.set('name', name); }
    if (acl !== undefined) { r.setACL(acl); }
    return r;
  };
  ParseRole.prototype = makeRole.prototype;

  function ParseQuery(cls) {
    if (!(this instanceof ParseQuery)) { return new ParseQuery(cls); }
    this.className = typeof cls === 'string' ? cls : (cls.className || (cls.prototype && cls.prototype.className));
    this._where = {};
    this._limit = -1;
    this._skip = 0;
    this._order = [];
    this._include = [];
    this._select = undefined;
  }
  var Q = ParseQuery.prototype;
  Q._add = function (k, op, v) {
    var cur = this._where[k];
    if (!cur || typeof cur !== 'object' || Array.isArray(cur) || cur.__type) { cur = {}; }
    cur[op] = encode(v);
    this._where[k] = cur;
    return this;
  };
  Q.equalTo = function (k, v) { this._where[k] = encode(v); return this; };
  Q.notEqualTo = function (k, v) { return this._add(k, '$ne', v); };
  Q.lessThan = function (k, v) { return this._add(k, '$lt', v); };
  Q.lessThanOrEqualTo = function (k, v) { return this._add(k, '$lte', v); };
  Q.greaterThan = function (k, v) { return this._add(k, '$gt', v); };
  Q.greaterThanOrEqualTo = function (k, v) { return this._add(k, '$gte', v); };
  Q.containedIn = function (k, v) { return this._add(k, '$in', v); };
  Q.notContainedIn = function (k, v) { return this._add(k, '$nin', v); };
  Q.containsAll = function (k, v) { return this._add(k, '$all', v); };
  Q.exists = function (k) { return this._add(k, '$exists', true); };
  Q.doesNotExist = function (k) { return this._add(k, '$exists', false); };
  Q.matches = function (k, re, mods) {
    if (re instanceof RegExp) {
      mods = (re.ignoreCase ? 'i' : '') + (re.multiline ? 'm' : '');
      re = re.source;
    }
    this._add(k, '$regex', re);
    if (mods) { this._where[k].$options = mods; }
    return this;
  };
  Q.startsWith = function (k, prefix) {
    return this._add(k, '$regex', '^' + String(prefix).replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  };
  Q.limit = function (n) { this._limit = n; return this; };
  Q.skip = function (n) { this._skip = n; return this; };
  Q.ascending = function () { this._order = [].slice.call(arguments); return this; };
  Q.addAscending = function () { this._order = this._order.concat([].slice.call(arguments)); return this; };
  Q.descending = function () {
    this._order = [].slice.call(arguments).map(function (k) { return '-' + k; });
    return this;
  };
  Q.addDescending = function () {
    this._order = this._order.concat([].slice.call(arguments).map(function (k) { return '-' + k; }));
    return this;
  };
  Q.include = function () { this._include = this._include.concat([].concat.apply([], arguments)); return this; };
  Q.select = function () { this._select = (this._select || []).concat([].concat.apply([], arguments)); return this; };
  Q.toJSON = function () {
    var out = { where: this._where };
    if (this._limit >= 0) { out.limit = this._limit; }
    if (this._skip) { out.skip = this._skip; }
    if (this._order.length) { out.order = this._order.join(','); }
    if (this._include.length) { out.include = this._include.join(','); }
    if (this._select) { out.keys = this._select.join(','); }
    return out;
  };
  Q._run = function (extra, options) {
    var p = this.toJSON();
    Object.keys(extra).forEach(function (k) { p[k] = extra[k]; });
    return call('find', [this.className, JSON.stringify(p), opts(options)]);
  };
  Q._decodeAll = function (results) {
    var cls = this.className;
    return results.map(function (r) { var o = ParseObject._create(cls); o._setServerData(r); return o; });
  };
  Q.find = function (options) {
    var self = this;
    return new Promise(function (resolve) { resolve(self._decodeAll(self._run({}, options).results)); });
  };
  Q.first = function (options) {
    var self = this;
    return new Promise(function (resolve) { resolve(self._decodeAll(self._run({ limit: 1 }, options).results)[0]); });
  };
  Q.get = function (id, options) {
    var self = this;
    return new Promise(function (resolve) {
      var found = self._decodeAll(self._run({ where: { objectId: id }, limit: 1, get: true }, options).results);
      if (!found.length) { throw new ParseError(101, 'Object not found.'); }
      resolve(found[0]);
    });
  };
  Q.count = function (options) {
    var self = this;
    return new Promise(function (resolve) { resolve(self._run({ limit: 0, count: 1 }, options).count); });
  };
  Q._fromJSON = function (q) {
    this._where = q.where ? copy(q.where) : {};
    this._limit = q.limit === undefined ? -1 : q.limit;
    this._skip = q.skip || 0;
    this._order = q.order ? q.order.split(',') : [];
    this._include = q.include ? q.include.split(',') : [];
    this._select = q.keys ? q.keys.split(',') : undefined;
    return this;
  };

  // The methods that change a query mark it touched: a beforeFind that
  // leaves its query alone answers nothing for Go to read back.
  ['_add', 'equalTo', 'matches', 'limit', 'skip', 'ascending', 'addAscending', 'descending', 'addDescending',
    'include', 'select'].forEach(function (name) {
    var fn = Q[name];
    Q[name] = function () { this._touched = true; return fn.apply(this, arguments); };
  });

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
    var out = { requireUser: !!v.requireUser, requireMaster: !!v.requireMaster, skipWithMasterKey: !!v.skipWithMasterKey, fields: {},
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

  // httpRequest sends options.body as is when it is a string, as JSON when
  // it is an object (form-encoded with that Content-Type); the promise
  // resolves with {status, headers, text, data} for a 2xx answer and
  // rejects with the same response otherwise.
  function httpRequest(options) {
    options = options || {};
    var headers = {};
    Object.keys(options.headers || {}).forEach(function (k) { headers[k] = String(options.headers[k]); });
    var body = options.body;
    if (body !== undefined && body !== null && typeof body !== 'string') {
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
      body: body === undefined || body === null ? undefined : String(body), followRedirects: !!options.followRedirects });
    return native.httpRequest(sent).then(function (r) {
      var res = { status: r.status, headers: copy(r.headers), text: r.text };
      try { res.data = JSON.parse(r.text); } catch (e) { res.data = undefined; }
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

  function errorJSON(e) {
    if (e instanceof ParseError || (e && typeof e.code === 'number' && e.message !== undefined)) {
      return { code: e.code, message: String(e.message) };
    }
    if (e instanceof Error) {
      return { code: 141, message: e.message };
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
