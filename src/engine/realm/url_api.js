// URL and URLSearchParams (WHATWG URL Standard) over four native helpers the host passes in:
// parse(input, base?) -> components | null, set(href, component, value) -> components | null,
// formParse(string) -> [name, value, ...], formSerialize([name, value, ...]) -> string.
// Components are [href, origin, protocol, username, password, host, hostname, port, pathname,
// search, hash]. The host does the parsing; this file keeps the objects' state and the links
// between a URL and its searchParams.
(parse, set, formParse, formSerialize) => {
  'use strict';
  const HREF = 0;
  const NAMES = [
    'href',
    'origin',
    'protocol',
    'username',
    'password',
    'host',
    'hostname',
    'port',
    'pathname',
    'search',
    'hash',
  ];
  const urlState = new WeakMap();
  const paramsState = new WeakMap();
  const ObjectCtor = Object;
  const iteratorProto = Object.getPrototypeOf(Object.getPrototypeOf([][Symbol.iterator]()));

  const toUSV = (value) => {
    if (typeof value === 'symbol') throw new TypeError('Cannot convert a Symbol value to a string');
    return String(value);
  };
  const stateOf = (map, self, what) => {
    const state = map.get(self);
    if (state === undefined) throw new TypeError(`Value of "this" must be of type ${what}`);
    return state;
  };
  const invalidURL = (input) => {
    const e = new TypeError('Invalid URL');
    // Node's error carries the code and the input; models test for both.
    ObjectCtor.defineProperty(e, 'code', { value: 'ERR_INVALID_URL', writable: true, configurable: true });
    ObjectCtor.defineProperty(e, 'input', { value: input, writable: true, configurable: true, enumerable: true });
    return e;
  };

  // ---- URLSearchParams ----

  const flatten = (list) => {
    const flat = [];
    for (const [name, value] of list) flat.push(name, value);
    return flat;
  };
  const pairsOf = (query) => {
    const flat = formParse(query);
    const list = [];
    for (let i = 0; i < flat.length; i += 2) list.push([flat[i], flat[i + 1]]);
    return list;
  };
  // A URLSearchParams that belongs to a URL writes its list back into the URL's query.
  const updateURL = (state) => {
    const owner = state.url;
    if (owner === null) return;
    const serialized = formSerialize(flatten(state.list));
    const u = urlState.get(owner);
    const next = set(u.parts[HREF], 'search', serialized);
    if (next !== null) {
      u.parts = next;
      // An empty list leaves no '?' behind (the standard sets the query to null).
      if (serialized === '' && u.parts[9] === '') {
        const cleared = set(u.parts[HREF], 'search', '');
        if (cleared !== null) u.parts = cleared;
      }
    }
  };

  class URLSearchParams {
    constructor(init = undefined) {
      const state = { list: [], url: null };
      paramsState.set(this, state);
      if (init === undefined || init === null) return;
      if (typeof init === 'object' || typeof init === 'function') {
        if (paramsState.has(init)) {
          state.list = paramsState.get(init).list.map(([n, v]) => [n, v]);
          return;
        }
        const iterator = init[Symbol.iterator];
        if (iterator !== undefined && iterator !== null) {
          if (typeof iterator !== 'function') throw new TypeError('Query pairs must be iterable');
          for (const pair of init) {
            if ((typeof pair !== 'object' && typeof pair !== 'function') || pair === null) {
              throw new TypeError('Each query pair must be an iterable [name, value] tuple');
            }
            const items = [...pair];
            if (items.length !== 2) throw new TypeError('Each query pair must be an iterable [name, value] tuple');
            state.list.push([toUSV(items[0]), toUSV(items[1])]);
          }
          return;
        }
        for (const key of Reflect.ownKeys(init)) {
          const desc = Reflect.getOwnPropertyDescriptor(init, key);
          if (desc === undefined || !desc.enumerable) continue;
          if (typeof key === 'symbol') throw new TypeError('Cannot convert a Symbol value to a string');
          const name = toUSV(key);
          const value = toUSV(init[key]);
          const at = state.list.findIndex(([n]) => n === name);
          if (at === -1) state.list.push([name, value]);
          else state.list[at][1] = value;
        }
        return;
      }
      let query = toUSV(init);
      if (query.startsWith('?')) query = query.slice(1);
      state.list = pairsOf(query);
    }
    get size() {
      return stateOf(paramsState, this, 'URLSearchParams').list.length;
    }
    append(name, value) {
      const state = stateOf(paramsState, this, 'URLSearchParams');
      if (arguments.length < 2) throw new TypeError('The "name" and "value" arguments must be specified');
      state.list.push([toUSV(name), toUSV(value)]);
      updateURL(state);
    }
    delete(name, value = undefined) {
      const state = stateOf(paramsState, this, 'URLSearchParams');
      if (arguments.length < 1) throw new TypeError('The "name" argument must be specified');
      const n = toUSV(name);
      const v = value === undefined ? undefined : toUSV(value);
      state.list = state.list.filter(([ln, lv]) => !(ln === n && (v === undefined || lv === v)));
      updateURL(state);
    }
    get(name) {
      const state = stateOf(paramsState, this, 'URLSearchParams');
      if (arguments.length < 1) throw new TypeError('The "name" argument must be specified');
      const n = toUSV(name);
      const found = state.list.find(([ln]) => ln === n);
      return found === undefined ? null : found[1];
    }
    getAll(name) {
      const state = stateOf(paramsState, this, 'URLSearchParams');
      if (arguments.length < 1) throw new TypeError('The "name" argument must be specified');
      const n = toUSV(name);
      return state.list.filter(([ln]) => ln === n).map(([, v]) => v);
    }
    has(name, value = undefined) {
      const state = stateOf(paramsState, this, 'URLSearchParams');
      if (arguments.length < 1) throw new TypeError('The "name" argument must be specified');
      const n = toUSV(name);
      const v = value === undefined ? undefined : toUSV(value);
      return state.list.some(([ln, lv]) => ln === n && (v === undefined || lv === v));
    }
    set(name, value) {
      const state = stateOf(paramsState, this, 'URLSearchParams');
      if (arguments.length < 2) throw new TypeError('The "name" and "value" arguments must be specified');
      const n = toUSV(name);
      const v = toUSV(value);
      const first = state.list.findIndex(([ln]) => ln === n);
      if (first === -1) {
        state.list.push([n, v]);
      } else {
        state.list = state.list.filter(([ln], i) => i === first || ln !== n);
        state.list[first][1] = v;
      }
      updateURL(state);
    }
    sort() {
      const state = stateOf(paramsState, this, 'URLSearchParams');
      // Stable, by UTF-16 code units of the names, as the standard says.
      state.list = state.list
        .map((pair, i) => [pair, i])
        .sort(([a, i], [b, j]) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : i - j))
        .map(([pair]) => pair);
      updateURL(state);
    }
    forEach(callback, thisArg = undefined) {
      const state = stateOf(paramsState, this, 'URLSearchParams');
      if (typeof callback !== 'function') throw new TypeError('The "callback" argument must be of type function');
      for (let i = 0; i < state.list.length; i++) {
        const [name, value] = state.list[i];
        callback.call(thisArg, value, name, this);
      }
    }
    keys() {
      return listIterator(stateOf(paramsState, this, 'URLSearchParams'), 'keys');
    }
    values() {
      return listIterator(stateOf(paramsState, this, 'URLSearchParams'), 'values');
    }
    entries() {
      return listIterator(stateOf(paramsState, this, 'URLSearchParams'), 'entries');
    }
    toString() {
      return formSerialize(flatten(stateOf(paramsState, this, 'URLSearchParams').list));
    }
  }
  ObjectCtor.defineProperty(URLSearchParams.prototype, Symbol.iterator, {
    value: URLSearchParams.prototype.entries,
    writable: true,
    configurable: true,
  });
  ObjectCtor.defineProperty(URLSearchParams.prototype, Symbol.toStringTag, {
    value: 'URLSearchParams',
    configurable: true,
  });

  // Live iterators over the list, as the standard's iterators are (they see later changes).
  const iteratorState = new WeakMap();
  class URLSearchParamsIterator {
    next() {
      const it = stateOf(iteratorState, this, 'URLSearchParamsIterator');
      if (it.index >= it.state.list.length) return { value: undefined, done: true };
      const [name, value] = it.state.list[it.index++];
      const out = it.kind === 'keys' ? name : it.kind === 'values' ? value : [name, value];
      return { value: out, done: false };
    }
  }
  ObjectCtor.setPrototypeOf(URLSearchParamsIterator.prototype, iteratorProto);
  ObjectCtor.defineProperty(URLSearchParamsIterator.prototype, Symbol.toStringTag, {
    value: 'URLSearchParams Iterator',
    configurable: true,
  });
  const listIterator = (state, kind) => {
    const it = ObjectCtor.create(URLSearchParamsIterator.prototype);
    iteratorState.set(it, { state, kind, index: 0 });
    return it;
  };

  // ---- URL ----

  class URL {
    constructor(url, base = undefined) {
      if (arguments.length < 1) throw new TypeError('The "url" argument must be specified');
      const input = toUSV(url);
      const parts = base === undefined ? parse(input) : parse(input, toUSV(base));
      if (parts === null) throw invalidURL(input);
      const params = new URLSearchParams(parts[9]);
      const state = { parts, params };
      paramsState.get(params).url = this;
      urlState.set(this, state);
    }
    static canParse(url, base = undefined) {
      if (arguments.length < 1) throw new TypeError('The "url" argument must be specified');
      const input = toUSV(url);
      return (base === undefined ? parse(input) : parse(input, toUSV(base))) !== null;
    }
    static parse(url, base = undefined) {
      if (arguments.length < 1) throw new TypeError('The "url" argument must be specified');
      try {
        return base === undefined ? new URL(url) : new URL(url, base);
      } catch (e) {
        if (e instanceof TypeError) return null;
        throw e;
      }
    }
    get searchParams() {
      return stateOf(urlState, this, 'URL').params;
    }
    toString() {
      return stateOf(urlState, this, 'URL').parts[HREF];
    }
    toJSON() {
      return stateOf(urlState, this, 'URL').parts[HREF];
    }
  }
  NAMES.forEach((name, index) => {
    const get = {
      [name]() {
        return stateOf(urlState, this, 'URL').parts[index];
      },
    }[name];
    let setter;
    if (name !== 'origin') {
      setter = {
        [name](value) {
          const state = stateOf(urlState, this, 'URL');
          const v = toUSV(value);
          const next = set(state.parts[HREF], name, v);
          if (next === null) throw invalidURL(v);
          state.parts = next;
          if (name === 'href' || name === 'search') {
            paramsState.get(state.params).list = pairsOf(next[9].replace(/^\?/, ''));
          }
        },
      }[name];
    }
    // Accessor functions are named as the engine names them: 'get href', 'set href'.
    ObjectCtor.defineProperty(get, 'name', { value: `get ${name}` });
    if (setter !== undefined) ObjectCtor.defineProperty(setter, 'name', { value: `set ${name}` });
    ObjectCtor.defineProperty(URL.prototype, name, {
      get,
      set: setter,
      enumerable: true,
      configurable: true,
    });
  });
  ObjectCtor.defineProperty(URL.prototype, Symbol.toStringTag, { value: 'URL', configurable: true });

  return { URL, URLSearchParams };
};
