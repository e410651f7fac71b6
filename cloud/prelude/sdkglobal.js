  // Prelude part sdkglobal.js: the official SDK's remaining namespaces
  // (Parse.Schema, Parse.CLP, Parse.Hooks, Parse.Analytics, the rest of
  // Parse.Cloud) added to the global Parse object cloud.js made.
  // The parts are joined in the order js.go lists them into the body of
  // the one function core.js opens and invoke.js closes.

  // Parse.Schema edits a class's schema (always with the master key).
  function ParseSchema(className) {
    this.className = className === 'User' ? '_User' : className;
    this._fields = {};
    this._indexes = {};
    this._clp = undefined;
  }
  var S = ParseSchema.prototype;
  S.assertClassName = function () { if (!this.className) { throw new Error('You must set a Class Name before making any request.'); } };
  S._body = function () {
    var b = { className: this.className, fields: this._fields, indexes: this._indexes };
    if (this._clp) { b.classLevelPermissions = this._clp; }
    return b;
  };
  S._reset = function (out) { this._fields = {}; this._indexes = {}; this._clp = undefined; return out; };
  S.get = function () { var self = this; self.assertClassName(); return later(function () { return sdk('schemaGet', [self.className], master); }); };
  S.save = function () {
    var self = this; self.assertClassName();
    return later(function () { return self._reset(sdk('schemaSave', [self.className, self._body()], master)); });
  };
  S.update = function () {
    var self = this; self.assertClassName();
    return later(function () { return self._reset(sdk('schemaUpdate', [self.className, self._body()], master)); });
  };
  S.delete = function () { var self = this; self.assertClassName(); return later(function () { return sdk('schemaDelete', [self.className], master); }); };
  S.purge = function () { var self = this; self.assertClassName(); return later(function () { return sdk('schemaPurge', [self.className], master); }); };
  ParseSchema.all = function () { return later(function () { return sdk('schemaAll', [], master); }); };
  S.setCLP = function (clp) { this._clp = clp instanceof ParseCLP ? clp.toJSON() : clp; return this; };
  S.addField = function (name, type, options) {
    type = type || 'String';
    if (!name) { throw new Error('field name may not be null.'); }
    var f = { type: type };
    options = options || {};
    if (type === 'Pointer' || type === 'Relation') { f.targetClass = options.targetClass; }
    if (options.required !== undefined) { f.required = !!options.required; }
    if (options.defaultValue !== undefined) { f.defaultValue = encode(options.defaultValue); }
    this._fields[name] = f;
    return this;
  };
  ['String', 'Number', 'Boolean', 'Bytes', 'Date', 'File', 'GeoPoint', 'Polygon', 'Array', 'Object'].forEach(function (t) {
    S['add' + t] = function (name, options) { return this.addField(name, t, options); };
  });
  S.addPointer = function (name, targetClass, options) {
    return this.addField(name, 'Pointer', Object.assign({}, options || {}, { targetClass: targetClass }));
  };
  S.addRelation = function (name, targetClass) { return this.addField(name, 'Relation', { targetClass: targetClass }); };
  S.addIndex = function (name, index) { this._indexes[name] = index; return this; };
  S.deleteField = function (name) { this._fields[name] = { __op: 'Delete' }; return this; };
  S.deleteIndex = function (name) { this._indexes[name] = { __op: 'Delete' }; return this; };

  // Parse.CLP builds class-level permissions: read is get, find and
  // count; write is create, update, delete and addField.
  var clpRead = ['get', 'find', 'count'], clpWrite = ['create', 'update', 'delete', 'addField'];
  function ParseCLP(json) {
    this.permissionsMap = {};
    var self = this;
    clpRead.concat(clpWrite, ['protectedFields', 'readUserFields', 'writeUserFields']).forEach(function (k) { self.permissionsMap[k] = {}; });
    if (json instanceof ParseObject) { this.setReadAccess(json, true); this.setWriteAccess(json, true); } else if (json) {
      Object.keys(json).forEach(function (k) { self.permissionsMap[k] = copy(json[k]); });
    }
  }
  var C = ParseCLP.prototype;
  C.toJSON = function () { return copy(this.permissionsMap); };
  C.equals = function (o) { return o instanceof ParseCLP && JSON.stringify(sortedKeys(this.toJSON())) === JSON.stringify(sortedKeys(o.toJSON())); };
  C._set = function (ops, key, allowed) {
    var m = this.permissionsMap;
    ops.forEach(function (op) { if (allowed) { m[op][key] = true; } else { delete m[op][key]; } });
  };
  C._get = function (ops, key) { var m = this.permissionsMap; return ops.every(function (op) { return !!m[op][key]; }); };
  C.setReadAccess = function (who, allowed) { this._set(clpRead, aclKey(who), allowed); };
  C.getReadAccess = function (who) { return this._get(clpRead, aclKey(who)); };
  C.setWriteAccess = function (who, allowed) { this._set(clpWrite, aclKey(who), allowed); };
  C.getWriteAccess = function (who) { return this._get(clpWrite, aclKey(who)); };
  C.setPublicReadAccess = function (allowed) { this._set(clpRead, '*', allowed); };
  C.getPublicReadAccess = function () { return this._get(clpRead, '*'); };
  C.setPublicWriteAccess = function (allowed) { this._set(clpWrite, '*', allowed); };
  C.getPublicWriteAccess = function () { return this._get(clpWrite, '*'); };
  C.setRoleReadAccess = function (role, allowed) { this._set(clpRead, roleKey(role), allowed); };
  C.getRoleReadAccess = function (role) { return this._get(clpRead, roleKey(role)); };
  C.setRoleWriteAccess = function (role, allowed) { this._set(clpWrite, roleKey(role), allowed); };
  C.getRoleWriteAccess = function (role) { return this._get(clpWrite, roleKey(role)); };
  C.setReadUserFields = function (fields) { this.permissionsMap.readUserFields = fields; };
  C.getReadUserFields = function () { return this.permissionsMap.readUserFields; };
  C.setWriteUserFields = function (fields) { this.permissionsMap.writeUserFields = fields; };
  C.getWriteUserFields = function () { return this.permissionsMap.writeUserFields; };
  C.setProtectedFields = function (who, fields) { this.permissionsMap.protectedFields[aclKey(who)] = fields; };
  C.getProtectedFields = function (who) { return this.permissionsMap.protectedFields[aclKey(who)] || []; };
  C.setPublicProtectedFields = function (fields) { this.permissionsMap.protectedFields['*'] = fields; };
  C.getPublicProtectedFields = function () { return this.permissionsMap.protectedFields['*'] || []; };
  C.setRoleProtectedFields = function (role, fields) { this.permissionsMap.protectedFields[roleKey(role)] = fields; };
  C.getRoleProtectedFields = function (role) { return this.permissionsMap.protectedFields[roleKey(role)] || []; };

  // Parse.Hooks manages webhooks (master key).
  function hooks(action, triggers, w) { return later(function () { return sdk('hooks', [action, triggers, w || {}], master); }); }
  var ParseHooks = {
    getFunctions: function () { return hooks('list', false); },
    getTriggers: function () { return hooks('list', true); },
    getFunction: function (name) { return hooks('get', false, { functionName: name }); },
    getTrigger: function (className, triggerName) { return hooks('get', true, { className: className, triggerName: triggerName }); },
    createFunction: function (name, url) { return hooks('create', false, { functionName: name, url: url }); },
    createTrigger: function (className, triggerName, url) { return hooks('create', true, { className: className, triggerName: triggerName, url: url }); },
    create: function (h) { return hooks('create', !h.functionName, h); },
    updateFunction: function (name, url) { return hooks('update', false, { functionName: name, url: url }); },
    updateTrigger: function (className, triggerName, url) { return hooks('update', true, { className: className, triggerName: triggerName, url: url }); },
    update: function (h) { return hooks('update', !h.functionName, h); },
    removeFunction: function (name) { return hooks('remove', false, { functionName: name }); },
    removeTrigger: function (className, triggerName) { return hooks('remove', true, { className: className, triggerName: triggerName }); },
    remove: function (h) { return hooks('remove', !h.functionName, h); }
  };

  var Parse = global.Parse;
  Parse.GeoPoint = ParseGeoPoint;
  Parse.Polygon = ParsePolygon;
  Parse.Op = ParseOp;
  Parse.File = ParseFile;
  Parse.Config = ParseConfig;
  Parse.Installation = ParseInstallation;
  Parse.Schema = ParseSchema;
  Parse.CLP = ParseCLP;
  Parse.Hooks = ParseHooks;
  Parse.Analytics = {
    track: function (name, dimensions) { return later(function () { sdk('track', [name, dimensions || {}], {}); }); }
  };
  Parse.Cloud.startJob = function (name, data) { return later(function () { return sdk('startJob', [name, data || {}], master); }); };
  Parse.Cloud.getJobStatus = function (id) { return new ParseQuery('_JobStatus').get(id, master); };
  Parse.Cloud.getJobsData = function () { return later(function () { return sdk('jobsData', [], master); }); };
  // useMasterKey is the old global switch; pass {useMasterKey: true}.
  Parse.Cloud.useMasterKey = function () {};
  Parse.Parse = Parse;
  // The SDK is set up already: these settings change nothing in-process.
  Parse.initialize = function () {};
  Parse.getServerHealth = function () { return Promise.resolve({ status: 'ok' }); };
  Parse.applicationId = native.appId;
  Parse.serverURL = native.serverURL;
  Parse.javaScriptKey = undefined;
  Parse.masterKey = native.masterKey || undefined;
  Parse.maintenanceKey = undefined;
  Parse.idempotency = false;
  Parse.allowCustomObjectId = false;

  // Parse.Push.send sends through the push adapter (master key, as the
  // SDK sends it); it resolves with the _PushStatus id.
  function pushBody(data) {
    var body = {};
    Object.keys(data || {}).forEach(function (k) {
      var v = data[k];
      if (k === 'where' && v instanceof ParseQuery) { v = v._where; }
      if ((k === 'push_time' || k === 'expiration_time') && v instanceof Date) { v = v.toISOString(); }
      body[k] = encode(v);
    });
    return body;
  }
  Parse.Push = {
    send: function (data, options) {
      return later(function () { return sdk('push', [pushBody(data)], Object.assign({ useMasterKey: true }, options || {})); });
    },
    getPushStatus: function (id, options) { return new ParseQuery('_PushStatus').get(id, Object.assign({ useMasterKey: true }, options || {})); }
  };
