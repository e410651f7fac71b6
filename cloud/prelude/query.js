  // Prelude part query.js: Parse.Query.
  // The parts are joined in the order js.go lists them (core, objects,
  // query, cloud, invoke) into the body of the one function core.js opens
  // and invoke.js closes, so they share its scope.

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
  // each calls back with every match, in batches ordered by objectId (as
  // the SDK does), awaiting what the callback returns.
  Q.each = function (callback, options) {
    if (this._order.length || this._skip || this._limit >= 0) {
      return Promise.reject(new ParseError(ParseError.INVALID_QUERY, 'Cannot iterate on a query with sort, skip, or limit.'));
    }
    var self = this, batch = (options && options.batchSize) || 100, last;
    function next() {
      var where = copy(self._where);
      if (last !== undefined) { where = { $and: [where, { objectId: { $gt: last } }] }; }
      var found = self._decodeAll(self._run({ where: where, order: 'objectId', limit: batch }, options).results);
      if (!found.length) { return undefined; }
      last = found[found.length - 1].id;
      var chain = Promise.resolve();
      found.forEach(function (o) { chain = chain.then(function () { return callback(o); }); });
      return chain.then(function () { return found.length < batch ? undefined : next(); });
    }
    return new Promise(function (resolve) { resolve(next()); });
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

  // Parse.Query.or, and, nor: one query of the given queries' class
  // matching what any, all or none of them match.
  function compound(op) {
    return function () {
      var qs = [].concat.apply([], arguments);
      var cls = qs.length ? qs[0].className : undefined;
      qs.forEach(function (q) {
        if (q.className !== cls) { throw new ParseError(ParseError.INVALID_QUERY, 'All queries must be for the same class.'); }
      });
      var out = new ParseQuery(cls);
      out._where[op] = qs.map(function (q) { return q._where; });
      return out;
    };
  }
  ParseQuery.or = compound('$or');
  ParseQuery.and = compound('$and');
  ParseQuery.nor = compound('$nor');

  // The methods that change a query mark it touched: a beforeFind that
  // leaves its query alone answers nothing for Go to read back.
  ['_add', 'equalTo', 'matches', 'limit', 'skip', 'ascending', 'addAscending', 'descending', 'addDescending',
    'include', 'select'].forEach(function (name) {
    var fn = Q[name];
    Q[name] = function () { this._touched = true; return fn.apply(this, arguments); };
  });
