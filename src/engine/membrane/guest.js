// Guest half of the membrane: host objects appear as proxies whose traps cross into the host
// through the native functions in `N`. Called once per realm (a template's serves every run
// derived from it); what it returns is frozen and reachable only from the host. Each run gets
// its own state object from `begin()` (its proxies, callbacks and pending promises), passed as
// `run` to everything below, so nothing of one run is reachable from another. `P` is the wire
// protocol, defined in membrane.rs: value tags (`P.tag`), handle kinds (`P.kind`), `desc`
// answers (`P.presence`).
//
// Host primordials never cross (the host refuses them). A method of a host built-in prototype
// read from a host object (`hostArray.map`) arrives as a token: the guest gets a frozen guest
// function that asks the host to call that method on a host object the guest holds.
(function (N, P) {
  'use strict';
  const TAG = P.tag,
    KIND = P.kind,
    PRESENCE = P.presence,
    maxDepth = P.maxDepth;
  const { apply, getPrototypeOf, isExtensible, getOwnPropertyDescriptor: reflectGetOwnPropertyDescriptor } = Reflect;
  const { defineProperty, keys: objectKeys, freeze } = Object;
  const isArray = Array.isArray;
  const ProxyCtor = Proxy,
    PromiseCtor = Promise,
    MapCtor = Map,
    WeakMapCtor = WeakMap,
    SetCtor = Set;
  const ErrorCtors = {
    __proto__: null,
    Error,
    TypeError,
    RangeError,
    SyntaxError,
    ReferenceError,
    EvalError,
    URIError,
  };
  const mapGet = Map.prototype.get,
    mapSet = Map.prototype.set,
    mapDelete = Map.prototype.delete;
  const weakGet = WeakMap.prototype.get,
    weakSet = WeakMap.prototype.set;
  const setHas = Set.prototype.has,
    setAdd = Set.prototype.add,
    setDelete = Set.prototype.delete;
  const dateTime = Date.prototype.getTime;
  const isView = ArrayBuffer.isView,
    DataViewCtor = DataView;
  const bufferLength = reflectGetOwnPropertyDescriptor(ArrayBuffer.prototype, 'byteLength').get;
  const isArrayBuffer = (v) => {
    try {
      apply(bufferLength, v, []);
      return true;
    } catch {
      return false;
    }
  };
  const mapEntries = Map.prototype.entries,
    setValues = Set.prototype.values;
  const arrayPush = Array.prototype.push;
  const WELL_KNOWN = new MapCtor([
    [Symbol.iterator, 'iterator'],
    [Symbol.asyncIterator, 'asyncIterator'],
    [Symbol.toPrimitive, 'toPrimitive'],
    [Symbol.toStringTag, 'toStringTag'],
  ]);
  // Answered from the guest side, never forwarded (`P.blocked`): they would lead to host
  // prototypes or host constructors. A table without a prototype: a read is the cheapest test.
  const BLOCKED = { __proto__: null };
  for (let i = 0; i < P.blocked.length; i++) defineProperty(BLOCKED, P.blocked[i], { value: true });
  freeze(BLOCKED);

  // A proxy's handler carries its run and host id under these keys and inherits the traps of
  // its kind, which all proxies of that kind share. Handlers are never reachable from guest code,
  // and the targets stay empty (the console prints a proxy's target without running traps).
  const RUN = Symbol('run'),
    ID = Symbol('id');
  N.init(ID);
  const hasInstanceSymbol = Symbol.hasInstance;
  const bind = Function.prototype.bind;
  // Function targets are bound functions of this one: callable, constructible, and without an
  // own non-configurable `prototype` that the proxy invariants would force us to report.
  const NOOP = [function () {}][0]; // no inferred name: the console shows `[Function: bound ]`
  freeze(NOOP.prototype);
  freeze(NOOP);
  const wellKnown = (k) => apply(mapGet, WELL_KNOWN, [k]);
  const key = (k) => (typeof k === 'symbol' ? wellKnown(k) : k);
  const isSym = (k) => (typeof k === 'symbol' ? 1 : 0);
  const blocked = (k) => typeof k === 'string' && BLOCKED[k] === true;
  const refuse = (what) => {
    throw new TypeError(what + ' is not allowed on host objects');
  };

  function begin() {
    return {
      proxies: new MapCtor(), // host id -> proxy
      ids: new WeakMapCtor(), // proxy -> host id
      callbacks: undefined, // callback id -> guest function
      callbackIds: undefined, // guest function -> callback id
      pending: undefined, // settle id -> [resolve, reject]
      methods: undefined, // method token -> guest stand-in
      hasInstance: undefined,
      nextCallback: 1,
      nextSettle: 1,
    };
  }

  function hostError(name, message) {
    const C = ErrorCtors[name] || Error;
    const e = new C(message);
    if (e.name !== name) defineProperty(e, 'name', { value: String(name), writable: true, configurable: true });
    return e;
  }

  function into(run, x) {
    if (typeof x !== 'object' || x === null) return x;
    const id = x[0],
      kind = x[1];
    if (kind === KIND.data) return id;
    if (kind === KIND.method) return method(run, id);
    if (kind === KIND.promise) {
      return new PromiseCtor((resolve, reject) => {
        if (run.pending === undefined) run.pending = new MapCtor();
        const s = run.nextSettle++;
        apply(mapSet, run.pending, [s, [resolve, reject]]);
        N.then(id, s);
      });
    }
    return wrap(run, id, kind);
  }

  function out(run, v, depth, seen) {
    switch (typeof v) {
      case 'undefined':
      case 'boolean':
      case 'number':
      case 'string':
      case 'bigint':
        return v;
      case 'symbol':
        throw new TypeError('a symbol cannot be passed to the host');
    }
    if (v === null) return null;
    const id = apply(weakGet, run.ids, [v]);
    if (id !== undefined) return [TAG.ref, id];
    if (typeof v === 'function') {
      if (run.callbacks === undefined) {
        run.callbacks = new MapCtor();
        run.callbackIds = new WeakMapCtor();
      }
      let cb = apply(weakGet, run.callbackIds, [v]);
      if (cb === undefined) {
        cb = run.nextCallback++;
        apply(mapSet, run.callbacks, [cb, v]);
        apply(weakSet, run.callbackIds, [v, cb]);
      }
      return [TAG.callback, cb];
    }
    if (depth > maxDepth)
      throw new RangeError('a value passed to the host is nested deeper than ' + maxDepth + ' levels');
    if (apply(setHas, seen, [v])) throw new TypeError('a value passed to the host contains a cycle');
    apply(setAdd, seen, [v]);
    try {
      const d = depth + 1;
      if (isArray(v)) {
        const items = [];
        for (let i = 0; i < v.length; i++) apply(arrayPush, items, [out(run, v[i], d, seen)]);
        return [TAG.array, items];
      }
      if (v instanceof Date) return [TAG.date, apply(dateTime, v, [])];
      // Typed arrays and ArrayBuffers cross as the same kind of view over a copy of the bytes.
      if ((isView(v) && !(v instanceof DataViewCtor)) || isArrayBuffer(v)) return [TAG.bytes, v];
      if (v instanceof MapCtor) {
        const entries = [];
        for (const [k, x] of apply(mapEntries, v, []))
          apply(arrayPush, entries, [[out(run, k, d, seen), out(run, x, d, seen)]]);
        return [TAG.map, entries];
      }
      if (v instanceof SetCtor) {
        const items = [];
        for (const x of apply(setValues, v, [])) apply(arrayPush, items, [out(run, x, d, seen)]);
        return [TAG.set, items];
      }
      const entries = [];
      for (const k of objectKeys(v)) apply(arrayPush, entries, [[k, out(run, v[k], d, seen)]]);
      return [TAG.object, entries];
    } finally {
      apply(setDelete, seen, [v]);
    }
  }
  const send = (run, v) => out(run, v, 0, new SetCtor());
  const sendAll = (run, args) => {
    const r = [];
    for (let i = 0; i < args.length; i++) apply(arrayPush, r, [send(run, args[i])]);
    return r;
  };

  // `x instanceof HostClass`: the proxy's target has no `prototype`, so the check is asked of the
  // host. Only proxies can be instances of a host class; anything else is false without copying.
  // One per run, made when first read.
  function hasInstanceOf(run) {
    if (run.hasInstance !== undefined) return run.hasInstance;
    const f = {
      [hasInstanceSymbol](v) {
        const self = apply(weakGet, run.ids, [this]);
        if (self === undefined || apply(weakGet, run.ids, [v]) === undefined) return false;
        const check = into(run, N.get(self, 'hasInstance', 1));
        return typeof check === 'function' && apply(check, this, [v]) === true;
      },
    }[hasInstanceSymbol];
    freeze(f);
    run.hasInstance = f;
    return f;
  }

  // The traps of one kind of proxy, shared by every proxy of that kind in every run: each finds
  // its proxy's run and host id on `this`, the proxy's own handler. `get` is native
  // (`N.getTrap`): it reads a property name from the host itself and calls `getOther` for
  // symbols and blocked names, `into` for an answer that is not a copied primitive.
  function handler(kind) {
    return freeze({
      get: N.getTrap,
      getOther(t, k) {
        if (typeof k === 'string') return t[k];
        if (k === hasInstanceSymbol) return kind === KIND.function ? hasInstanceOf(this[RUN]) : undefined;
        const name = wellKnown(k);
        if (name === undefined) return undefined;
        return into(this[RUN], N.get(this[ID], name, 1));
      },
      into(_t, x) {
        return into(this[RUN], x);
      },
      set(_t, k, v) {
        if (blocked(k)) refuse("setting '" + k + "'");
        const name = key(k);
        if (name === undefined) refuse('setting a symbol property');
        N.set(this[ID], name, isSym(k), send(this[RUN], v));
        return true;
      },
      has(t, k) {
        if (blocked(k)) return k in t;
        const name = key(k);
        return name === undefined ? false : N.has(this[ID], name, isSym(k));
      },
      deleteProperty(_t, k) {
        if (typeof k === 'symbol' || blocked(k)) refuse("deleting '" + String(k) + "'");
        return N.del(this[ID], k);
      },
      ownKeys(_t) {
        const names = [];
        const host = N.keys(this[ID]);
        for (let i = 0; i < host.length; i++) {
          if (!blocked(host[i])) apply(arrayPush, names, [host[i]]);
        }
        if (kind === KIND.array && !names.includes('length')) apply(arrayPush, names, ['length']);
        return names;
      },
      getOwnPropertyDescriptor(t, k) {
        if (typeof k === 'symbol') return undefined;
        // Same rule as `get`: a descriptor's value would otherwise hand out what `get` refuses
        // (a host function's `prototype`, for one).
        if (blocked(k)) return reflectGetOwnPropertyDescriptor(t, k);
        const run = this[RUN],
          id = this[ID];
        if (kind === KIND.array && k === 'length') {
          return { value: into(run, N.get(id, 'length', 0)), writable: true, enumerable: false, configurable: false };
        }
        const flags = N.desc(id, k);
        if (flags === PRESENCE.absent) return undefined;
        return {
          value: into(run, N.get(id, k, 0)),
          writable: true,
          enumerable: flags === PRESENCE.enumerable,
          configurable: true,
        };
      },
      defineProperty() {
        refuse('defineProperty');
      },
      getPrototypeOf(t) {
        return getPrototypeOf(t);
      },
      setPrototypeOf() {
        refuse('setPrototypeOf');
      },
      preventExtensions() {
        refuse('preventExtensions');
      },
      isExtensible(t) {
        return isExtensible(t);
      },
      apply(_t, thisArg, args) {
        const run = this[RUN];
        const self = apply(weakGet, run.ids, [thisArg]);
        return into(run, N.call(this[ID], self === undefined ? -1 : self, sendAll(run, args)));
      },
      construct(_t, args) {
        const run = this[RUN];
        return into(run, N.construct(this[ID], sendAll(run, args)));
      },
    });
  }
  const HANDLERS = [];
  HANDLERS[KIND.object] = handler(KIND.object);
  HANDLERS[KIND.function] = handler(KIND.function);
  HANDLERS[KIND.array] = handler(KIND.array);
  freeze(HANDLERS);

  // A host built-in method as a guest function: callable on host objects only, not
  // constructible, frozen, one per token and run (so `a.push === b.push` for two host arrays).
  function method(run, token) {
    if (run.methods === undefined) run.methods = new MapCtor();
    const known = apply(mapGet, run.methods, [token]);
    if (known !== undefined) return known;
    const f = {
      method(...args) {
        const self = apply(weakGet, run.ids, [this]);
        if (self === undefined) throw new TypeError('a host method can only be called on a host object');
        return into(run, N.method(token, self, sendAll(run, args)));
      },
    }.method;
    freeze(f);
    apply(mapSet, run.methods, [token, f]);
    return f;
  }

  function wrap(run, id, kind) {
    const known = apply(mapGet, run.proxies, [id]);
    if (known !== undefined) return known;
    const target = kind === KIND.function ? apply(bind, NOOP, [null]) : kind === KIND.array ? [] : {};
    const p = new ProxyCtor(target, { __proto__: HANDLERS[kind], [RUN]: run, [ID]: id });
    apply(mapSet, run.proxies, [id, p]);
    apply(weakSet, run.ids, [p, id]);
    return p;
  }

  return freeze({
    begin,
    wrap: into,
    invoke(run, cb, self, args) {
      const f = run.callbacks === undefined ? undefined : apply(mapGet, run.callbacks, [cb]);
      if (f === undefined) throw new TypeError('unknown sandbox callback');
      const guestArgs = [];
      for (let i = 0; i < args.length; i++) apply(arrayPush, guestArgs, [into(run, args[i])]);
      return send(run, apply(f, into(run, self), guestArgs));
    },
    settle(run, s, ok, value, name) {
      const p = run.pending === undefined ? undefined : apply(mapGet, run.pending, [s]);
      if (p === undefined) return;
      apply(mapDelete, run.pending, [s]);
      if (ok) p[0](into(run, value));
      else p[1](hostError(name, value));
    },
  });
});
