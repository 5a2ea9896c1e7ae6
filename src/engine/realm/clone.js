// structuredClone (HTML's structured serialization, for the types a realm has), over two native
// checks the host passes in: isProxy(v) and isPromise(v). Types are recognised by their internal
// slots (brand checks through the frozen intrinsics), never by Symbol.toStringTag or prototypes
// a value could fake. The clone is built in the realm's own heap, so the run's memory limit and
// deadline bound it.
(isProxy, isPromise) => {
  'use strict';
  const O = Object;
  const getOwnDesc = O.getOwnPropertyDescriptor;
  const uncurry =
    (f) =>
    (self, ...args) =>
      Reflect.apply(f, self, args);
  const getter = (proto, name) => uncurry(getOwnDesc(proto, name).get);
  const brand = (test) => (v) => {
    try {
      test(v);
      return true;
    } catch {
      return false;
    }
  };
  const dateTime = uncurry(Date.prototype.getTime);
  const regexpSource = getter(RegExp.prototype, 'source');
  const regexpFlags = getter(RegExp.prototype, 'flags');
  const numberValue = uncurry(Number.prototype.valueOf);
  const stringValue = uncurry(String.prototype.valueOf);
  const booleanValue = uncurry(Boolean.prototype.valueOf);
  const bigintValue = uncurry(BigInt.prototype.valueOf);
  const symbolValue = uncurry(Symbol.prototype.valueOf);
  const mapHas = uncurry(Map.prototype.has);
  const setHas = uncurry(Set.prototype.has);
  const mapEntries = uncurry(Map.prototype.entries);
  const setValues = uncurry(Set.prototype.values);
  const weakMapHas = uncurry(WeakMap.prototype.has);
  const weakSetHas = uncurry(WeakSet.prototype.has);
  const weakRefDeref = typeof WeakRef === 'function' ? uncurry(WeakRef.prototype.deref) : undefined;
  const registryUnregister =
    typeof FinalizationRegistry === 'function' ? uncurry(FinalizationRegistry.prototype.unregister) : undefined;
  const bufferByteLength = getter(ArrayBuffer.prototype, 'byteLength');
  const bufferResizable = getOwnDesc(ArrayBuffer.prototype, 'resizable')
    ? getter(ArrayBuffer.prototype, 'resizable')
    : () => false;
  const bufferMax = getOwnDesc(ArrayBuffer.prototype, 'maxByteLength')
    ? getter(ArrayBuffer.prototype, 'maxByteLength')
    : bufferByteLength;
  const bufferDetached = getOwnDesc(ArrayBuffer.prototype, 'detached')
    ? getter(ArrayBuffer.prototype, 'detached')
    : () => false;
  const bufferSlice = uncurry(ArrayBuffer.prototype.slice);
  const TypedArray = O.getPrototypeOf(Uint8Array);
  const typedName = getter(TypedArray.prototype, Symbol.toStringTag);
  const typedBuffer = getter(TypedArray.prototype, 'buffer');
  const typedOffset = getter(TypedArray.prototype, 'byteOffset');
  const typedLength = getter(TypedArray.prototype, 'length');
  const viewBuffer = getter(DataView.prototype, 'buffer');
  const viewOffset = getter(DataView.prototype, 'byteOffset');
  const viewLength = getter(DataView.prototype, 'byteLength');
  const isError = Error.isError;
  const isArray = Array.isArray;
  const TYPED = {
    Int8Array,
    Uint8Array,
    Uint8ClampedArray,
    Int16Array,
    Uint16Array,
    Int32Array,
    Uint32Array,
    Float32Array,
    Float64Array,
    BigInt64Array,
    BigUint64Array,
  };
  if (typeof Float16Array === 'function') TYPED.Float16Array = Float16Array;
  const ERRORS = { Error, EvalError, RangeError, ReferenceError, SyntaxError, TypeError, URIError };

  const isDate = brand(dateTime);
  const isRegExp = (v) => brand(regexpSource)(v) && v !== RegExp.prototype;
  const isMap = brand((v) => mapHas(v, undefined));
  const isSet = brand((v) => setHas(v, undefined));
  const isArrayBuffer = brand(bufferByteLength);
  const isDataView = brand(viewLength);
  // A data property as assignment would make it, without running setters (`__proto__` included).
  const define = (target, key, value) =>
    O.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
  const notCloneable = (what) => new DOMException(`${what} could not be cloned.`, 'DataCloneError');

  // The text V8 uses in its DataCloneError messages: a function's source, a symbol's
  // description, or #<Kind> for objects.
  const functionText = uncurry(Function.prototype.toString);
  const symbolText = uncurry(Symbol.prototype.toString);
  const describe = (v, kind = 'Object') => {
    if (typeof v === 'function') return functionText(v);
    if (typeof v === 'symbol') return symbolText(v);
    return `#<${kind}>`;
  };

  const cloneBuffer = (buffer, memory) => {
    if (memory.has(buffer)) return memory.get(buffer);
    if (bufferDetached(buffer)) throw notCloneable('A detached ArrayBuffer');
    let copy;
    if (bufferResizable(buffer)) {
      copy = new ArrayBuffer(bufferByteLength(buffer), { maxByteLength: bufferMax(buffer) });
      new Uint8Array(copy).set(new Uint8Array(buffer));
    } else {
      copy = bufferSlice(buffer, 0);
    }
    memory.set(buffer, copy);
    return copy;
  };

  const clone = (v, memory) => {
    if (typeof v === 'symbol' || typeof v === 'function') throw notCloneable(describe(v));
    if (typeof v !== 'object' || v === null) return v;
    if (memory.has(v)) return memory.get(v);
    if (isProxy(v)) throw notCloneable(describe(v));
    if (isPromise(v)) throw notCloneable(describe(v, 'Promise'));
    if (isArray(v)) {
      const out = new Array(v.length);
      memory.set(v, out);
      for (const key of O.keys(v)) define(out, key, clone(v[key], memory));
      return out;
    }
    if (isDate(v)) {
      const out = new Date(dateTime(v));
      memory.set(v, out);
      return out;
    }
    if (isRegExp(v)) {
      const out = new RegExp(regexpSource(v), regexpFlags(v));
      memory.set(v, out);
      return out;
    }
    for (const [read, box] of [
      [numberValue, (x) => new Number(x)],
      [stringValue, (x) => new String(x)],
      [booleanValue, (x) => new Boolean(x)],
      [bigintValue, (x) => O(x)],
    ]) {
      if (brand(read)(v)) {
        const out = box(read(v));
        memory.set(v, out);
        return out;
      }
    }
    if (brand(symbolValue)(v)) throw notCloneable('[object Symbol]');
    if (isArrayBuffer(v)) return cloneBuffer(v, memory);
    const typed = typedName(v);
    if (typed !== undefined) {
      const buffer = cloneBuffer(typedBuffer(v), memory);
      const out = new TYPED[typed](buffer, typedOffset(v), typedLength(v));
      memory.set(v, out);
      return out;
    }
    if (isDataView(v)) {
      const out = new DataView(cloneBuffer(viewBuffer(v), memory), viewOffset(v), viewLength(v));
      memory.set(v, out);
      return out;
    }
    if (isMap(v)) {
      const out = new Map();
      memory.set(v, out);
      const entries = [...mapEntries(v)];
      for (const [key, value] of entries) out.set(clone(key, memory), clone(value, memory));
      return out;
    }
    if (isSet(v)) {
      const out = new Set();
      memory.set(v, out);
      const values = [...setValues(v)];
      for (const value of values) out.add(clone(value, memory));
      return out;
    }
    if (isError(v)) {
      const nameDesc = O.getOwnPropertyDescriptor(v, 'name');
      const name = nameDesc === undefined ? v.name : nameDesc.value;
      const Ctor = O.hasOwn(ERRORS, name) ? ERRORS[name] : Error;
      const out = new Ctor();
      memory.set(v, out);
      const own = (key) => {
        const d = O.getOwnPropertyDescriptor(v, key);
        return d !== undefined && 'value' in d ? d : undefined;
      };
      const message = own('message');
      if (message !== undefined)
        O.defineProperty(out, 'message', { value: String(message.value), writable: true, configurable: true });
      const stack = v.stack;
      if (typeof stack === 'string')
        O.defineProperty(out, 'stack', { value: stack, writable: true, configurable: true });
      const cause = own('cause');
      if (cause !== undefined)
        O.defineProperty(out, 'cause', { value: clone(cause.value, memory), writable: true, configurable: true });
      return out;
    }
    const weak = [
      ['WeakMap', (x) => weakMapHas(x, {})],
      ['WeakSet', (x) => weakSetHas(x, {})],
      ['WeakRef', weakRefDeref],
      ['FinalizationRegistry', registryUnregister && ((x) => registryUnregister(x, {}))],
    ].find(([, test]) => test !== undefined && brand(test)(v));
    if (weak !== undefined) throw notCloneable(describe(v, weak[0]));
    const out = {};
    memory.set(v, out);
    for (const key of O.keys(v)) define(out, key, clone(v[key], memory));
    return out;
  };

  return function structuredClone(value, options = undefined) {
    if (arguments.length === 0) throw new TypeError('The "value" argument must be specified');
    if (options !== undefined && options !== null && typeof options === 'object') {
      const transfer = options.transfer;
      if (transfer !== undefined && [...transfer].length > 0) {
        throw notCloneable('Transferring');
      }
    }
    return clone(value, new Map());
  };
};
