// The host bounds of DESIGN §4.4 as assertions, and the hostile inputs the properties draw from.
// Each call a model (or a guest) controls is measured alone: wall time, the peak growth of the
// process's resident memory while it ran (Linux's VmHWM, reset before the call, so native
// allocations freed before the call returns still count), and the size of its answer.
import { readFileSync, writeFileSync } from 'node:fs';
import fc from 'fast-check';
import { expect } from 'vitest';

/**
 * Runs per property: small by default so the folder stays within a few minutes on two cores;
 * `npm run test:property -- --runs 500` (or QUICKREALM_PROPERTY_RUNS=500) for a longer search.
 */
export const RUNS = Math.max(1, Number(process.env.QUICKREALM_PROPERTY_RUNS) || 6);
/** Replays a failure: `QUICKREALM_PROPERTY_SEED=<seed>` as fast-check printed it. */
const SEED = process.env.QUICKREALM_PROPERTY_SEED ? Number(process.env.QUICKREALM_PROPERTY_SEED) : undefined;

/** fast-check parameters shared by every property: no shrinking (a failing case may be slow). */
export const PARAMS: fc.Parameters<unknown> = { numRuns: RUNS, endOnFailure: true, ...(SEED ? { seed: SEED } : {}) };

/** The longest answer a tool gives: the 64 KiB content cap, its note, and a failure's hint. */
export const MAX_ANSWER_BYTES = 64 * 1024 + 8 * 1024;
/** Fixed cost allowed per call (a realm, a compiled schema, a debug build's slowness). */
const BASE_MS = 2000;
/** Linear cost allowed per input byte: 1 µs, generous for a debug build; a quadratic path on MBs takes minutes. */
const MS_PER_BYTE = 0.001;
/** Fixed memory allowed per call: a realm's heap and the runtime's own. */
const BASE_BYTES = 160 << 20;
/** Linear memory allowed per input byte: a few copies of the input (UTF-16 text, a parse, the answer). */
const BYTES_PER_BYTE = 8;

export const MiB = 1 << 20;

const gc = (globalThis as { gc?: () => void }).gc;

/** Resets the process's peak RSS to its current RSS; false where the kernel does not allow it. */
function resetPeak(): boolean {
  try {
    writeFileSync('/proc/self/clear_refs', '5');
    return true;
  } catch {
    return false;
  }
}

function peakRss(): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
    if (m) return Number(m[1]) * 1024;
  } catch {
    // no /proc: fall back to the RSS after the call
  }
  return process.memoryUsage().rss;
}

export interface Cost<T> {
  value: T;
  ms: number;
  /** Peak resident memory growth while the call ran, in bytes. */
  memoryGrowth: number;
}

/** Runs `call` alone and measures it. */
export async function measure<T>(call: () => Promise<T> | T): Promise<Cost<T>> {
  gc?.();
  const canPeak = resetPeak();
  const before = process.memoryUsage().rss;
  const started = performance.now();
  const value = await call();
  const ms = performance.now() - started;
  const after = canPeak ? peakRss() : process.memoryUsage().rss;
  return { value, ms, memoryGrowth: Math.max(0, after - before) };
}

/** Asserts the time and memory bounds for a call over `inputBytes` bytes of model-chosen input. */
export function expectBounded(what: string, cost: Cost<unknown>, inputBytes: number): void {
  const maxMs = BASE_MS + MS_PER_BYTE * inputBytes;
  const maxBytes = BASE_BYTES + BYTES_PER_BYTE * inputBytes;
  expect(cost.ms, `${what}: ${cost.ms.toFixed(0)} ms over ${inputBytes} input bytes`).toBeLessThan(maxMs);
  expect(
    cost.memoryGrowth,
    `${what}: +${(cost.memoryGrowth / MiB).toFixed(0)} MiB over ${inputBytes} input bytes`,
  ).toBeLessThan(maxBytes);
}

/** A tool call's answer: a ToolResult, never a throw, its content capped. */
export function expectToolResult(what: string, r: unknown): void {
  expect(r, what).toBeTypeOf('object');
  const result = r as { ok: unknown; content: unknown; code?: unknown };
  expect(typeof result.ok, what).toBe('boolean');
  expect(typeof result.content, what).toBe('string');
  if (result.ok === false) expect(typeof result.code, `${what}: a failure carries a code`).toBe('string');
  const bytes = Buffer.byteLength(result.content as string);
  expect(bytes, `${what}: answer of ${bytes} bytes`).toBeLessThanOrEqual(MAX_ANSWER_BYTES);
}

/** Bytes of a JSON-like value as a model would send it (strings counted by length, not re-encoded). */
export function inputSize(value: unknown): number {
  if (typeof value === 'string') return value.length;
  try {
    return JSON.stringify(value)?.length ?? 0;
  } catch {
    return 0;
  }
}

/** Patterns that make backtracking matchers, naive globbing or regex-built-from-text blow up. */
export const PATHOLOGICAL = [
  '*a*a*a*a*a*a*a*b',
  '**/**/**/**/**/**',
  '**/*a*a*a*a*a*a*c/**',
  '{a,b}{a,b}{a,b}{a,b}*?*?*?x',
  '[a-z]*[a-z]*[a-z]*[a-z]*!',
  '(a+)+$',
  '(a|aa)*b',
  '.*.*.*.*=.*',
  '\\\\\\\\\\\\',
  '%s%s%s%n',
  '../../../../etc/passwd',
  '~/../..',
];

/** Text sizes drawn, from empty to several MB. */
export const size = (max = 4 * MiB) =>
  fc.oneof(
    { weight: 3, arbitrary: fc.integer({ min: 0, max: 256 }) },
    { weight: 2, arbitrary: fc.integer({ min: 257, max: 64 * 1024 }) },
    { weight: 2, arbitrary: fc.integer({ min: 64 * 1024, max }) },
  );

/** Hostile text: long lines, many lines, repeated lines, pathological patterns, random Unicode. */
export const hostileText = (max = 4 * MiB): fc.Arbitrary<string> =>
  fc.oneof(
    fc.constantFrom(...PATHOLOGICAL),
    fc.string({ unit: 'grapheme', maxLength: 64 }),
    size(max).map((n) => 'a'.repeat(n)),
    size(max).map((n) => 'a\n'.repeat(Math.floor(n / 2))),
    fc
      .tuple(size(max), fc.string({ maxLength: 40 }))
      .map(([n, line]) => `${line}\n`.repeat(Math.ceil(n / (line.length + 1)))),
    fc.tuple(size(max), fc.constantFrom(...PATHOLOGICAL)).map(([n, p]) => p.repeat(Math.ceil(n / p.length))),
  );

/** Deep or wide JSON-like values. */
export const hostileJson: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 4 }),
  fc.integer({ min: 1, max: 1000 }).map((depth) => {
    let v: unknown = 'x';
    for (let i = 0; i < depth; i++) v = [v];
    return v;
  }),
  fc.integer({ min: 1, max: 100_000 }).map((n) => Array.from({ length: n }, (_, i) => i)),
  fc.integer({ min: 1, max: 20_000 }).map((n) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]))),
);

type Schema = Record<string, unknown>;

/** A value for one schema property: usually of the right type and often hostile, sometimes of any type. */
function valueFor(schema: Schema, pathLike: fc.Arbitrary<string>): fc.Arbitrary<unknown> {
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  const right: fc.Arbitrary<unknown>[] = [];
  if (Array.isArray(schema.enum)) right.push(fc.constantFrom(...schema.enum));
  for (const t of types) {
    if (t === 'string') right.push(pathLike, hostileText());
    if (t === 'integer' || t === 'number') {
      const min = typeof schema.minimum === 'number' ? schema.minimum : -3;
      const max = typeof schema.maximum === 'number' ? schema.maximum : 100_000;
      right.push(
        fc.integer({ min, max }),
        fc.constantFrom(min, max),
        fc.constantFrom(0, 1, 2 ** 31 - 1, 2 ** 32, Number.MAX_SAFE_INTEGER, -(2 ** 31)),
      );
    }
    if (t === 'boolean') right.push(fc.boolean());
    if (t === 'array') {
      const items = (schema.items ?? {}) as Schema;
      right.push(fc.array(valueFor(items, pathLike), { maxLength: 8 }));
      right.push(fc.integer({ min: 0, max: 50_000 }).map((n) => Array.from({ length: n }, () => 'a/../*')));
    }
    if (t === 'object') right.push(hostileJson.map((v) => (v !== null && typeof v === 'object' ? v : { v })));
  }
  if (right.length === 0) right.push(hostileText(), hostileJson);
  return fc.oneof({ weight: 6, arbitrary: fc.oneof(...right) }, { weight: 1, arbitrary: hostileJson });
}

/**
 * Arguments for a tool from its input schema: required properties always, optional ones often,
 * values of the right type and hostile content, now and then a stray property.
 */
export function argsFor(inputSchema: Schema, pathLike: fc.Arbitrary<string>): fc.Arbitrary<Record<string, unknown>> {
  const properties = (inputSchema.properties ?? {}) as Record<string, Schema>;
  const required = new Set(Array.isArray(inputSchema.required) ? (inputSchema.required as string[]) : []);
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [name, schema] of Object.entries(properties)) model[name] = valueFor(schema, pathLike);
  return fc
    .tuple(
      fc.record(model, { requiredKeys: [...required].filter((k) => k in model) }),
      fc.option(fc.dictionary(fc.string({ maxLength: 300 }), hostileJson, { maxKeys: 3 }), { freq: 5 }),
    )
    .map(([args, extra]) => (extra ? { ...extra, ...args } : args));
}
