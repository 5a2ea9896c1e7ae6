// A corpus of everyday JavaScript, the kind models write when asked to compute, transform data
// or script something, run in the realm and in a fresh `node:vm` context; the JSON of the
// returned value and the printed console lines must be the same.
//
// The snippets live in corpus/*.snippets, one file per theme. Each starts at a line
//   ### name {flags}
// and is a function body (run in strict mode; `return` gives the value). Flags, comma-separated:
//   async        the body awaits: it runs as an async function (`run` in the realm)
//   needs PATH   uses a built-in the host Node may lack (Node 20 has no Object.groupBy, Set
//                methods or iterator helpers). Lines after the code give what V8 answers:
//                `--- value: JSON` and `--- log: LINE` (one per printed line). Where the host
//                Node has PATH, its own answer must match those lines too.
// Text before the first `###` is a comment.
//
// Console lines are compared without stack frames (`    at ...`), which name the harness's files.
// Snippets that differ from Node are listed in KNOWN_DIFFERENCES with the reason; their tests
// assert that the outputs still differ, so the list stays honest when a difference goes away.
// What the realm refuses by design (code from strings, mutating built-ins) is in BY_DESIGN.
import { Console } from 'node:console';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { run, runSync } from '../../lib/index.js';

interface Snippet {
  name: string;
  code: string;
  async: boolean;
  needs?: string;
  recorded?: Outcome;
}

/** What a snippet produced: the JSON text of its value (or its error) and its console lines. */
interface Outcome {
  value?: string;
  error?: string;
  logs: string[];
}

const DIR = join(__dirname, 'corpus');

function parse(file: string): Snippet[] {
  const out: Snippet[] = [];
  let cur: (Snippet & { lines: string[] }) | null = null;
  const flush = () => {
    if (!cur) return;
    const { lines, ...rest } = cur;
    out.push({ ...rest, code: lines.join('\n').trim() });
  };
  for (const line of readFileSync(join(DIR, file), 'utf8').split('\n')) {
    const head = /^### (.+?)(?: \{([^}]*)\})?$/.exec(line);
    if (head) {
      flush();
      const flags = (head[2] ?? '').split(',').map((f) => f.trim());
      const needs = flags.find((f) => f.startsWith('needs '))?.slice(6);
      cur = { name: head[1], code: '', async: flags.includes('async'), needs, lines: [] };
    } else if (cur && line.startsWith('--- value: ')) {
      cur.recorded = { ...cur.recorded, logs: cur.recorded?.logs ?? [], value: line.slice(11) };
    } else if (cur && line.startsWith('--- log: ')) {
      cur.recorded = { ...cur.recorded, logs: [...(cur.recorded?.logs ?? []), line.slice(9)] };
    } else if (cur) {
      cur.lines.push(line);
    }
  }
  flush();
  return out;
}

/** Stack frames name files and lines of the harness, which differ by nature: they are left out. */
function withoutFrames(lines: string[]): string[] {
  return lines.filter((l) => !/^\s+at /.test(l));
}

/** A Node console printing into memory, stdout and stderr interleaved as printed. */
function memoryConsole(): { console: Console; lines: () => string[] } {
  let text = '';
  const sink = new Writable({
    write(chunk, _encoding, done) {
      text += String(chunk);
      done();
    },
  });
  return {
    console: new Console({ stdout: sink, stderr: sink }),
    lines: () => withoutFrames(text === '' ? [] : text.replace(/\n$/, '').split('\n')),
  };
}

/** The host's versions of what the realm adds to the language (a `node:vm` context has none of them). */
function hostGlobals(console: Console): Record<string, unknown> {
  return {
    console,
    setTimeout,
    clearTimeout,
    setInterval,
    clearInterval,
    queueMicrotask,
    structuredClone,
    TextEncoder,
    TextDecoder,
    URL,
    URLSearchParams,
    btoa,
    atob,
  };
}

function describeError(e: unknown): string {
  const err = e as { name?: unknown; message?: unknown };
  return `${String(err?.name)}: ${String(err?.message)}`;
}

async function inNode(s: Snippet): Promise<Outcome> {
  const mem = memoryConsole();
  const context = vm.createContext(hostGlobals(mem.console));
  try {
    const value = s.async
      ? await vm.runInContext(
          `(async function () { 'use strict';\n${s.code}\n})().then((v) => JSON.stringify(v))`,
          context,
        )
      : vm.runInContext(`JSON.stringify((function () { 'use strict';\n${s.code}\n})())`, context);
    return { value, logs: mem.lines() };
  } catch (e) {
    return { error: describeError(e), logs: mem.lines() };
  }
}

async function inRealm(s: Snippet): Promise<Outcome> {
  const r = s.async
    ? await run(`return JSON.stringify(await (async function () {\n${s.code}\n})())`)
    : runSync(`return JSON.stringify((function () {\n${s.code}\n})())`);
  const logs = withoutFrames(r.logs.flatMap((l) => l.message.split('\n')));
  return r.ok ? { value: r.value as string, logs } : { error: describeError(r.error), logs };
}

function hostHas(path: string): boolean {
  try {
    return vm.runInNewContext(`typeof ${path} !== 'undefined'`) as boolean;
  } catch {
    return false;
  }
}

/** What Node answers, or for a built-in the host lacks, what V8 answered when recorded. */
async function expected(s: Snippet): Promise<Outcome> {
  if (!s.needs) {
    const outcome = await inNode(s);
    // A snippet that fails in Node would compare errors, not behaviour.
    expect(outcome.error, 'the snippet runs in Node').toBeUndefined();
    return outcome;
  }
  if (!s.recorded) throw new Error(`${s.name}: a snippet that needs ${s.needs} records its answer`);
  const recorded = { value: s.recorded.value, logs: s.recorded.logs };
  if (hostHas(s.needs)) expect(await inNode(s)).toEqual(recorded);
  return recorded;
}

/** Snippets of the corpus whose output differs from Node's, with why. */
const KNOWN_DIFFERENCES: Record<string, string> = {
  'sort with a comparator that returns a boolean':
    'implementation-defined: a comparator returning booleans is inconsistent, and V8 and QuickJS leave different orders',

  // not yet available in the realm
  'Intl.NumberFormat currency and compact notation':
    "not available: Intl.NumberFormat's style 'unit' (the realm's Intl throws RangeError for it)",
};

/**
 * Snippets that rely on what the realm refuses by design: code generated from strings, and
 * changes to the shared built-ins (they are frozen). Node runs each; the realm must answer with
 * the error named here, whose message contains the fragment.
 */
const BY_DESIGN: Record<string, { code: string; name: string; message: string }> = {
  'eval of a computed expression': {
    code: `const expr = '2 * (3 + 4)'; return eval(expr);`,
    name: 'ReferenceError',
    message: 'eval is not defined',
  },
  'new Function building an adder': {
    code: `const add = new Function('a', 'b', 'return a + b'); return add(2, 3);`,
    name: 'EvalError',
    message: 'Code generation from strings is disabled',
  },
  'a formula compiled with the Function constructor': {
    code: `const formulas = { area: 'w * h', perimeter: '2 * (w + h)' };
const compiled = Object.fromEntries(Object.entries(formulas).map(([k, f]) => [k, Function('w', 'h', 'return ' + f)]));
return compiled.area(3, 4) + compiled.perimeter(3, 4);`,
    name: 'EvalError',
    message: 'Code generation from strings is disabled',
  },
  'AsyncFunction constructor taken from an async arrow': {
    code: `const AsyncFunction = (async () => {}).constructor;
const fn = new AsyncFunction('x', 'return x * 2');
return typeof fn;`,
    name: 'EvalError',
    message: 'Code generation from strings is disabled',
  },
  'Array.prototype.sum helper': {
    code: `Array.prototype.sum = function () { return this.reduce((a, b) => a + b, 0); };
return [1, 2, 3].sum();`,
    name: 'TypeError',
    message: 'not extensible',
  },
  'String.prototype.capitalize helper': {
    code: `String.prototype.capitalize = function () { return this.charAt(0).toUpperCase() + this.slice(1); };
return ['hello', 'world'].map((w) => w.capitalize()).join(' ');`,
    name: 'TypeError',
    message: 'not extensible',
  },
  'Object.prototype method added for every object': {
    code: `Object.prototype.isEmpty = function () { return Object.keys(this).length === 0; };
return [{}.isEmpty(), { a: 1 }.isEmpty()];`,
    name: 'TypeError',
    message: 'not extensible',
  },
  'Array.prototype.last getter defined with defineProperty': {
    code: `Object.defineProperty(Array.prototype, 'last', { get() { return this[this.length - 1]; }, configurable: true });
return [1, 2, 3].last;`,
    name: 'TypeError',
    message: 'not extensible',
  },
  'Math.clamp polyfill': {
    code: `Math.clamp = (x, lo, hi) => Math.min(Math.max(x, lo), hi);
return [Math.clamp(5, 0, 3), Math.clamp(-1, 0, 3)];`,
    name: 'TypeError',
    message: 'not extensible',
  },
  'JSON.parse replaced by a lenient wrapper': {
    code: `const original = JSON.parse;
JSON.parse = (s) => { try { return original(s); } catch { return null; } };
return JSON.parse('{bad');`,
    name: 'TypeError',
    message: 'read-only',
  },
};

const FILES = readdirSync(DIR)
  .filter((f) => f.endsWith('.snippets'))
  .sort();
const CORPUS = FILES.map((file) => ({ file, snippets: parse(file) }));

describe('the corpus is well-formed', () => {
  it('has at least 220 snippets with unique names', () => {
    const names = CORPUS.flatMap((c) => c.snippets.map((s) => s.name));
    expect(names.length).toBeGreaterThanOrEqual(220);
    expect(new Set(names).size).toBe(names.length);
  });

  it('every known difference names a snippet of the corpus', () => {
    const names = new Set(CORPUS.flatMap((c) => c.snippets.map((s) => s.name)));
    expect(Object.keys(KNOWN_DIFFERENCES).filter((n) => !names.has(n))).toEqual([]);
  });
});

for (const { file, snippets } of CORPUS) {
  describe(`corpus: ${file}`, () => {
    for (const s of snippets) {
      const known = KNOWN_DIFFERENCES[s.name];
      if (known) {
        it(`${s.name} (differs: ${known})`, async () => {
          expect(await inRealm(s)).not.toEqual(await expected(s));
        });
      } else {
        it(s.name, async () => {
          expect(await inRealm(s)).toEqual(await expected(s));
        });
      }
    }
  });
}

describe('refused by design: Node runs these, the realm answers with the error', () => {
  for (const [name, { code, name: errorName, message }] of Object.entries(BY_DESIGN)) {
    const s: Snippet = { name, code, async: false };
    it(name, async () => {
      const node = await inNode(s);
      expect(node.error).toBeUndefined();
      const realm = await inRealm(s);
      expect(realm.value).toBeUndefined();
      expect(realm.error).toMatch(new RegExp(`^${errorName}: .*${message}`));
    });
  }
});
