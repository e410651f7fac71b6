  // Prelude part geo.js: Parse.GeoPoint, Parse.Polygon and Parse.Op.
  // The parts are joined in the order js.go lists them into the body of
  // the one function core.js opens and invoke.js closes, so they share
  // its scope.

  var EARTH_KM = 6371.0, EARTH_MILES = 3958.8;

  function ParseGeoPoint(a, b) {
    if (Array.isArray(a)) { b = a[1]; a = a[0]; } else if (a && typeof a === 'object') { b = a.longitude; a = a.latitude; }
    this._latitude = 0;
    this._longitude = 0;
    this.latitude = a === undefined ? 0 : a;
    this.longitude = b === undefined ? 0 : b;
  }
  function geoCheck(v, lim, name) {
    if (typeof v !== 'number' || isNaN(v) || !isFinite(v)) { throw new TypeError('GeoPoint ' + name + ' must be a valid number'); }
    if (v < -lim || v > lim) { throw new TypeError('GeoPoint ' + name + ' out of bounds: ' + v); }
    return v;
  }
  Object.defineProperty(ParseGeoPoint.prototype, 'latitude', {
    get: function () { return this._latitude; },
    set: function (v) { this._latitude = geoCheck(v, 90, 'latitude'); }
  });
  Object.defineProperty(ParseGeoPoint.prototype, 'longitude', {
    get: function () { return this._longitude; },
    set: function (v) { this._longitude = geoCheck(v, 180, 'longitude'); }
  });
  ParseGeoPoint.prototype.toJSON = function () {
    return { __type: 'GeoPoint', latitude: this._latitude, longitude: this._longitude };
  };
  ParseGeoPoint.prototype.equals = function (o) {
    return o instanceof ParseGeoPoint && o.latitude === this.latitude && o.longitude === this.longitude;
  };
  // radiansTo is the great-circle angle to another point (haversine).
  ParseGeoPoint.prototype.radiansTo = function (p) {
    var r = Math.PI / 180;
    var lat1 = this.latitude * r, lat2 = p.latitude * r;
    var dLat = lat2 - lat1, dLng = (p.longitude - this.longitude) * r;
    var a = Math.pow(Math.sin(dLat / 2), 2) + Math.cos(lat1) * Math.cos(lat2) * Math.pow(Math.sin(dLng / 2), 2);
    return 2 * Math.asin(Math.sqrt(Math.min(a, 1)));
  };
  ParseGeoPoint.prototype.kilometersTo = function (p) { return this.radiansTo(p) * EARTH_KM; };
  ParseGeoPoint.prototype.milesTo = function (p) { return this.radiansTo(p) * EARTH_MILES; };
  // There is no device position on a server.
  ParseGeoPoint.current = function () { return Promise.reject(new ParseError(codes.COMMAND_UNAVAILABLE, 'No geolocation on a server.')); };

  function ParsePolygon(coords) {
    this.coordinates = coords;
  }
  Object.defineProperty(ParsePolygon.prototype, 'coordinates', {
    get: function () { return this._coordinates; },
    set: function (coords) {
      if (!Array.isArray(coords) || coords.length < 3) { throw new TypeError('Polygon must have at least 3 GeoPoints or Points'); }
      this._coordinates = coords.map(function (c) {
        var p = c instanceof ParseGeoPoint ? c : new ParseGeoPoint(c[0], c[1]);
        return [p.latitude, p.longitude];
      });
    }
  });
  ParsePolygon.prototype.toJSON = function () { return { __type: 'Polygon', coordinates: this._coordinates.map(function (c) { return c.slice(); }) }; };
  ParsePolygon.prototype.equals = function (o) {
    if (!(o instanceof ParsePolygon) || o.coordinates.length !== this.coordinates.length) { return false; }
    var a = this.coordinates, b = o.coordinates;
    return a.every(function (c, i) { return c[0] === b[i][0] && c[1] === b[i][1]; });
  };
  // containsPoint: ray casting over (latitude, longitude) pairs.
  ParsePolygon.prototype.containsPoint = function (p) {
    var c = this._coordinates, inside = false, x = p.latitude, y = p.longitude;
    for (var i = 0, j = c.length - 1; i < c.length; j = i++) {
      var xi = c[i][0], yi = c[i][1], xj = c[j][0], yj = c[j][1];
      if (((yi > y) !== (yj > y)) && (x < (xj - xi) * (y - yi) / (yj - yi) + xi)) { inside = !inside; }
    }
    return inside;
  };

  // Parse.Op: the field operations a save sends.
  function op(name, json, apply) {
    var Op = function (v, w) { this._value = v; this._other = w; };
    Op.prototype.toJSON = json;
    Op.prototype.applyTo = apply;
    Op.prototype.getValue = function () { return this._value; };
    Op.prototype.opName = name;
    return Op;
  }
  function list(v) { return Array.isArray(v) ? v : [v]; }
  var ParseOp = {
    Set: op('Set', function () { return encode(this._value); }, function () { return this._value; }),
    Unset: op('Unset', function () { return { __op: 'Delete' }; }, function () { return undefined; }),
    Increment: op('Increment', function () { return { __op: 'Increment', amount: this._value }; },
      function (v) { return (v || 0) + this._value; }),
    Add: op('Add', function () { return { __op: 'Add', objects: encode(list(this._value)) }; },
      function (v) { return (v || []).concat(list(this._value)); }),
    AddUnique: op('AddUnique', function () { return { __op: 'AddUnique', objects: encode(list(this._value)) }; },
      function (v) { return addUnique(v || [], list(this._value)); }),
    Remove: op('Remove', function () { return { __op: 'Remove', objects: encode(list(this._value)) }; },
      function (v) { return removeAll(v || [], list(this._value)); }),
    Relation: op('Relation', function () {
      var adds = list(this._value || []), removes = list(this._other || []);
      function ptrs(l) { return l.map(function (o) { return o.toPointer ? o.toPointer() : o; }); }
      if (adds.length && removes.length) {
        return { __op: 'Batch', ops: [{ __op: 'AddRelation', objects: ptrs(adds) }, { __op: 'RemoveRelation', objects: ptrs(removes) }] };
      }
      return adds.length ? { __op: 'AddRelation', objects: ptrs(adds) } : { __op: 'RemoveRelation', objects: ptrs(removes) };
    }, function (v) { return v; })
  };

  // sameValue compares two field values as Parse does for AddUnique and
  // Remove: objects by class and id, the rest by their JSON.
  function sameValue(a, b) {
    if (a instanceof ParseObject && b instanceof ParseObject) { return a.className === b.className && a.id === b.id; }
    return JSON.stringify(encode(a)) === JSON.stringify(encode(b));
  }
  function addUnique(arr, items) {
    var out = arr.slice();
    items.forEach(function (x) {
      if (!out.some(function (y) { return sameValue(x, y); })) { out.push(x); }
    });
    return out;
  }
  function removeAll(arr, items) {
    return arr.filter(function (y) { return !items.some(function (x) { return sameValue(x, y); }); });
  }
