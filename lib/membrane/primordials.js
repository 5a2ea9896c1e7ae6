// @ts-nocheck: reflection over host values of any shape; its contract is the security suite
// (__test__/security/primordials.spec.ts, membrane.spec.ts), not types.
//
// The host realm's primordials, captured once per Node environment by the host side of the
// membrane (src/napi/live.rs) and refused by identity wherever they would cross into a sandbox.
// Host-written; compiled into the addon and run with napi_run_script at the first live run of
// an environment, never required by JavaScript (so no module cache or loader hook can stand in
// for it), never reachable from guest code. Its completion value is the frozen helper object
// live.rs keeps for the life of the environment.
//
// Captured: the host global object; every ECMAScript built-in reachable from the global object
// and from the intrinsics only syntax reaches (generator and async function constructors,
// iterator prototypes, %ThrowTypeError%): constructors, prototypes, static and prototype methods,
// accessor functions and namespaces, followed through every own property; Node's own globals
// (process, console, Buffer, the web classes, timers, ...) followed through their functions,
// accessors and prototypes only, as user state hangs off some of them (process.mainModule,
// listeners); the module system (Module, its prototype and statics), plus any `module` object
// or `require` function, recognised when they cross.
//
// A function found as a method of a built-in prototype (Array.prototype.map, Map.prototype.get,
// %ArrayIteratorPrototype%.next, ...) is refused too, but a guest reading it from a host object
// receives a method token instead: a guest function that asks the host to call that built-in on
// a host object the guest already holds. Nothing of the function itself crosses.
// biome-ignore lint/complexity/useArrowFunction: a script's completion value; kept as written since it was reviewed
(function () {
  'use strict';
  const { apply, getPrototypeOf, ownKeys, getOwnPropertyDescriptor } = Reflect;
  const uncurry = Function.prototype.bind.bind(Function.prototype.call);
  const mapGet = uncurry(Map.prototype.get);
  const mapSet = uncurry(Map.prototype.set);
  const mapHas = uncurry(Map.prototype.has);
  const setHas = uncurry(Set.prototype.has);
  const setAdd = uncurry(Set.prototype.add);
  const arrayPush = uncurry(Array.prototype.push);
  const arrayPop = uncurry(Array.prototype.pop);
  const MapCtor = Map;
  const weakHas = uncurry(WeakSet.prototype.has);
  const weakAdd = uncurry(WeakSet.prototype.add);
  const host = globalThis;
  // Boxes made by `copyOf`: frozen, prototype-less, one data property `value`. What classify
  // answers for them (never an id, a token or 0).
  const copies = new WeakSet();
  const COPY = 0.5;

  // ECMAScript's global names: walked through every own property (built-ins hold no user state).
  const STANDARD = new Set([
    'Object',
    'Function',
    'Array',
    'Number',
    'parseFloat',
    'parseInt',
    'Boolean',
    'String',
    'Symbol',
    'Date',
    'Promise',
    'RegExp',
    'Error',
    'AggregateError',
    'EvalError',
    'RangeError',
    'ReferenceError',
    'SyntaxError',
    'TypeError',
    'URIError',
    'SuppressedError',
    'JSON',
    'Math',
    'Intl',
    'Reflect',
    'Atomics',
    'WebAssembly',
    'ArrayBuffer',
    'SharedArrayBuffer',
    'DataView',
    'Uint8Array',
    'Int8Array',
    'Uint16Array',
    'Int16Array',
    'Uint32Array',
    'Int32Array',
    'Float16Array',
    'Float32Array',
    'Float64Array',
    'Uint8ClampedArray',
    'BigUint64Array',
    'BigInt64Array',
    'Map',
    'BigInt',
    'Set',
    'WeakMap',
    'WeakSet',
    'Proxy',
    'FinalizationRegistry',
    'WeakRef',
    'Iterator',
    'AsyncIterator',
    'DisposableStack',
    'AsyncDisposableStack',
    'Temporal',
    'ShadowRealm',
    'decodeURI',
    'decodeURIComponent',
    'encodeURI',
    'encodeURIComponent',
    'escape',
    'unescape',
    'eval',
    'isFinite',
    'isNaN',
  ]);
  // Node's globals that are enumerable (user globals are too, so only these are taken).
  const NODE_ENUMERABLE = new Set([
    'clearImmediate',
    'setImmediate',
    'clearInterval',
    'clearTimeout',
    'setInterval',
    'setTimeout',
    'queueMicrotask',
    'structuredClone',
    'atob',
    'btoa',
    'performance',
    'fetch',
    'crypto',
    'navigator',
    'WebSocket',
    'require',
    'module',
  ]);
  // Lazy accessors of the global object whose value is read (others may warn or load modules).
  const READ_ACCESSOR = new Set(['process', 'atob', 'btoa', 'performance', 'crypto', 'navigator']);
  // Keys of built-in prototypes whose functions are never method tokens.
  const NOT_METHODS = new Set([
    'constructor',
    '__defineGetter__',
    '__defineSetter__',
    '__lookupGetter__',
    '__lookupSetter__',
  ]);

  const isObject = (v) => (typeof v === 'object' && v !== null) || typeof v === 'function';
  const DEEP = 1;
  const SHALLOW = 2;
  const PROTO = 4;
  const seen = new MapCtor(); // object -> the walk modes it was expanded with
  const notMethod = new Set(); // reached somewhere other than as a method of a built-in prototype
  const candidates = new Set(); // functions found as methods of built-in prototypes
  const overrideGetters = new Set(); // getters standing for a method (see `originalMethod`)
  const work = [];

  /**
   * Records `v` and queues it for expansion with `mode` (DEEP or SHALLOW, maybe PROTO); unless
   * `neutral`, `v` was reached as something other than a method and can never be a method token.
   */
  function reach(v, mode, neutral) {
    if (!isObject(v)) return;
    if (!neutral) setAdd(notMethod, v);
    const had = mapGet(seen, v) ?? 0;
    if (v === host) {
      mapSet(seen, v, had);
      return;
    }
    // Deep subsumes shallow: expand again only when the mode adds something, then with every
    // mode seen so far (a prototype reached again through a deep walk stays a prototype).
    const want = had & DEEP ? mode & ~SHALLOW : mode;
    if ((had | want) === had) return;
    const all = had | want;
    mapSet(seen, v, all);
    arrayPush(work, [v, all & DEEP ? all & ~SHALLOW : all]);
  }

  /**
   * The method an SES override-taming getter stands for (its own `originalValue` data property,
   * a function), or undefined for any other accessor.
   */
  function originalMethod(get) {
    if (typeof get !== 'function') return undefined;
    const d = getOwnPropertyDescriptor(get, 'originalValue');
    return d !== undefined && 'value' in d && typeof d.value === 'function' ? d.value : undefined;
  }

  /** Records `v` without following anything from it. */
  function record(v) {
    if (!isObject(v)) return;
    setAdd(notMethod, v);
    if (!mapHas(seen, v)) mapSet(seen, v, 0);
  }

  function expand(o, mode) {
    const deep = (mode & DEEP) !== 0;
    const base = deep ? DEEP : SHALLOW;
    const proto = (mode & PROTO) !== 0;
    reach(getPrototypeOf(o), base | PROTO, false);
    for (const k of ownKeys(o)) {
      const d = getOwnPropertyDescriptor(o, k);
      if (d === undefined) continue;
      if (!('value' in d)) {
        // A host locked down with SES's override taming turns methods of built-in prototypes
        // (`Array.prototype.push`, `toString`, ...) into accessors whose getter answers the
        // method and says so in its own `originalValue`: that method is still a method.
        const overridden = proto && typeof k === 'string' ? originalMethod(d.get) : undefined;
        if (overridden !== undefined) {
          setAdd(overrideGetters, d.get);
          if (!setHas(NOT_METHODS, k)) setAdd(candidates, overridden);
          reach(overridden, base, true);
        }
        reach(d.get, base, false);
        reach(d.set, base, false);
        continue;
      }
      // An override getter's `originalValue` was reached as the method it is (above).
      if (k === 'originalValue' && setHas(overrideGetters, o)) continue;
      const v = d.value;
      if (!isObject(v)) continue;
      // `F.prototype`, and %GeneratorFunction.prototype%.prototype (an object's `prototype`).
      const isProtoKey = k === 'prototype';
      // On a prototype: a function is a method; `constructor` and the legacy accessor helpers are
      // neither methods nor a reason to refuse (a function-declared method's own prototype
      // points back at it through `constructor`); they are refused unless a method elsewhere.
      const excluded = typeof k === 'string' && setHas(NOT_METHODS, k);
      const method = proto && typeof v === 'function' && !excluded;
      if (method) setAdd(candidates, v);
      const neutral = method || (proto && excluded);
      if (deep || typeof v === 'function' || isProtoKey) reach(v, isProtoKey ? base | PROTO : base, neutral);
      else record(v);
    }
  }

  function drain() {
    while (work.length > 0) {
      const [o, mode] = arrayPop(work);
      try {
        expand(o, mode);
      } catch {
        // An exotic object refused to be enumerated: it stays recorded.
      }
    }
  }

  // The global object's own properties.
  record(host);
  for (const k of ownKeys(host)) {
    const d = getOwnPropertyDescriptor(host, k);
    if (d === undefined) continue;
    const name = typeof k === 'string' ? k : '';
    if (d.enumerable && !setHas(NODE_ENUMERABLE, name)) continue;
    let v = d.value;
    if (!('value' in d)) {
      reach(d.get, SHALLOW, false);
      reach(d.set, SHALLOW, false);
      const first = name.charCodeAt(0);
      if (typeof d.get === 'function' && ((first >= 65 && first <= 90) || setHas(READ_ACCESSOR, name))) {
        try {
          v = apply(d.get, host, []);
        } catch {
          v = undefined;
        }
      }
    }
    reach(v, setHas(STANDARD, name) ? DEEP : SHALLOW, false);
  }

  // Intrinsics that only syntax reaches.
  const hidden = [
    () => getPrototypeOf(function* () {}),
    () => getPrototypeOf(async () => {}),
    () => getPrototypeOf(async function* () {}),
    () => getPrototypeOf([][Symbol.iterator]()),
    () => getPrototypeOf(new Map()[Symbol.iterator]()),
    () => getPrototypeOf(new Set()[Symbol.iterator]()),
    () => getPrototypeOf(''[Symbol.iterator]()),
    () => getPrototypeOf(/a/g[Symbol.matchAll]('')),
    () => getPrototypeOf(new Intl.Segmenter().segment('')),
    () => getPrototypeOf(new Intl.Segmenter().segment('')[Symbol.iterator]()),
    () => getPrototypeOf([].values().map((x) => x)),
    () => getPrototypeOf(Iterator.from({ next() {} })),
    () =>
      getOwnPropertyDescriptor(
        (function () {
          // biome-ignore lint/complexity/noArguments: a strict `arguments` object is how %ThrowTypeError% is reached
          return arguments;
        })(),
        'callee',
      ).get,
  ];
  for (const f of hidden) {
    try {
      reach(f(), DEEP | PROTO, false);
    } catch {
      // Not in this version of V8.
    }
  }
  drain();

  // The module system: everything it owns is refused, never a method token (module.require).
  let ModuleProto;
  let ModuleCache;
  let isProxy = () => false;
  try {
    const builtin = typeof process === 'object' && process !== null ? process.getBuiltinModule : undefined;
    const Module =
      typeof builtin === 'function' ? apply(builtin, process, ['module']) : process.mainModule?.constructor;
    const util = typeof builtin === 'function' ? apply(builtin, process, ['util']) : undefined;
    if (typeof util?.types?.isProxy === 'function') isProxy = util.types.isProxy;
    if (typeof Module === 'function') {
      ModuleProto = Module.prototype;
      ModuleCache = Module._cache;
      for (const o of [Module, ModuleProto]) {
        record(o);
        for (const k of ownKeys(o)) {
          const d = getOwnPropertyDescriptor(o, k);
          if (d === undefined) continue;
          if ('value' in d) record(d.value);
          else {
            record(d.get);
            record(d.set);
          }
        }
      }
    }
  } catch {
    // No module system to recognise.
  }

  const denied = new MapCtor(); // primordial -> 0 (refused) or -token (a method of a built-in prototype)
  const methods = [undefined];
  for (const v of seen.keys()) {
    if (typeof v === 'function' && setHas(candidates, v) && !setHas(notMethod, v)) {
      mapSet(denied, v, -methods.length);
      arrayPush(methods, v);
    } else {
      mapSet(denied, v, 0);
    }
  }

  // The host's code-making constructors: a host class extending one (`class F extends
  // Function {}`) compiles the text it is constructed with.
  const codeMakers = new Set();
  for (const f of [
    () => Function,
    () => getPrototypeOf(async () => {}).constructor,
    () => getPrototypeOf(function* () {}).constructor,
    () => getPrototypeOf(async function* () {}).constructor,
  ]) {
    try {
      setAdd(codeMakers, f());
    } catch {
      // Not in this version of V8.
    }
  }

  /** A `module` object or a `require` function of the host's module system. */
  function isLoader(v) {
    if (ModuleProto === undefined || !isObject(v) || isProxy(v)) return false;
    if (typeof v === 'function') {
      const d = getOwnPropertyDescriptor(v, 'cache');
      return d !== undefined && d.value === ModuleCache && ModuleCache !== undefined;
    }
    return getPrototypeOf(v) === ModuleProto;
  }

  return Object.freeze({
    /**
     * The crossing id of host object `v` in a run whose identity map is `ident`: its id when
     * known, 0 when refused, -token for a method of a built-in prototype, otherwise `next`,
     * now registered in `ident`.
     */
    classify(ident, v, next) {
      const id = mapGet(ident, v);
      if (id !== undefined) return id;
      const code = mapGet(denied, v);
      if (code !== undefined) return code;
      if (weakHas(copies, v)) return COPY;
      if (isLoader(v)) return 0;
      mapSet(ident, v, next);
      return next;
    },
    /** A box asking the membrane to hand the guest a copy of `value` instead of a proxy. */
    copyOf(value) {
      const box = Object.freeze(Object.create(null, { value: { value, enumerable: true } }));
      weakAdd(copies, box);
      return box;
    },
    /** Whether constructing `f` would run a host code-making constructor. */
    makesCode(f) {
      for (let o = f, depth = 0; isObject(o) && depth < 10000; depth++) {
        if (setHas(codeMakers, o)) return true;
        if (isProxy(o)) return false;
        o = getPrototypeOf(o);
      }
      return false;
    },
    /** Whether `v` is a host primordial (refused, whatever its kind). */
    isDenied(v) {
      return mapHas(denied, v) || isLoader(v);
    },
    /** Own property `key` of `o`: 0 absent, 1 enumerable, 2 not enumerable. */
    presence(o, key) {
      const d = getOwnPropertyDescriptor(o, key);
      if (d === undefined) return 0;
      return d.enumerable ? 1 : 2;
    },
    /** A fresh identity map for one run. */
    newIdentity() {
      return new MapCtor();
    },
    /** The well-known symbols the membrane translates, in the order live.rs names them. */
    symbols: [Symbol.iterator, Symbol.asyncIterator, Symbol.toPrimitive, Symbol.toStringTag, Symbol.hasInstance],
    methods,
    count: denied.size,
    tokens: methods.length - 1,
  });
})();
