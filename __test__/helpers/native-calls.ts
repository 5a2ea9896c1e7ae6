// Counts every call from JavaScript into the native binding (lib/native/load.js): its functions,
// the static and prototype methods of its classes, and their constructors, with the bytes of the
// arguments and results that cross (strings as UTF-8, Buffers and typed arrays by length, objects
// and arrays walked). Install it before anything under lib/ is loaded: the library keeps
// references to the binding's functions taken at load time.
import { createRequire } from 'node:module';

const require = createRequire(__filename);

export interface NativeCallCounts {
  /** Calls, in all. */
  calls: number;
  /** Bytes of the arguments that went in. */
  bytesIn: number;
  /** Bytes of the results that came out (promises counted when they settle). */
  bytesOut: number;
  /** Calls per name (`SessionLedger#remaining`, `ZipWorkspace.fromZip`, `run`). */
  byName: Record<string, number>;
}

export interface NativeCallCounter {
  /** Starts counting from zero. */
  reset(): void;
  /** What has been counted since the last reset. */
  counts(): NativeCallCounts;
}

/** Bytes a value carries across the boundary; shared objects and cycles count once. */
export function crossingBytes(value: unknown, seen = new Set<object>()): number {
  if (typeof value === 'string') return Buffer.byteLength(value);
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return 8;
  if (value === null || value === undefined || typeof value === 'function' || typeof value === 'symbol') return 0;
  if (ArrayBuffer.isView(value)) return value.byteLength;
  if (value instanceof ArrayBuffer) return value.byteLength;
  if (seen.has(value)) return 0;
  seen.add(value);
  let total = 0;
  if (value instanceof Map) {
    for (const [k, v] of value) total += crossingBytes(k, seen) + crossingBytes(v, seen);
    return total;
  }
  for (const key of Object.keys(value)) {
    total += Buffer.byteLength(key) + crossingBytes((value as Record<string, unknown>)[key], seen);
  }
  return total;
}

let installed: NativeCallCounter | undefined;

/** Wraps the binding once per process and returns the counter. */
export function countNativeCalls(): NativeCallCounter {
  if (installed) return installed;
  const binding = require('../../lib/native/load.js') as Record<string, unknown>;
  let counts: NativeCallCounts = { calls: 0, bytesIn: 0, bytesOut: 0, byName: {} };
  const note = (name: string, args: unknown[]) => {
    counts.calls += 1;
    counts.byName[name] = (counts.byName[name] ?? 0) + 1;
    counts.bytesIn += crossingBytes(args);
  };
  const out = (result: unknown) => {
    const current = counts;
    if (result instanceof Promise) {
      result.then(
        (v) => {
          current.bytesOut += crossingBytes(v);
        },
        () => undefined,
      );
    } else {
      current.bytesOut += crossingBytes(result);
    }
    return result;
  };
  // napi-rs defines methods writable but not configurable: assign those, redefine the rest.
  const replace = (target: object, key: string, desc: PropertyDescriptor, name: string) => {
    if (typeof desc.value === 'function') {
      const counted = wrap(name, desc.value);
      if (desc.writable) (target as Record<string, unknown>)[key] = counted;
      else if (desc.configurable) Object.defineProperty(target, key, { ...desc, value: counted });
    } else if (desc.get && desc.configurable) {
      Object.defineProperty(target, key, { ...desc, get: wrap(name, desc.get) });
    }
  };
  const wrap = (name: string, fn: (...args: unknown[]) => unknown) =>
    function counted(this: unknown, ...args: unknown[]) {
      note(name, args);
      return out(fn.apply(this, args));
    };
  for (const [name, value] of Object.entries(binding)) {
    if (typeof value !== 'function') continue;
    const isClass = /^[A-Z]/.test(name) && typeof value.prototype === 'object';
    if (!isClass) {
      binding[name] = wrap(name, value as (...args: unknown[]) => unknown);
      continue;
    }
    const proto = value.prototype as object;
    for (const key of Object.getOwnPropertyNames(proto)) {
      if (key === 'constructor') continue;
      const desc = Object.getOwnPropertyDescriptor(proto, key);
      if (desc) replace(proto, key, desc, `${name}#${key}`);
    }
    // The class behind a proxy that counts `new` and its static methods (napi-rs defines them
    // neither writable nor configurable, so they cannot be replaced in place). The proxy's
    // target is a stand-in, so it may answer with wrappers; `prototype` and `instanceof` are
    // the class's own.
    const Native = value as (new (...args: unknown[]) => object) & Record<string, unknown>;
    const statics = new Map<PropertyKey, unknown>();
    const standIn = function standIn() {} as unknown as object;
    binding[name] = new Proxy(standIn, {
      get(_target, key) {
        if (key === 'prototype') return Native.prototype;
        const v = Reflect.get(Native, key);
        if (typeof v !== 'function' || typeof key !== 'string' || !Object.hasOwn(Native, key)) return v;
        if (!statics.has(key)) statics.set(key, wrap(`${name}.${String(key)}`, v.bind(Native)));
        return statics.get(key);
      },
      construct(_target, args, newTarget) {
        note(`new ${name}`, args);
        return out(Reflect.construct(Native, args, newTarget === binding[name] ? Native : newTarget)) as object;
      },
    });
  }
  installed = {
    reset() {
      counts = { calls: 0, bytesIn: 0, bytesOut: 0, byName: {} };
    },
    counts() {
      return { ...counts, byName: { ...counts.byName } };
    },
  };
  return installed;
}
