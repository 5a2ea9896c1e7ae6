// @ts-nocheck: this function never runs on the host; its source text runs inside the realm.
'use strict';
// The prelude of a component script, as it runs in the realm (see prelude.js).

/** The data global that carries the state values in; the prelude deletes it before the script runs. */
const SPEC_GLOBAL = '__quickrealm_component_states';
/** The name of the async function the script becomes. */
const SCRIPT_FUNCTION = '__quickrealm_component_script';

/**
 * Runs in the realm, as the first statement of the run's source; `script` is the model's code as
 * a hoisted async function declared after it. Nothing of the script can run before this check:
 * a declaration runs no code, and whatever a script writes after closing its function early
 * (statements, a second declaration of the same name) comes later in the source. The function
 * declared under the script's name must be exactly `expectedLength` characters long; any other
 * function of that name is shorter, so a script that closes its function is refused here. The
 * built-ins the check uses are non-configurable globals, which no declaration can replace.
 * No line comments inside: the function is joined onto one line.
 * @param {number} expectedLength
 * @param {() => Promise<unknown>} script
 */
function componentPrelude(expectedLength, script) {
  if (typeof script !== 'function' || script.toString().length !== expectedLength) {
    throw new SyntaxError('the script closes a block it did not open (check its braces)');
  }
  Object.defineProperty(script, 'name', { value: '' });
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
    /* The host keeps at most spec.maxWrites writes per state; stopping the script at the next
       one names the state, where a longer log would only fail later, in the copy out. */
    const record = (entry) => {
      if (log.length >= spec.maxWrites)
        throw new RangeError(
          `${name}: more than ${spec.maxWrites} writes in one script; write the whole value at once`,
        );
      log.push(entry);
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
          record(['set', keyOf(key, 'set'), value]);
          return true;
        },
        deleteProperty(_target, key) {
          record(['delete', keyOf(key, 'delete')]);
          return true;
        },
        defineProperty(_target, key, desc) {
          if (!('value' in desc)) throw new TypeError(`${name}: cannot define an accessor at ${child(key)}`);
          record(['set', keyOf(key, 'define'), desc.value]);
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
  const completion = { calls: 0, result: undefined };
  const { stringify, parse } = JSON;
  const onlyData = (key, value) => {
    if (typeof value === 'function' || typeof value === 'symbol') {
      throw new TypeError(`${key === '' ? 'the result' : JSON.stringify(key)} is a ${typeof value}`);
    }
    return value;
  };
  const attemptCompletion = async (result) => {
    let text;
    try {
      text = stringify(result, onlyData);
    } catch (e) {
      throw new TypeError(`attempt_completion takes JSON data: ${e instanceof Error ? e.message : String(e)}`);
    }
    completion.calls += 1;
    completion.result = text === undefined ? undefined : parse(text);
  };
  Object.defineProperty(globalThis, 'attempt_completion', {
    value: attemptCompletion,
    writable: false,
    enumerable: true,
    configurable: false,
  });
  return script().then(() => {
    const rw = {};
    for (const name of spec.rw) rw[name] = drafts[name];
    return { rw, w: logs, completion };
  });
}

module.exports = { SPEC_GLOBAL, SCRIPT_FUNCTION, componentPrelude };
