// @ts-nocheck: this function never runs on the host; its source text runs inside the realm.
'use strict';
// The prelude of a component script, as it runs in the realm (see prelude.js).

/** The data global that carries the state values in; the prelude deletes it before the script runs. */
const SPEC_GLOBAL = '__quickrealm_component_states';

/**
 * Runs in the realm. `script` is the model's code as an async arrow function whose source text
 * must be `expectedLength` characters long: a script that closes the arrow early (to declare
 * functions next to the prelude and shadow the built-ins it uses) ends it sooner, and is refused
 * before anything else runs. The check reads only a parameter and frozen built-ins.
 * No line comments inside: the function is joined onto one line.
 * @param {number} expectedLength
 * @param {() => Promise<unknown>} script
 */
function componentPrelude(expectedLength, script) {
  if (script.toString().length !== expectedLength) {
    throw new SyntaxError('the script closes a block it did not open (check its braces)');
  }
  const spec = globalThis.__quickrealm_component_states;
  delete globalThis.__quickrealm_component_states;
  const drafts = spec.values;
  const logs = {};
  const describeKey = (key) => {
    if (typeof key === 'symbol') return `[${String(key)}]`;
    if (/^(0|[1-9][0-9]*)$/.test(key)) return `[${key}]`;
    return /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
  };
  const readOnly = (name, path, what) => new TypeError(`${name} is read-only: cannot ${what} ${path}`);
  const writeOnly = (name, path, what) =>
    new TypeError(
      `${name} is write-only: cannot ${what} ${path} (assign whole top-level properties, e.g. ${name}.key = value)`,
    );
  const views = new WeakMap();
  const readOnlyView = (name, value, path) => {
    if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return value;
    const known = views.get(value);
    if (known !== undefined) return known;
    const child = (key) => path + describeKey(key);
    const view = new Proxy(value, {
      get(target, key) {
        return readOnlyView(name, Reflect.get(target, key), child(key));
      },
      getOwnPropertyDescriptor(target, key) {
        const desc = Reflect.getOwnPropertyDescriptor(target, key);
        if (desc !== undefined && 'value' in desc && desc.configurable) {
          desc.value = readOnlyView(name, desc.value, child(key));
        }
        return desc;
      },
      set(_target, key) {
        throw readOnly(name, child(key), 'set');
      },
      deleteProperty(_target, key) {
        throw readOnly(name, child(key), 'delete');
      },
      defineProperty(_target, key) {
        throw readOnly(name, child(key), 'define');
      },
      setPrototypeOf() {
        throw readOnly(name, path, 'change the prototype of');
      },
      preventExtensions() {
        throw readOnly(name, path, 'freeze or seal');
      },
    });
    views.set(value, view);
    return view;
  };
  const writeOnlyView = (name, log) => {
    const child = (key) => name + describeKey(key);
    const keyOf = (key, what) => {
      if (typeof key === 'symbol') throw new TypeError(`${name}: cannot ${what} a symbol-keyed property`);
      return key;
    };
    return new Proxy(
      {},
      {
        get(_target, key) {
          throw writeOnly(name, child(key), 'read');
        },
        has(_target, key) {
          throw writeOnly(name, child(key), 'test');
        },
        ownKeys() {
          throw writeOnly(name, name, 'list the keys of');
        },
        getOwnPropertyDescriptor(_target, key) {
          throw writeOnly(name, child(key), 'read');
        },
        getPrototypeOf() {
          throw writeOnly(name, name, 'read the prototype of');
        },
        set(_target, key, value) {
          log.push(['set', keyOf(key, 'set'), value]);
          return true;
        },
        deleteProperty(_target, key) {
          log.push(['delete', keyOf(key, 'delete')]);
          return true;
        },
        defineProperty(_target, key, desc) {
          if (!('value' in desc)) throw new TypeError(`${name}: cannot define an accessor at ${child(key)}`);
          log.push(['set', keyOf(key, 'define'), desc.value]);
          return true;
        },
        setPrototypeOf() {
          throw new TypeError(`${name}: cannot change the prototype of a state`);
        },
        preventExtensions() {
          throw new TypeError(`${name}: cannot freeze or seal a state`);
        },
      },
    );
  };
  const install = (name, get, set) =>
    Object.defineProperty(globalThis, name, { get, set, enumerable: true, configurable: false });
  for (const name of spec.rw) {
    install(
      name,
      () => drafts[name],
      (value) => {
        drafts[name] = value;
      },
    );
  }
  for (const name of spec.r) {
    const view = readOnlyView(name, drafts[name], name);
    install(
      name,
      () => view,
      () => {
        throw readOnly(name, name, 'assign');
      },
    );
  }
  for (const name of spec.w) {
    const log = [];
    logs[name] = log;
    const view = writeOnlyView(name, log);
    install(
      name,
      () => view,
      (value) => {
        log.push(['replace', value]);
      },
    );
  }
  return script().then(() => {
    const rw = {};
    for (const name of spec.rw) rw[name] = drafts[name];
    return { rw, w: logs };
  });
}

module.exports = { SPEC_GLOBAL, componentPrelude };
