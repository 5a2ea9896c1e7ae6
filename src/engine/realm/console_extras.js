// console.table, count/countReset, time/timeEnd/timeLog and assert, formatted as Node prints
// them, over two native helpers: `line(level, text)` writes one (group-indented) console line
// `inspect(value)` formats a value as console.log shows it, `cell(value)` as a table cell, and
// `format(...args)` formats arguments as console.log does; `touch()` tells the host that
// per-run state (a counter or timer) now needs resetting when the run ends.
(console, line, inspect, cell, format, touch) => {
  'use strict';
  const perfNow = performance.now;
  const now = () => perfNow.call(performance);
  const hasOwn = Object.hasOwn;
  const keysOf = Object.keys;
  const isArray = Array.isArray;
  const formatArgs = (args) => args.map((a) => (typeof a === 'string' ? a : inspect(a))).join(' ');

  // Width in terminal columns, counted per code point (wide East Asian forms count 2).
  const widthOf = (text) => {
    let width = 0;
    for (const ch of text) {
      const cp = ch.codePointAt(0);
      width +=
        (cp >= 0x1100 && cp <= 0x115f) ||
        (cp >= 0x2e80 && cp <= 0xa4cf) ||
        (cp >= 0xac00 && cp <= 0xd7a3) ||
        (cp >= 0xf900 && cp <= 0xfaff) ||
        (cp >= 0xfe30 && cp <= 0xfe4f) ||
        (cp >= 0xff00 && cp <= 0xff60) ||
        (cp >= 0xffe0 && cp <= 0xffe6) ||
        (cp >= 0x1f300 && cp <= 0x1faff) ||
        (cp >= 0x20000 && cp <= 0x3fffd)
          ? 2
          : 1;
    }
    return width;
  };

  const renderTable = (head, columns) => {
    const widths = head.map(widthOf);
    const longest = Math.max(0, ...columns.map((c) => c.length));
    const rows = [];
    for (let i = 0; i < head.length; i++) {
      for (let j = 0; j < longest; j++) {
        rows[j] ??= [];
        const value = hasOwn(columns[i], j) ? columns[i][j] : '';
        rows[j][i] = value;
        widths[i] = Math.max(widths[i], widthOf(value));
      }
    }
    const row = (cells) => `│${cells.map((c, i) => ` ${c}${' '.repeat(widths[i] - widthOf(c))} `).join('│')}│`;
    const divider = widths.map((w) => '─'.repeat(w + 2));
    const out = [`┌${divider.join('┬')}┐`, row(head), `├${divider.join('┼')}┤`];
    for (const r of rows) out.push(row(r));
    out.push(`└${divider.join('┴')}┘`);
    return out.join('\n');
  };

  const table = function table(data, properties) {
    if (properties !== undefined && !isArray(properties)) {
      throw new TypeError('The "properties" argument must be an instance of Array');
    }
    if (data === null || typeof data !== 'object') {
      line('log', typeof data === 'string' ? data : inspect(data));
      return;
    }
    const indexOf = (n) => Array.from({ length: n }, (_, i) => cell(i));
    if (data instanceof Map) {
      const keys = [];
      const values = [];
      for (const [k, v] of data) {
        keys.push(cell(k));
        values.push(cell(v));
      }
      line('log', renderTable(['(iteration index)', 'Key', 'Values'], [indexOf(keys.length), keys, values]));
      return;
    }
    if (data instanceof Set) {
      const values = [];
      for (const v of data) values.push(cell(v));
      line('log', renderTable(['(iteration index)', 'Values'], [indexOf(values.length), values]));
      return;
    }
    const map = { __proto__: null };
    const primitives = [];
    let hasPrimitives = false;
    const index = keysOf(data);
    for (let i = 0; i < index.length; i++) {
      const item = data[index[i]];
      const primitive = item === null || (typeof item !== 'function' && typeof item !== 'object');
      if (properties === undefined && primitive) {
        hasPrimitives = true;
        primitives[i] = cell(item);
      } else {
        for (const key of properties || keysOf(item)) {
          map[key] ??= [];
          map[key][i] = (primitive && properties) || !hasOwn(item, key) ? '' : cell(item[key]);
        }
      }
    }
    const head = keysOf(map);
    const columns = head.map((k) => map[k]);
    if (hasPrimitives) {
      head.push('Values');
      columns.push(primitives);
    }
    line('log', renderTable(['(index)', ...head], [index, ...columns]));
  };

  const counts = new Map();
  const timers = new Map();
  const formatTime = (ms) => {
    if (ms >= 60000) {
      const h = Math.floor(ms / 3600000);
      const m = Math.floor((ms % 3600000) / 60000);
      const s = (ms % 60000) / 1000;
      return h > 0
        ? `${h}:${String(m).padStart(2, '0')}:${s.toFixed(3).padStart(6, '0')} (h:mm:ss.mmm)`
        : `${m}:${s.toFixed(3).padStart(6, '0')} (m:ss.mmm)`;
    }
    return ms >= 1000 ? `${(ms / 1000).toFixed(3)}s` : `${Number(ms.toFixed(3))}ms`;
  };

  const extras = {
    table,
    count: function count(label = 'default') {
      const key = `${label}`;
      touch();
      const n = (counts.get(key) ?? 0) + 1;
      counts.set(key, n);
      line('info', `${key}: ${n}`);
    },
    countReset: function countReset(label = 'default') {
      counts.delete(`${label}`);
    },
    time: function time(label = 'default') {
      const key = `${label}`;
      touch();
      if (!timers.has(key)) timers.set(key, now());
    },
    timeEnd: function timeEnd(label = 'default') {
      const key = `${label}`;
      if (!timers.has(key)) return;
      line('info', `${key}: ${formatTime(now() - timers.get(key))}`);
      timers.delete(key);
    },
    timeLog: function timeLog(label = 'default', ...data) {
      const key = `${label}`;
      if (!timers.has(key)) return;
      const tail = data.length > 0 ? ` ${formatArgs(data)}` : '';
      line('info', `${key}: ${formatTime(now() - timers.get(key))}${tail}`);
    },
    assert: function assert(condition, ...data) {
      if (condition) return;
      // Node builds the first argument as text, `Assertion failed: ${data[0]}`, and prints it
      // with the rest as console.warn would (format specifiers included).
      const head = data.length === 0 ? 'Assertion failed' : `Assertion failed: ${data[0]}`;
      line('warn', format(head, ...data.slice(1)));
    },
  };
  for (const name of keysOf(extras)) console[name] = extras[name];
  // Counters and timers belong to one run; a realm serving another run starts clean.
  return () => {
    counts.clear();
    timers.clear();
  };
};
