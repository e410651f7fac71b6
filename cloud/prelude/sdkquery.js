  // Prelude part sdkquery.js: the rest of the official SDK's Parse.Query
  // (text, geo and subquery constraints, aggregate, distinct, findAll,
  // eachBatch, map/reduce/filter).
  // The parts are joined in the order js.go lists them into the body of
  // the one function core.js opens and invoke.js closes.

  function quote(s) { return String(s).replace(/[.*+?^${}()|[\]\\]/g, '\\$&'); }
  function subquery(q) { return { where: q._where, className: q.className }; }
  function setRaw(q, k, op, v) {
    var cur = q._where[k];
    if (!cur || typeof cur !== 'object' || Array.isArray(cur) || cur.__type) { cur = {}; }
    cur[op] = v;
    q._where[k] = cur;
    q._touched = true;
    return q;
  }
  Q.contains = function (k, sub) { return this._add(k, '$regex', quote(sub)); };
  Q.endsWith = function (k, suffix) { return this._add(k, '$regex', quote(suffix) + '$'); };
  Q.containedBy = function (k, v) { return this._add(k, '$containedBy', v); };
  Q.containsAllStartingWith = function (k, values) {
    return setRaw(this, k, '$all', list(values).map(function (v) { return { $regex: '^' + quote(v) }; }));
  };
  Q.matchesQuery = function (k, q) { return setRaw(this, k, '$inQuery', subquery(q)); };
  Q.doesNotMatchQuery = function (k, q) { return setRaw(this, k, '$notInQuery', subquery(q)); };
  Q.matchesKeyInQuery = function (k, key, q) { return setRaw(this, k, '$select', { key: key, query: subquery(q) }); };
  Q.doesNotMatchKeyInQuery = function (k, key, q) { return setRaw(this, k, '$dontSelect', { key: key, query: subquery(q) }); };
  Q.fullText = function (k, value, options) {
    options = options || {};
    var search = { $term: value };
    if (options.language) { search.$language = options.language; }
    if (options.caseSensitive !== undefined) { search.$caseSensitive = options.caseSensitive; }
    if (options.diacriticSensitive !== undefined) { search.$diacriticSensitive = options.diacriticSensitive; }
    return setRaw(this, k, '$text', { $search: search });
  };
  Q.sortByTextScore = function () { this.ascending('$score'); this.select(['$score']); return this; };
  function geo(p) { return p instanceof ParseGeoPoint ? p.toJSON() : new ParseGeoPoint(p).toJSON(); }
  Q.near = function (k, p) { return setRaw(this, k, '$nearSphere', geo(p)); };
  Q.withinRadians = function (k, p, maxDistance, sorted) {
    if (sorted || sorted === undefined) {
      setRaw(this, k, '$nearSphere', geo(p));
      return setRaw(this, k, '$maxDistance', maxDistance);
    }
    return setRaw(this, k, '$geoWithin', { $centerSphere: [[geo(p).longitude, geo(p).latitude], maxDistance] });
  };
  Q.withinMiles = function (k, p, d, sorted) { return this.withinRadians(k, p, d / EARTH_MILES, sorted); };
  Q.withinKilometers = function (k, p, d, sorted) { return this.withinRadians(k, p, d / EARTH_KM, sorted); };
  Q.withinGeoBox = function (k, sw, ne) { return setRaw(this, k, '$within', { $box: [geo(sw), geo(ne)] }); };
  Q.withinPolygon = function (k, points) { return setRaw(this, k, '$geoWithin', { $polygon: points.map(geo) }); };
  Q.polygonContains = function (k, p) { return setRaw(this, k, '$geoIntersects', { $point: geo(p) }); };
  Q.exclude = function () {
    this._exclude = (this._exclude || []).concat([].concat.apply([], arguments));
    this._touched = true;
    return this;
  };
  Q.includeAll = function () { return this.include('*'); };
  Q.withCount = function (v) { this._count = v === undefined ? true : !!v; return this; };
  // Hints, read preferences and comments are accepted; the planner
  // chooses its own plan.
  Q.hint = function (v) { this._hint = v; return this; };
  Q.readPreference = function (r) { this._readPreference = r; return this; };
  Q.comment = function (c) { this._comment = c; return this; };
  Q.explain = function (v) { this._explain = v === undefined ? true : !!v; return this; };
  Q.cancel = function () { return this; };
  var toJSONBase = Q.toJSON;
  Q.toJSON = function () {
    var out = toJSONBase.call(this);
    if (this._exclude && this._exclude.length) { out.excludeKeys = this._exclude.join(','); }
    return out;
  };
  Q.withJSON = function (json) {
    this._fromJSON(json);
    this._exclude = json.excludeKeys ? json.excludeKeys.split(',') : undefined;
    if (json.count) { this._count = true; }
    return this;
  };
  ParseQuery.fromJSON = function (className, json) { return new ParseQuery(className).withJSON(json); };
  var findBase = Q.find;
  Q.find = function (options) {
    if (!this._count) { return findBase.call(this, options); }
    var self = this;
    return later(function () {
      var res = self._run({ count: 1 }, options);
      return { results: self._decodeAll(res.results), count: res.count };
    });
  };
  var runBase = Q._run;
  Q._run = function (extra, options) {
    if (this._exclude && this._exclude.length && extra.excludeKeys === undefined) {
      extra = Object.assign({ excludeKeys: this._exclude.join(',') }, extra);
    }
    if (this._include.indexOf('*') >= 0) { extra = Object.assign({ includeAll: true }, extra); }
    return runBase.call(this, extra, options);
  };

  // eachBatch calls back with each batch of matches (ordered by objectId).
  Q.eachBatch = function (callback, options) {
    if (this._order.length || this._skip || this._limit >= 0) {
      return Promise.reject(new ParseError(codes.INVALID_QUERY, 'Cannot iterate on a query with sort, skip, or limit.'));
    }
    var self = this, batch = (options && options.batchSize) || 100, last;
    function next() {
      var where = copy(self._where);
      if (last !== undefined) { where = { $and: [where, { objectId: { $gt: last } }] }; }
      var found = self._decodeAll(self._run({ where: where, order: 'objectId', limit: batch }, options).results);
      if (!found.length) { return undefined; }
      last = found[found.length - 1].id;
      return Promise.resolve(callback(found)).then(function () { return found.length < batch ? undefined : next(); });
    }
    return later(next);
  };
  Q.findAll = function (options) {
    var all = [];
    return this.eachBatch(function (b) { all = all.concat(b); }, options).then(function () { return all; });
  };
  Q.map = function (fn, options) {
    var out = [], i = 0;
    return this.each(function (o) { return Promise.resolve(fn(o, i++, this)).then(function (v) { out.push(v); }); }, options)
      .then(function () { return out; });
  };
  Q.filter = function (fn, options) {
    var out = [], i = 0;
    return this.each(function (o) { return Promise.resolve(fn(o, i++, this)).then(function (v) { if (v) { out.push(o); } }); }, options)
      .then(function () { return out; });
  };
  Q.reduce = function (fn, initial, options) {
    var acc = initial, i = 0, first = arguments.length < 2;
    return this.each(function (o) {
      if (first) { acc = o; first = false; i++; return undefined; }
      return Promise.resolve(fn(acc, o, i++)).then(function (v) { acc = v; });
    }, options).then(function () {
      if (first) { throw new TypeError('Reducing empty query result set with no initial value'); }
      return acc;
    });
  };

  // distinct and aggregate need the master key, as in the SDK.
  Q.distinct = function (key, options) {
    var self = this;
    return later(function () { return decode(sdk('aggregate', [self.className, self._where, key, []], options || master)); });
  };
  Q.aggregate = function (pipeline, options) {
    var self = this;
    var stages = [];
    (Array.isArray(pipeline) ? pipeline : Object.keys(pipeline || {}).map(function (k) { var o = {}; o[k] = pipeline[k]; return o; }))
      .forEach(function (st) {
        Object.keys(st).forEach(function (name) {
          var spec = st[name];
          var keys = spec && typeof spec === 'object' && !Array.isArray(spec) ? Object.keys(spec) : [];
          stages.push([name, spec, /sort$/.test(name) ? keys : []]);
        });
      });
    var where = Object.keys(this._where).length ? this._where : undefined;
    if (where) { stages.unshift(['$match', where, []]); }
    return later(function () { return decode(sdk('aggregate', [self.className, null, '', stages], options || master)); });
  };
