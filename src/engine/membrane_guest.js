// Guest half of the membrane: host objects appear as proxies whose traps cross into the host
// through the native functions in `N`. Evaluated by the host before lockdown; nothing here is
// reachable from guest code except the proxies and method stand-ins it creates. `P` is the wire
// protocol, defined in membrane.rs: value tags (`P.tag`), handle kinds (`P.kind`), `desc`
// answers (`P.presence`).
//
// Host primordials never cross (the host refuses them). A method of a host built-in prototype
// read from a host object (`hostArray.map`) arrives as a token: the guest gets a frozen guest
// function that asks the host to call that method on a host object the guest holds.
(function (N, P) {
  'use strict';
  const TAG = P.tag, KIND = P.kind, PRESENCE = P.presence, maxDepth = P.maxDepth;
  const { apply, ownKeys: reflectOwnKeys, getPrototypeOf, isExtensible, getOwnPropertyDescriptor: reflectGetOwnPropertyDescriptor } = Reflect;
  const { defineProperty, keys: objectKeys, freeze } = Object;
  const isArray = Array.isArray;
  const ProxyCtor = Proxy, PromiseCtor = Promise, MapCtor = Map, WeakMapCtor = WeakMap, SetCtor = Set;
  const ErrorCtors = { Error, TypeError, RangeError, SyntaxError, ReferenceError, EvalError, URIError };
  const mapGet = Map.prototype.get, mapSet = Map.prototype.set, mapDelete = Map.prototype.delete, mapHas = Map.prototype.has;
  const weakGet = WeakMap.prototype.get, weakSet = WeakMap.prototype.set;
  const setHas = Set.prototype.has, setAdd = Set.prototype.add, setDelete = Set.prototype.delete;
  const dateTime = Date.prototype.getTime;
  const isView = ArrayBuffer.isView, DataViewCtor = DataView;
  const bufferLength = reflectGetOwnPropertyDescriptor(ArrayBuffer.prototype, 'byteLength').get;
  const isArrayBuffer = (v) => { try { apply(bufferLength, v, []); return true; } catch { return false; } };
  const mapEntries = Map.prototype.entries, setValues = Set.prototype.values;
  const arrayFrom = Array.from, arrayPush = Array.prototype.push;
  const WELL_KNOWN = new MapCtor([
    [Symbol.iterator, 'iterator'], [Symbol.asyncIterator, 'asyncIterator'],
    [Symbol.toPrimitive, 'toPrimitive'], [Symbol.toStringTag, 'toStringTag'],
  ]);
  // Answered from the guest side, never forwarded: they would lead to host prototypes or
  // host constructors.
  const BLOCKED = new SetCtor(['__proto__', 'constructor', 'prototype', 'caller', 'callee', 'arguments',
    '__defineGetter__', '__defineSetter__', '__lookupGetter__', '__lookupSetter__']);

  const proxies = new MapCtor();     // host id -> proxy
  const ids = new WeakMapCtor();     // proxy -> host id
  const callbacks = new MapCtor();   // callback id -> guest function
  const callbackIds = new WeakMapCtor();
  const pending = new MapCtor();     // settle id -> [resolve, reject]
  const methods = new MapCtor();     // method token -> guest stand-in
  let nextCallback = 1, nextSettle = 1;

  const hasInstanceSymbol = Symbol.hasInstance;
  const wellKnown = (k) => apply(mapGet, WELL_KNOWN, [k]);
  const refuse = (what) => { throw new TypeError(what + ' is not allowed on host objects'); };

  function hostError(name, message) {
    const C = ErrorCtors[name] || Error;
    const e = new C(message);
    if (e.name !== name) defineProperty(e, 'name', { value: String(name), writable: true, configurable: true });
    return e;
  }

  function into(x) {
    if (typeof x !== 'object' || x === null) return x;
    const id = x[0], kind = x[1];
    if (kind === KIND.data) return id;
    if (kind === KIND.method) return method(id);
    if (kind === KIND.promise) {
      return new PromiseCtor((resolve, reject) => {
        const s = nextSettle++;
        apply(mapSet, pending, [s, [resolve, reject]]);
        N.then(id, s);
      });
    }
    return wrap(id, kind);
  }

  function out(v, depth, seen) {
    switch (typeof v) {
      case 'undefined': case 'boolean': case 'number': case 'string': case 'bigint': return v;
      case 'symbol': throw new TypeError('a symbol cannot be passed to the host');
    }
    if (v === null) return null;
    const id = apply(weakGet, ids, [v]);
    if (id !== undefined) return [TAG.ref, id];
    if (typeof v === 'function') {
      let cb = apply(weakGet, callbackIds, [v]);
      if (cb === undefined) {
        cb = nextCallback++;
        apply(mapSet, callbacks, [cb, v]);
        apply(weakSet, callbackIds, [v, cb]);
      }
      return [TAG.callback, cb];
    }
    if (depth > maxDepth) throw new RangeError('a value passed to the host is nested deeper than ' + maxDepth + ' levels');
    if (apply(setHas, seen, [v])) throw new TypeError('a value passed to the host contains a cycle');
    apply(setAdd, seen, [v]);
    try {
      const d = depth + 1;
      if (isArray(v)) {
        const items = [];
        for (let i = 0; i < v.length; i++) apply(arrayPush, items, [out(v[i], d, seen)]);
        return [TAG.array, items];
      }
      if (v instanceof Date) return [TAG.date, apply(dateTime, v, [])];
      // Typed arrays and ArrayBuffers cross as the same kind of view over a copy of the bytes.
      if ((isView(v) && !(v instanceof DataViewCtor)) || isArrayBuffer(v)) return [TAG.bytes, v];
      if (v instanceof MapCtor) {
        const entries = [];
        for (const [k, x] of apply(mapEntries, v, [])) apply(arrayPush, entries, [[out(k, d, seen), out(x, d, seen)]]);
        return [TAG.map, entries];
      }
      if (v instanceof SetCtor) {
        const items = [];
        for (const x of apply(setValues, v, [])) apply(arrayPush, items, [out(x, d, seen)]);
        return [TAG.set, items];
      }
      const entries = [];
      for (const k of objectKeys(v)) apply(arrayPush, entries, [[k, out(v[k], d, seen)]]);
      return [TAG.object, entries];
    } finally {
      apply(setDelete, seen, [v]);
    }
  }
  const send = (v) => out(v, 0, new SetCtor());

  // `x instanceof HostClass`: the proxy's target has no `prototype`, so the check is asked of the
  // host. Only proxies can be instances of a host class; anything else is false without copying.
  const hasInstance = ({
    [hasInstanceSymbol](v) {
      const self = apply(weakGet, ids, [this]);
      if (self === undefined || apply(weakGet, ids, [v]) === undefined) return false;
      const check = into(N.get(self, 'hasInstance', 1));
      return typeof check === 'function' && apply(check, this, [v]) === true;
    },
  })[hasInstanceSymbol];
  freeze(hasInstance);
  const sendAll = (args) => { const r = []; for (let i = 0; i < args.length; i++) apply(arrayPush, r, [send(args[i])]); return r; };

  function handler(id, kind) {
    const key = (k) => (typeof k === 'symbol' ? wellKnown(k) : k);
    const isSym = (k) => (typeof k === 'symbol' ? 1 : 0);
    return {
      get(t, k, receiver) {
        if (typeof k === 'string' && apply(setHas, BLOCKED, [k])) return t[k];
        if (k === hasInstanceSymbol) return kind === KIND.function ? hasInstance : undefined;
        const name = key(k);
        if (name === undefined) return undefined;
        return into(N.get(id, name, isSym(k)));
      },
      set(t, k, v) {
        if (typeof k === 'string' && apply(setHas, BLOCKED, [k])) refuse("setting '" + k + "'");
        const name = key(k);
        if (name === undefined) refuse('setting a symbol property');
        N.set(id, name, isSym(k), send(v));
        return true;
      },
      has(t, k) {
        if (typeof k === 'string' && apply(setHas, BLOCKED, [k])) return k in t;
        const name = key(k);
        return name === undefined ? false : N.has(id, name, isSym(k));
      },
      deleteProperty(t, k) {
        if (typeof k === 'symbol' || apply(setHas, BLOCKED, [k])) refuse("deleting '" + String(k) + "'");
        return N.del(id, k);
      },
      ownKeys(t) {
        const names = [];
        const host = N.keys(id);
        for (let i = 0; i < host.length; i++) {
          if (!apply(setHas, BLOCKED, [host[i]])) apply(arrayPush, names, [host[i]]);
        }
        if (kind === KIND.array && !names.includes('length')) apply(arrayPush, names, ['length']);
        return names;
      },
      getOwnPropertyDescriptor(t, k) {
        if (typeof k === 'symbol') return undefined;
        // Same rule as `get`: a descriptor's value would otherwise hand out what `get` refuses
        // (a host function's `prototype`, for one).
        if (apply(setHas, BLOCKED, [k])) return reflectGetOwnPropertyDescriptor(t, k);
        if (kind === KIND.array && k === 'length') {
          return { value: into(N.get(id, 'length', 0)), writable: true, enumerable: false, configurable: false };
        }
        const flags = N.desc(id, k);
        if (flags === PRESENCE.absent) return undefined;
        return { value: into(N.get(id, k, 0)), writable: true, enumerable: flags === PRESENCE.enumerable, configurable: true };
      },
      defineProperty() { refuse('defineProperty'); },
      getPrototypeOf(t) { return getPrototypeOf(t); },
      setPrototypeOf() { refuse('setPrototypeOf'); },
      preventExtensions() { refuse('preventExtensions'); },
      isExtensible(t) { return isExtensible(t); },
      apply(t, thisArg, args) {
        const self = apply(weakGet, ids, [thisArg]);
        return into(N.call(id, self === undefined ? -1 : self, sendAll(args)));
      },
      construct(t, args) { return into(N.construct(id, sendAll(args))); },
    };
  }

  // A host built-in method as a guest function: callable on host objects only, not
  // constructible, frozen, one per token (so `a.push === b.push` for two host arrays).
  function method(token) {
    const known = apply(mapGet, methods, [token]);
    if (known !== undefined) return known;
    const f = ({
      method(...args) {
        const self = apply(weakGet, ids, [this]);
        if (self === undefined) throw new TypeError('a host method can only be called on a host object');
        return into(N.method(token, self, sendAll(args)));
      },
    }).method;
    freeze(f);
    apply(mapSet, methods, [token, f]);
    return f;
  }

  function wrap(id, kind) {
    const known = apply(mapGet, proxies, [id]);
    if (known !== undefined) return known;
    // Function targets are bound functions: callable, constructible, and without an own
    // non-configurable `prototype` that the proxy invariants would force us to report.
    const target = kind === KIND.function ? apply(Function.prototype.bind, function () {}, [null]) : kind === KIND.array ? [] : {};
    const p = new ProxyCtor(target, handler(id, kind));
    apply(mapSet, proxies, [id, p]);
    apply(weakSet, ids, [p, id]);
    return p;
  }

  return freeze({
    wrap: into,
    invoke(cb, self, args) {
      const f = apply(mapGet, callbacks, [cb]);
      if (f === undefined) throw new TypeError('unknown sandbox callback');
      const guestArgs = [];
      for (let i = 0; i < args.length; i++) apply(arrayPush, guestArgs, [into(args[i])]);
      return send(apply(f, into(self), guestArgs));
    },
    settle(s, ok, value, name) {
      const p = apply(mapGet, pending, [s]);
      if (p === undefined) return;
      apply(mapDelete, pending, [s]);
      if (ok) p[0](into(value));
      else p[1](hostError(name, value));
    },
  });
})
