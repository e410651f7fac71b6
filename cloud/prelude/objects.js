  // Prelude part objects.js: Parse.Object (and its class registry), Parse.File,
  // Parse.Relation, Parse.ACL and Parse.Role.
  // The parts are joined in the order js.go lists them (core, objects,
  // query, cloud, invoke) into the body of the one function core.js opens
  // and invoke.js closes, so they share its scope.

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
    this._saved = undefined; // revert() copies _data when it is first needed
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
  // existed: the object was in the database before its last save (an
  // update, not a creation), as afterSave handlers check.
  P.existed = function () { return !!this._existed; };
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
      var existed = !!self.id;
      var reply = call('save', [self.className, self.id || '', JSON.stringify(self._body()), opts(options)]);
      self._setServerData(reply);
      self._existed = existed;
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
  ParseRole.className = '_Role';
