  // Prelude part sdkobjects.js: the rest of the official SDK's
  // Parse.Object, Parse.User, Parse.File, Parse.Installation and
  // Parse.Config, over the natives (native.sdk for calls beyond objects).
  // The parts are joined in the order js.go lists them into the body of
  // the one function core.js opens and invoke.js closes.

  // sdk runs a Go SDK call (jssdk.go) with its arguments.
  function sdk(name, args, options) {
    return call('sdk', [name, JSON.stringify(encode(args)), opts(options)]);
  }
  function later(fn) { return new Promise(function (resolve) { resolve(fn()); }); }
  var master = { useMasterKey: true };

  // remember keeps a field's saved value before its first change, for
  // revert().
  function remember(o, k) {
    if (!o._saved) { o._saved = {}; }
    if (!Object.prototype.hasOwnProperty.call(o._saved, k)) {
      o._saved[k] = { had: Object.prototype.hasOwnProperty.call(o._data, k), v: o._data[k] };
    }
  }
  ['set', 'unset', 'increment'].forEach(function (name) {
    var fn = P[name];
    P[name] = function (k) {
      if (typeof k === 'string' && k !== 'objectId') { remember(this, k); }
      return fn.apply(this, arguments);
    };
  });

  // arrayOp applies Add, AddUnique or Remove locally and queues the same
  // operation for the server (atomic there); mixed with another pending
  // change of the field it becomes a plain set of the result.
  function arrayOp(kind, apply) {
    return function (k, items) {
      items = list(items);
      remember(this, k);
      this._data[k] = apply(Array.isArray(this._data[k]) ? this._data[k] : [], items);
      var prev = this._ops[k];
      if (!prev) {
        this._ops[k] = { raw: { __op: kind, objects: encode(items) } };
      } else if (prev.raw && prev.raw.__op === kind) {
        this._ops[k] = { raw: { __op: kind, objects: prev.raw.objects.concat(encode(items)) } };
      } else {
        this._ops[k] = { set: true };
      }
      this._touched = true;
      return this;
    };
  }
  var addAll = arrayOp('Add', function (arr, items) { return arr.concat(items); });
  P.add = function (k, v) { return addAll.call(this, k, [v]); };
  P.addAll = addAll;
  P.addAllUnique = arrayOp('AddUnique', addUnique);
  P.addUnique = function (k, v) { return this.addAllUnique(k, [v]); };
  P.removeAll = arrayOp('Remove', removeAll);
  P.remove = function (k, v) { return this.removeAll(k, [v]); };

  // op is the pending change of a field, as a Parse.Op.
  P.op = function (k) {
    var o = this._ops[k];
    if (!o) { return undefined; }
    if (o.unset) { return new ParseOp.Unset(); }
    if (o.increment !== undefined && !o.set) { return new ParseOp.Increment(o.increment); }
    if (o.raw) {
      var kinds = { Add: ParseOp.Add, AddUnique: ParseOp.AddUnique, Remove: ParseOp.Remove };
      if (kinds[o.raw.__op]) { return new kinds[o.raw.__op](decode(o.raw.objects)); }
      return new ParseOp.Relation();
    }
    return new ParseOp.Set(this._data[k]);
  };
  P.revert = function () {
    var keys = arguments.length ? [].slice.call(arguments) : Object.keys(this._ops);
    var self = this;
    keys.forEach(function (k) {
      var s = self._saved && self._saved[k];
      if (s) {
        if (s.had) { self._data[k] = s.v; } else { delete self._data[k]; }
        delete self._saved[k];
      }
      delete self._ops[k];
    });
  };
  P.clear = function () {
    var self = this;
    Object.keys(this._data).forEach(function (k) { if (k !== 'ACL') { self.unset(k); } });
    return this;
  };
  P.clone = function () {
    var o = ParseObject._create(this.className);
    var self = this;
    Object.keys(this._data).forEach(function (k) { o.set(k, self._data[k]); });
    return o;
  };
  P.newInstance = function () {
    var o = ParseObject._create(this.className);
    o.id = this.id;
    o._createdAt = this._createdAt;
    o._updatedAt = this._updatedAt;
    o._data = copy(this._data);
    o._ops = {};
    return o;
  };
  P.equals = function (o) {
    return this === o || (o instanceof ParseObject && this.className === o.className && this.id !== undefined && this.id === o.id);
  };
  var htmlEscapes = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#x27;', '/': '&#x2F;' };
  P.escape = function (k) {
    var v = this._data[k];
    if (v === undefined || v === null) { return ''; }
    return String(typeof v.toString === 'function' ? v.toString() : v).replace(/[&<>"'/]/g, function (c) { return htmlEscapes[c]; });
  };
  P.initialize = function () {};
  P.isDataAvailable = function () { return !!this._createdAt || Object.keys(this._data).length > 0; };
  P.isValid = function () { return !this.validate(this._data); };
  P.validate = function (attrs) {
    if (attrs && attrs.ACL !== undefined && !(attrs.ACL instanceof ParseACL) && (typeof attrs.ACL !== 'object' || attrs.ACL === null)) {
      return new ParseError(codes.OTHER_CAUSE, 'ACL must be a Parse ACL.');
    }
    // Key names as the SDK allows them: a letter, then letters, digits, _ and .
    for (var key in attrs) {
      if (!/^[A-Za-z][0-9A-Za-z_.]*$/.test(key)) { return new ParseError(codes.INVALID_KEY_NAME, 'Invalid key name: ' + key); }
    }
    return false;
  };
  // exists says whether the object is still stored.
  P.exists = function (options) {
    var self = this;
    return later(function () {
      var found = call('find', [self.className, JSON.stringify({ where: { objectId: self.id }, limit: 1, get: true }), opts(options)]);
      return found.results.length > 0;
    });
  };
  function includeList(options) {
    var inc = options && options.include;
    if (!inc) { return ''; }
    return [].concat(inc).map(function (k) { return [].concat(k).join(','); }).join(',');
  }
  P.fetch = function (options) {
    var self = this;
    return later(function () {
      var found = call('find', [self.className, JSON.stringify({ where: { objectId: self.id }, limit: 1, get: true, include: includeList(options) }),
        opts(options)]);
      if (!found.results.length) { throw new ParseError(codes.OBJECT_NOT_FOUND, 'Object not found.'); }
      self._data = {};
      self._setServerData(found.results[0]);
      return self;
    });
  };
  P.fetchWithInclude = function (keys, options) {
    var o = Object.assign({}, options || {});
    o.include = keys;
    return this.fetch(o);
  };

  // fetchAll fetches every object in one query per class (all must be
  // saved); the IfNeeded forms skip objects that already have data.
  function fetchAll(list, options, ifNeeded) {
    return later(function () {
      var byClass = {};
      list.forEach(function (o) {
        if (!o.id) { throw new ParseError(codes.MISSING_OBJECT_ID, 'All objects must have an ID'); }
        if (ifNeeded && o.isDataAvailable()) { return; }
        (byClass[o.className] = byClass[o.className] || []).push(o);
      });
      Object.keys(byClass).forEach(function (cls) {
        var ids = byClass[cls].map(function (o) { return o.id; });
        var res = call('find', [cls, JSON.stringify({ where: { objectId: { $in: ids } }, include: includeList(options) }), opts(options)]);
        var got = {};
        res.results.forEach(function (r) { got[r.objectId] = r; });
        byClass[cls].forEach(function (o) {
          if (!got[o.id]) {
            if (!ifNeeded) { throw new ParseError(codes.OBJECT_NOT_FOUND, 'All objects must exist'); }
            return;
          }
          o._data = {};
          o._setServerData(got[o.id]);
        });
      });
      return list;
    });
  }
  function withInclude(fn) {
    return function (list, keys, options) {
      var o = Object.assign({}, options || {});
      o.include = keys;
      return fn(list, o);
    };
  }
  ParseObject.fetchAll = function (list, options) { return fetchAll(list, options, false); };
  ParseObject.fetchAllIfNeeded = function (list, options) { return fetchAll(list, options, true); };
  ParseObject.fetchAllWithInclude = withInclude(ParseObject.fetchAll);
  ParseObject.fetchAllIfNeededWithInclude = withInclude(ParseObject.fetchAllIfNeeded);
  ParseObject.handleIncludeOptions = function (options) {
    var inc = includeList(options);
    return inc ? inc.split(',') : [];
  };
  ParseObject.fromJSON = function (json, override) {
    var o = ParseObject._create(json.className);
    var data = copy(json);
    delete data.__type;
    o._setServerData(data);
    if (override) { o._data = decode(copy(json)); delete o._data.className; delete o._data.objectId; delete o._data.__type; }
    return o;
  };
  ParseObject.unregisterSubclass = function (className) { delete registry[className]; };
  ParseObject.destroyAll = function (list, options) {
    return list.reduce(function (p, o) { return p.then(function () { return o.destroy(options); }); }, Promise.resolve())
      .then(function () { return list; });
  };

  // extend also takes {className, ...} and class properties, and runs
  // the subclass's initialize, as the SDK does.
  var extendBase = ParseObject.extend;
  ParseObject.extend = function (className, protoProps, classProps) {
    if (className && typeof className === 'object') {
      protoProps = Object.assign({}, className);
      className = protoProps.className;
      delete protoProps.className;
    }
    var known = registry[className];
    var Sub = known || extendBase(className);
    if (!known && className !== '_User' && className !== '_Role' && className !== '_Session' && className !== '_Installation') {
      var Plain = Sub;
      Sub = function (attrs, options) {
        if (!(this instanceof Sub)) { return new Sub(attrs, options); }
        ParseObject.call(this, className, attrs);
        this.initialize.apply(this, arguments);
      };
      Sub.prototype = Plain.prototype;
      Sub.prototype.constructor = Sub;
      Sub.className = className;
      Sub.extend = ParseObject.extend;
      Sub.createWithoutData = function (id) { var o = ParseObject._create(className); o.id = id; return o; };
      registry[className] = Sub;
    }
    Object.keys(protoProps || {}).forEach(function (k) { Sub.prototype[k] = protoProps[k]; });
    Object.keys(classProps || {}).forEach(function (k) { Sub[k] = classProps[k]; });
    return Sub;
  };

  // Users.
  ParseUser.readOnlyAttributes = function () { return ['emailVerified', 'authData']; };
  ParseSession.readOnlyAttributes = function () {
    return ['createdWith', 'expiresAt', 'installationId', 'restricted', 'sessionToken', 'user'];
  };
  ParseUser.extend = function (protoProps, classProps) {
    Object.keys(protoProps || {}).forEach(function (k) { ParseUser.prototype[k] = protoProps[k]; });
    Object.keys(classProps || {}).forEach(function (k) { ParseUser[k] = classProps[k]; });
    return ParseUser;
  };
  ParseUser.prototype.authenticated = function () { return !!this._sessionToken; };
  ParseUser.prototype.logIn = function (options) {
    var self = this;
    return ParseUser.logIn(this.get('username'), this.get('password'), options).then(function (u) {
      self._sessionToken = u._sessionToken;
      var data = self._data;
      self._setServerData(u.toJSON());
      delete data.password;
      return self;
    });
  };
  ParseUser.verifyPassword = function (username, password, options) {
    return later(function () { return ParseObject.fromJSON(Object.assign({ className: '_User' }, sdk('verifyPassword', [username, password], options))); });
  };
  ParseUser.prototype.verifyPassword = function (password, options) { return ParseUser.verifyPassword(this.get('username'), password, options); };
  ParseUser.me = function (sessionToken) { return ParseUser.become(sessionToken); };
  ParseUser.hydrate = function (json) {
    var u = ParseObject._create('_User');
    var data = copy(json);
    u._sessionToken = data.sessionToken;
    delete data.sessionToken;
    u._setServerData(data);
    return Promise.resolve(u);
  };
  ParseUser.loginAs = function (userId) {
    return later(function () { return ParseObject._create('_User')._loggedIn(sdk('loginAs', [userId], master)); });
  };
  ParseUser.logInWith = function (provider, options, saveOpts) {
    var name = typeof provider === 'string' ? provider : provider.getAuthType();
    return later(function () { return ParseObject._create('_User')._loggedIn(sdk('logInWith', [name, options.authData || {}], saveOpts)); });
  };
  ParseUser.prototype.linkWith = function (provider, options, saveOpts) {
    var name = typeof provider === 'string' ? provider : provider.getAuthType();
    var auth = copy(this.get('authData') || {});
    auth[name] = options.authData;
    this.set('authData', auth);
    return this.save(null, saveOpts);
  };
  // logInWithAdditionalAuth logs in with a password; the additional
  // auth data (MFA) is checked by the server's auth adapters.
  ParseUser.logInWithAdditionalAuth = function (username, password, authData, options) {
    return ParseUser.logIn(username, password, options);
  };
  // logOut ends the session of options.sessionToken (there is no current
  // user on a server).
  ParseUser.logOut = function (options) {
    if (!options || !options.sessionToken) { return Promise.resolve(); }
    return later(function () { sdk('logOut', [], { sessionToken: options.sessionToken }); });
  };
  ParseUser.requestPasswordReset = function (email, options) {
    return later(function () { sdk('passwordReset', [email], options); });
  };
  ParseUser.requestEmailVerification = function (email, options) {
    return later(function () { sdk('verificationEmail', [email], options); });
  };

  // Parse.Installation is an _Installation with its fields as properties.
  var ParseInstallation = ParseObject.extend('_Installation');
  ParseInstallation.DEVICE_TYPES = { IOS: 'ios', MACOS: 'macos', TVOS: 'tvos', FCM: 'fcm', ANDROID: 'android', WEB: 'web' };
  ['appIdentifier', 'appVersion', 'appName', 'badge', 'channels', 'deviceToken', 'deviceType', 'GCMSenderId',
    'installationId', 'localeIdentifier', 'parseVersion', 'pushType', 'timeZone'].forEach(function (k) {
    Object.defineProperty(ParseInstallation.prototype, k, { get: function () { return this.get(k); }, configurable: true });
  });
  ParseInstallation.currentInstallation = function () { return Promise.resolve(null); };

  // Parse.File: data from bytes, {base64} or a data: URL; saved through
  // the files adapter, read back with getData.
  var ParseFileBase = ParseFile;
  ParseFile = function (name, data, contentType, metadata, tags) {
    ParseFileBase.call(this, name, data, contentType, metadata, tags);
    if (Array.isArray(data) || data instanceof Uint8Array) {
      this._source = Buffer.from(data).toString('base64');
    } else if (data && typeof data.base64 === 'string') {
      var m = /^data:([^;]*);base64,(.*)$/.exec(data.base64);
      this._source = m ? m[2] : data.base64;
      if (m && !contentType) { this._contentType = m[1]; }
    } else if (data && data.uri) {
      this._uri = data.uri;
    }
  };
  ParseFile.prototype = ParseFileBase.prototype;
  ParseFile.prototype.constructor = ParseFile;
  ParseFile._from = ParseFileBase._from;
  ParseFile.fromJSON = function (json) {
    if (!json || json.__type !== 'File') { throw new TypeError('JSON object does not represent a ParseFile'); }
    return ParseFile._from(json);
  };
  ParseFile.encodeBase64 = function (bytes) { return Buffer.from(bytes).toString('base64'); };
  ParseFile.prototype.save = function (options) {
    var self = this;
    return later(function () {
      if (self._url) { return self; }
      if (self._source === undefined) { throw new ParseError(codes.FILE_SAVE_ERROR, 'Cannot save a Parse.File without data.'); }
      var out = sdk('fileSave', [self._name, self._source, self._contentType || '', self._metadata, self._tags], options);
      self._name = out.name;
      self._url = out.url;
      return self;
    });
  };
  ParseFile.prototype.getData = function () {
    var self = this;
    return later(function () {
      if (self._source === undefined) { self._source = sdk('fileGet', [self._name]); }
      return self._source;
    });
  };
  ParseFile.prototype.destroy = function (options) {
    var self = this;
    return later(function () {
      if (!self._name) { throw new ParseError(codes.FILE_DELETE_UNNAMED_ERROR, 'Cannot delete an unnamed file.'); }
      sdk('fileDelete', [self._name], Object.assign({ useMasterKey: true }, options || {}));
      return self;
    });
  };
  ParseFile.prototype.cancel = function () {};
  ParseFile.prototype.equals = function (o) { return this === o || (o instanceof ParseFile && o._name === this._name && o._url === this._url); };
  ParseFile.prototype.directory = function () { return this._directory; };
  ParseFile.prototype.setDirectory = function (d) { this._directory = d; };

  // Parse.Config: the parameters of GET /config.
  function ParseConfig() { this.attributes = {}; this._escaped = {}; }
  ParseConfig.prototype.get = function (k) { return this.attributes[k]; };
  ParseConfig.prototype.escape = function (k) {
    var v = this.attributes[k];
    return v === undefined || v === null ? '' : String(v).replace(/[&<>"'/]/g, function (c) { return htmlEscapes[c]; });
  };
  var currentConfig;
  function configFrom(out) {
    var c = new ParseConfig();
    c.attributes = decode(out.params || {});
    currentConfig = c;
    return c;
  }
  ParseConfig.current = function () { return currentConfig || new ParseConfig(); };
  ParseConfig.get = function (options) { return later(function () { return configFrom(sdk('configGet', [], options)); }); };
  ParseConfig.save = function (attrs, masterKeyOnly) {
    return later(function () {
      var body = { params: encode(attrs || {}) };
      if (masterKeyOnly) { body.masterKeyOnly = masterKeyOnly; }
      return configFrom(sdk('configSave', [body], master));
    });
  };

  ParseACL.prototype.equals = function (o) {
    return o instanceof ParseACL && JSON.stringify(sortedKeys(this.permissionsById)) === JSON.stringify(sortedKeys(o.permissionsById));
  };
  function sortedKeys(v) {
    if (!v || typeof v !== 'object' || Array.isArray(v)) { return v; }
    var out = {};
    Object.keys(v).sort().forEach(function (k) { out[k] = sortedKeys(v[k]); });
    return out;
  }
  ParseRelation.prototype.toJSON = function () { return { __type: 'Relation', className: this.targetClassName }; };
