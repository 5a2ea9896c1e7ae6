// Session turns whose code calls world.* with generated hostile arguments over a world of hostile
// files: a turn always ends with an outcome (never a rejection), and each turn stays within the
// host bounds of DESIGN §4.4.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Session } from '../../lib/index.js';
import { expectBounded, hostileJson, hostileText, inputSize, MiB, measure, PARAMS, PATHOLOGICAL } from './bounds.js';
import { hostileWorkspace } from './tools.js';

const OUTCOMES = ['ok', 'proposed', 'error', 'nonconverged', 'needs', 'needs-approval'];
const literal = (v: unknown) => JSON.stringify(v) ?? 'undefined';
const paths = hostileWorkspace().paths;
const path = fc.oneof(fc.constantFrom(...paths, ...PATHOLOGICAL), hostileText(MiB));
const options = fc.oneof(
  fc.record(
    { context: fc.integer({ min: 0, max: 1000 }), maxResults: fc.integer({ min: 1, max: 100_000 }) },
    { requiredKeys: [] },
  ),
  hostileJson,
);

/** One world.* call, as a line of turn code, with the argument bytes it carries. */
const worldCall: fc.Arbitrary<string> = fc.oneof(
  fc
    .tuple(fc.oneof(fc.constantFrom('a', 'abc', '\n', 'a\na'), hostileText(MiB)), options)
    .map(([q, o]) => `world.search(${literal(q)}, ${literal(o)})`),
  fc
    .tuple(fc.constantFrom('a', 'abc', 'deep'), fc.constantFrom('big.txt', 'wide', '.', '**/*.txt'))
    .map(([q, p]) => `world.search(${literal(q)}, { path: ${literal(p)}, context: 100, maxResults: 10000 })`),
  path.map((p) => `world.read(${literal(p)})`),
  path.map((p) => `world.list(${literal(p)})`),
  path.map((p) => `world.stat(${literal(p)})`),
  path.map((p) => `world.fingerprint(${literal(p)})`),
  fc.tuple(path, hostileText(4 * MiB)).map(([p, t]) => `world.write(${literal(p)}, ${literal(t)})`),
  path.map((p) => `world.mkdir(${literal(p)})`),
  path.map((p) => `world.delete(${literal(p)}, { recursive: true })`),
  fc.tuple(path, hostileJson).map(([p, o]) => `await world.exec(${literal(p)}, ${literal(o)})`),
  fc.constantFrom("await world.exec('src/main.js')"),
);

describe('session turns stay within the host bounds', () => {
  it(
    'world.* calls with hostile arguments',
    () =>
      fc.assert(
        fc.asyncProperty(fc.array(worldCall, { minLength: 1, maxLength: 3 }), async (calls) => {
          const { ws, bytes } = hostileWorkspace();
          const session = new Session({ workspace: ws, policy: { worldRules: { readOnly: false } } });
          const code = calls.map((c) => `try { out.push(${c}); } catch (e) { out.push(String(e)); }`).join('\n');
          const turn = await measure(() => session.executeTurn(`const out = [];\n${code}\nreturn out.length;`));
          const what = `turn ${code.slice(0, 300)}`;
          expect(OUTCOMES, what).toContain(turn.value.outcome.tag);
          expectBounded(what, turn, bytes + inputSize(code));
        }),
        PARAMS,
      ),
    240_000,
  );
});
