// CommonJS for workspace files: `require`, `module.exports`, `exports`, `__filename`,
// `__dirname`, a per-run module cache (cycles see the partial exports, as in Node) and
// `require.main`. The host passes four native operations: resolve(from, id) -> module name,
// shim(name) -> the fs/path/os object or undefined, text(name) -> a file's text, compile(name)
// -> function (exports, require, module, __filename, __dirname) holding the file's code.
(ops) => {
  'use strict';
  const cache = new Map();
  let main;

  const dirnameOf = (name) => {
    const i = name.lastIndexOf('/');
    return i <= 1 ? '~' : name.slice(0, i);
  };

  const makeRequire = (from) => {
    const require = function require(id) {
      if (typeof id !== 'string') {
        throw new TypeError(`The "id" argument must be of type string. Received ${id === null ? 'null' : typeof id}`);
      }
      if (id === '') throw new TypeError("The argument 'id' must be a non-empty string. Received ''");
      return load(ops.resolve(from, id), false);
    };
    require.resolve = function resolve(id) {
      return ops.resolve(from, String(id));
    };
    Object.defineProperty(require, 'main', { get: () => main, enumerable: true, configurable: true });
    Object.defineProperty(require, 'cache', {
      get: () => Object.fromEntries(cache),
      enumerable: true,
      configurable: true,
    });
    return require;
  };

  const load = (name, isMain) => {
    const shim = ops.shim(name);
    if (shim !== undefined) return shim;
    const cached = cache.get(name);
    if (cached !== undefined) return cached.exports;
    if (name.endsWith('.json')) {
      const module = { id: name, filename: name, loaded: true, exports: undefined };
      try {
        module.exports = JSON.parse(ops.text(name));
      } catch (e) {
        if (e instanceof SyntaxError) throw new SyntaxError(`${name}: ${e.message}`);
        throw e;
      }
      cache.set(name, module);
      return module.exports;
    }
    const code = ops.compile(name);
    const module = {
      id: isMain ? '.' : name,
      filename: name,
      path: dirnameOf(name),
      loaded: false,
      exports: {},
      children: [],
      paths: [],
      require: makeRequire(name),
    };
    if (isMain) main = module;
    cache.set(name, module);
    let done = false;
    try {
      code.call(module.exports, module.exports, module.require, module, name, dirnameOf(name));
      done = true;
    } finally {
      // A module that threw is not cached: requiring it again runs it again, as in Node.
      if (!done) cache.delete(name);
    }
    module.loaded = true;
    return module.exports;
  };

  return { load, makeRequire };
};
