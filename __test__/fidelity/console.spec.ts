// console.table, group, count and assert print what Node prints: each snippet runs against a
// Node Console writing into memory, and inside the realm, and the lines are compared.
import { Console } from 'node:console';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { runSync } from '../../lib/index.js';

/** The lines a snippet prints through a Node Console (stdout and stderr, in order). */
function inNode(body: string): string[] {
  let text = '';
  const sink = new Writable({
    write(chunk, _encoding, done) {
      text += String(chunk);
      done();
    },
  });
  const console = new Console({ stdout: sink, stderr: sink });
  new Function('console', body)(console);
  return text.replace(/\n$/, '').split('\n');
}

function inRealm(body: string): string[] {
  const r = runSync(body);
  if (!r.ok) return [`error: ${r.error?.name}: ${r.error?.message}`];
  return r.logs.flatMap((l) => l.message.split('\n'));
}

const SNIPPETS: Record<string, string> = {
  'table of objects with different keys': `console.table([{ a: 1, b: 'x' }, { a: 22, c: true }])`,
  'table of an object of objects': `console.table({ r1: { a: 1 }, r2: { b: [1, 2] } })`,
  'table mixing primitives and objects': `console.table([1, 'two', { x: 3 }, null])`,
  'table of arrays': `console.table([[1, 2], [3]])`,
  'table of a Map and a Set': `console.table(new Map([['k', 1], ['j', { n: 2 }]])); console.table(new Set(['a', 'b']))`,
  'table with a property filter': `console.table([{ a: 1, b: 2 }, { b: 3 }], ['b'])`,
  'table of something not tabular': `console.table('plain'); console.table(42)`,
  'table of model-style rows': `console.table([{ name: 'Ada', age: 36, langs: ['en', 'fr'] }, { name: 'Linus', age: 54, langs: [] }])`,
  'groups indent every line': `console.group('Outer'); console.log('a'); console.group(); console.log('b\\nc'); console.table([{ x: 1 }]); console.groupEnd(); console.groupEnd(); console.log('d'); console.groupEnd(); console.log('e')`,
  'groupCollapsed prints like group': `console.groupCollapsed('Hidden', 2); console.warn('w'); console.groupEnd()`,
  'count and countReset': `console.count(); console.count(); console.count('x'); console.countReset(); console.count(); console.count('x')`,
  'assert prints only when the condition fails': `console.assert(1 === 2, 'math is', 'off'); console.assert(false); console.assert(true, 'never'); console.assert(0, { a: 1 }, 2); console.assert(false, 'value %d of %s', 3, 'x', { y: [1] })`,
};

describe('console extras print as Node prints', () => {
  for (const [name, body] of Object.entries(SNIPPETS)) {
    it(name, () => {
      expect(inRealm(body)).toEqual(inNode(body));
    });
  }

  it('time, timeLog and timeEnd print the label and the elapsed time', () => {
    const lines = inRealm(
      `console.time('t'); console.timeLog('t', 'half', 1); console.timeEnd('t'); console.timeEnd('t')`,
    );
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^t: \d+(\.\d+)?ms half 1$/);
    expect(lines[1]).toMatch(/^t: \d+(\.\d+)?ms$/);
  });

  it('console lines from tables count against the output cap', () => {
    const r = runSync('for (;;) console.table([{ a: "x".repeat(100) }])', { limits: { outputBytes: 4096 } });
    expect(r.error?.code).toBe('OUTPUT_LIMIT');
  });
});
