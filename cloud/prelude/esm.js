  // Prelude part esm.js: ES modules' completion (jsawait.go). esbuild's
  // rewrite of an ES module runs its body in an async function and hands
  // the promise to loaded(); while a top-level await keeps it running, the
  // module's exports are pending here and importers wait for them, as
  // Node evaluates a module's dependencies before the module itself.

  var pendingModules = new WeakMap();
  function isModuleObject(m) { return m !== null && (typeof m === 'object' || typeof m === 'function'); }
  global.__quarryESM = {
    // loaded: a body that threw before its first await throws from
    // require(), as CommonJS does; one still running is pending.
    loaded: function (module, done) {
      var state = native.promiseState(done);
      if (state.state === 'rejected') { throw state.result; }
      if (state.state === 'pending' && isModuleObject(module.exports)) {
        var exp = module.exports;
        pendingModules.set(exp, done.then(function () { pendingModules.delete(exp); return exp; }));
      }
    },
    isPending: function (m) { return isModuleObject(m) && pendingModules.has(m); },
    // ready is the promise of a pending module's exports.
    ready: function (m) { return pendingModules.get(m); },
    // dynamic is import(): the namespace once the module has finished.
    dynamic: function (load, namespace) {
      return Promise.resolve().then(load).then(function (m) {
        return isModuleObject(m) && pendingModules.has(m) ? pendingModules.get(m).then(namespace) : namespace(m);
      });
    }
  };

