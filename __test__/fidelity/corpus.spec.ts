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
    lines: () => (text === '' ? [] : text.replace(/\n$/, '').split('\n')),
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
  const logs = r.logs.flatMap((l) => l.message.split('\n'));
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
  if (!s.needs) return inNode(s);
  if (!s.recorded) throw new Error(`${s.name}: a snippet that needs ${s.needs} records its answer`);
  const recorded = { value: s.recorded.value, logs: s.recorded.logs };
  if (hostHas(s.needs)) expect(await inNode(s)).toEqual(recorded);
  return recorded;
}

/** Snippets of the corpus whose output differs from Node's, with why. */
const KNOWN_DIFFERENCES: Record<string, string> = {
  'localeCompare without locales for sorting names':
    'QuickJS compares code points in localeCompare (no collation): case and accents sort apart, numeric and sensitivity options are ignored',
  'structuredClone refuses functions':
    'by design: structuredClone follows the rules results are copied by, so a function nested in the value is dropped where Node throws',
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
