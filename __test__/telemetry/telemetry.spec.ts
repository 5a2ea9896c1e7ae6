// OpenTelemetry (DESIGN §9): spans and metrics recorded with the SDK's in-memory exporters, what
// they carry by default and with recordContent, and runs that behave the same without a
// provider or without the API.
import { createRequire } from 'node:module';
import * as api from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  configureTelemetry,
  run,
  runSync,
  Session,
  type SessionPolicy,
  workspaceTools,
  ZipWorkspace,
} from '../../lib/index.js';

// The module instance lib/index.js loaded (an import here would be another one).
const { setApiLoader } = createRequire(__filename)(
  '../../lib/telemetry/otel.js',
) as typeof import('../../lib/telemetry/otel.js');

const OPEN: SessionPolicy = { worldRules: { readOnly: false } };
// Markers placed in source, arguments, results and file contents: no attribute may hold one
// unless the host opted in.
const SECRET = 'secret-7f3a';

const spans = new InMemorySpanExporter();
const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
let metricExporter: InMemoryMetricExporter;
let reader: PeriodicExportingMetricReader;

/** A fresh meter provider per test, so each test's metrics start at zero. */
function registerMeterProvider() {
  metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  reader = new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 3_600_000 });
  api.metrics.disable();
  api.metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
}

function registerTracerProvider() {
  api.trace.disable();
  api.trace.setGlobalTracerProvider(tracerProvider);
}

beforeAll(() => {
  api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
});
afterAll(() => {
  api.trace.disable();
  api.metrics.disable();
  api.context.disable();
});
beforeEach(() => {
  registerTracerProvider();
  registerMeterProvider();
  spans.reset();
});
afterEach(() => {
  configureTelemetry({ enabled: true, recordContent: false });
  setApiLoader(() => require('@opentelemetry/api'));
});

type Point = { attributes: api.Attributes; value: number | { count: number; sum?: number } };

/** The data points of metric `name` as exported now. */
async function points(name: string): Promise<Point[]> {
  await reader.forceFlush();
  const last = metricExporter.getMetrics().at(-1);
  for (const scope of last?.scopeMetrics ?? []) {
    const metric = scope.metrics.find((m) => m.descriptor.name === name);
    if (metric) return metric.dataPoints as unknown as Point[];
  }
  return [];
}

/** The value of metric `name` at the point whose attributes include `attributes`. */
async function valueOf(name: string, attributes: api.Attributes = {}) {
  const found = (await points(name)).filter((p) => Object.entries(attributes).every(([k, v]) => p.attributes[k] === v));
  if (found.length === 0) return undefined;
  const v = found[0].value;
  return typeof v === 'number' ? v : v.count;
}

function finished(name?: string): ReadableSpan[] {
  const all = spans.getFinishedSpans();
  return name === undefined ? all : all.filter((s) => s.name === name);
}

function only(name: string): ReadableSpan {
  const found = finished(name);
  expect(found.map((s) => s.name)).toEqual([name]);
  return found[0];
}

function parentOf(span: ReadableSpan) {
  return span.parentSpanContext?.spanId;
}

/** Every attribute of every finished span, as one text. */
function allAttributes() {
  return JSON.stringify(finished().map((s) => s.attributes));
}

function world() {
  const ws = new ZipWorkspace();
  ws.writeFile('notes.txt', `the file holds ${SECRET}\n`);
  return ws;
}

describe('runs', () => {
  it('runSync: a quickrealm.run span with kind, limits and stats; counted with its duration', async () => {
    const r = runSync(`return '${SECRET}'.length`, { limits: { timeoutMs: 1000, steps: 5000 } });
    expect(r.ok).toBe(true);
    const span = only('quickrealm.run');
    expect(parentOf(span)).toBeUndefined();
    expect(span.attributes).toMatchObject({
      'quickrealm.run.kind': 'runSync',
      'quickrealm.run.mode': 'function',
      'quickrealm.run.live': false,
      'quickrealm.limits.timeout_ms': 1000,
      'quickrealm.limits.steps': 5000,
      'quickrealm.ok': true,
      'quickrealm.stats.steps': r.stats.steps,
      'quickrealm.stats.heap_bytes': r.stats.heapBytes,
      'quickrealm.stats.host_calls': 0,
      'quickrealm.stats.wall_ms': r.stats.wallMs,
    });
    expect(span.status.code).toBe(api.SpanStatusCode.UNSET);
    expect(allAttributes()).not.toContain(SECRET);
    expect(await valueOf('quickrealm.runs', { kind: 'runSync', ok: true })).toBe(1);
    expect(await valueOf('quickrealm.run.duration', { kind: 'runSync', ok: true })).toBe(1);
    const [duration] = await points('quickrealm.run.duration');
    const sum = (duration.value as { sum: number }).sum;
    // Seconds: a run of a few milliseconds is well under one.
    expect(sum).toBeGreaterThan(0);
    expect(sum).toBeLessThan(5);
  });

  it('a failed run: status ERROR with its code, error.type, counted by code; the message stays out', async () => {
    const r = await run(`throw new Error('${SECRET}')`);
    expect(r.error?.code).toBe('EVAL_ERROR');
    const span = only('quickrealm.run');
    expect(span.status).toEqual({ code: api.SpanStatusCode.ERROR, message: 'EVAL_ERROR' });
    expect(span.attributes).toMatchObject({ 'quickrealm.ok': false, 'error.type': 'EVAL_ERROR' });
    expect(allAttributes()).not.toContain(SECRET);
    expect(await valueOf('quickrealm.errors', { kind: 'run', code: 'EVAL_ERROR' })).toBe(1);
    expect(await valueOf('quickrealm.runs', { kind: 'run', ok: false })).toBe(1);
    const timedOut = await run('for (;;) {}', { limits: { timeoutMs: 50 } });
    expect(timedOut.error?.code).toBe('TIMEOUT');
    expect(finished('quickrealm.run')[1].attributes).toMatchObject({
      'error.type': 'TIMEOUT',
      'quickrealm.limits.timeout_ms': 50,
    });
    expect(await valueOf('quickrealm.errors', { kind: 'run', code: 'TIMEOUT' })).toBe(1);
  });

  it("a live run's span is active while host functions run: their spans are its children", async () => {
    const tracer = api.trace.getTracer('host');
    const lookup = (k: string) =>
      tracer.startActiveSpan('host lookup', (s) => {
        s.end();
        return `${k}!`;
      });
    const sync = runSync('return lookup("a")', { globals: { lookup } });
    const asyncRun = await run('return lookup("b")', { globals: { lookup } });
    expect([sync.value, asyncRun.value]).toEqual(['a!', 'b!']);
    const [first, second] = finished('quickrealm.run');
    const [inner1, inner2] = finished('host lookup');
    expect(first.attributes['quickrealm.run.live']).toBe(true);
    expect(parentOf(inner1)).toBe(first.spanContext().spanId);
    expect(parentOf(inner2)).toBe(second.spanContext().spanId);
  });

  it('exec: a quickrealm.exec span with entry path, exit code and stats; failures with their code', async () => {
    const ws = world();
    ws.writeFile('ok.js', "console.log(require('fs').readFileSync('notes.txt', 'utf8'));");
    ws.writeFile('exit.js', 'process.exit(3)');
    const ok = await ws.exec('ok.js', { limits: { memoryBytes: 32 * 1024 * 1024 } });
    expect(ok.stdout).toContain(SECRET);
    const failed = await ws.exec('exit.js');
    await expect(ws.exec('ok.js', { signal: 'no' as unknown as AbortSignal })).rejects.toMatchObject({
      code: 'INVALID_INPUT',
    });
    const [a, b, c] = finished('quickrealm.exec');
    expect(a.attributes).toMatchObject({
      'quickrealm.exec.entry_path': 'ok.js',
      'quickrealm.exec.exit_code': 0,
      'quickrealm.limits.memory_bytes': 32 * 1024 * 1024,
      'quickrealm.ok': true,
      'quickrealm.stats.steps': ok.stats.steps,
    });
    expect(a.attributes).not.toHaveProperty('quickrealm.stats.host_calls');
    expect(b.attributes).toMatchObject({ 'quickrealm.exec.exit_code': 3, 'error.type': failed.error?.code });
    expect(b.status).toEqual({ code: api.SpanStatusCode.ERROR, message: 'EVAL_ERROR' });
    expect(c.status).toEqual({ code: api.SpanStatusCode.ERROR, message: 'INVALID_INPUT' });
    expect(allAttributes()).not.toContain(SECRET);
    expect(await valueOf('quickrealm.runs', { kind: 'exec', ok: true })).toBe(1);
    expect(await valueOf('quickrealm.errors', { kind: 'exec', code: 'INVALID_INPUT' })).toBe(1);
  });
});

describe('session turns', () => {
  function session(calls: string[]) {
    const tracer = api.trace.getTracer('host');
    return new Session({
      policy: OPEN,
      workspace: world(),
      operations: {
        lookup: (key: string) =>
          tracer.startActiveSpan('lookup backend', (s) => {
            calls.push(key);
            s.end();
            return { found: `${key}:${SECRET}` };
          }),
        fails: () => {
          throw Object.assign(new Error(`backend down ${SECRET}`), { code: 'BACKEND_DOWN' });
        },
        'pay.send': { handler: (amount: number) => `paid ${amount}`, needsApproval: true },
      },
    });
  }

  it('a turn span with one execute_tool child per operation call; the handler’s own spans nest under it', async () => {
    const calls: string[] = [];
    const s = session(calls);
    const t = await s.executeTurn(
      `const a = await lookup('${SECRET}-arg'); const b = await lookup('x'); return a.found.length`,
    );
    expect(t.outcome.tag).toBe('ok');
    const turn = only('quickrealm.turn');
    expect(turn.attributes).toMatchObject({
      'quickrealm.session.id': s.id,
      'quickrealm.turn.number': 1,
      'quickrealm.turn.outcome': 'ok',
      'quickrealm.turn.resume': false,
    });
    const turnId = turn.spanContext().spanId;
    expect(parentOf(only('quickrealm.run'))).toBe(turnId);
    const ops = finished('execute_tool lookup');
    expect(ops).toHaveLength(2);
    expect(ops.map(parentOf)).toEqual([turnId, turnId]);
    expect(ops.map((o) => o.attributes)).toEqual([
      {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': 'lookup',
        'gen_ai.tool.type': 'function',
        'gen_ai.tool.call.id': `${s.id}:1:0`,
        'quickrealm.session.id': s.id,
        'quickrealm.turn.number': 1,
        'quickrealm.operation.seq': 0,
        'quickrealm.operation.rerun': false,
      },
      expect.objectContaining({ 'gen_ai.tool.call.id': `${s.id}:1:1`, 'quickrealm.operation.seq': 1 }),
    ]);
    const inner = finished('lookup backend');
    expect(inner.map(parentOf)).toEqual(ops.map((o) => o.spanContext().spanId));
    expect(new Set(finished().map((x) => x.spanContext().traceId)).size).toBe(1);
    expect(allAttributes()).not.toContain(SECRET);
    expect(await valueOf('quickrealm.turns', { outcome: 'ok' })).toBe(1);
    expect(await valueOf('quickrealm.turn.duration', { outcome: 'ok' })).toBe(1);
  });

  it('a failing operation: error.type and status ERROR on its span; the turn fails with its code', async () => {
    const s = session([]);
    const caught = await s.executeTurn('try { await fails() } catch (e) { return e.name }');
    expect(caught.outcome).toEqual({ tag: 'ok', value: 'Error' });
    const op = only('execute_tool fails');
    expect(op.attributes['error.type']).toBe('BACKEND_DOWN');
    expect(op.status).toEqual({ code: api.SpanStatusCode.ERROR, message: 'BACKEND_DOWN' });
    expect(await valueOf('quickrealm.errors', { kind: 'operation', code: 'BACKEND_DOWN' })).toBe(1);
    spans.reset();
    const bad = await s.executeTurn('null.x');
    const turn = only('quickrealm.turn');
    expect(turn.attributes).toMatchObject({ 'quickrealm.turn.number': 2, 'quickrealm.turn.outcome': 'error' });
    expect(turn.status).toEqual({ code: api.SpanStatusCode.ERROR, message: 'EVAL_ERROR' });
    expect(bad.outcome).toMatchObject({ code: 'EVAL_ERROR' });
    expect(await valueOf('quickrealm.errors', { kind: 'turn', code: 'EVAL_ERROR' })).toBe(1);
    expect(allAttributes()).not.toContain(SECRET);
  });

  it('approvals waiting: up when a turn pauses, down when decided or discarded; resume is marked', async () => {
    const s = session([]);
    const paused = await s.executeTurn('const a = await pay.send(5); return a');
    if (paused.outcome.tag !== 'needs-approval') throw new Error('expected a pause');
    expect(await valueOf('quickrealm.approvals.waiting')).toBe(1);
    expect(only('quickrealm.turn').attributes).toMatchObject({
      'quickrealm.turn.outcome': 'needs-approval',
      'quickrealm.turn.approvals_requested': 1,
    });
    expect(finished('execute_tool pay.send')).toEqual([]);
    s.approve(paused.outcome.requests[0].id);
    expect(await valueOf('quickrealm.approvals.waiting')).toBe(0);
    spans.reset();
    const done = await s.resume();
    expect(done?.outcome).toEqual({ tag: 'ok', value: 'paid 5' });
    const turn = only('quickrealm.turn');
    expect(turn.attributes).toMatchObject({ 'quickrealm.turn.resume': true, 'quickrealm.turn.number': 1 });
    expect(parentOf(only('execute_tool pay.send'))).toBe(turn.spanContext().spanId);

    const other = session([]);
    await other.executeTurn('await pay.send(1); await pay.send(2)');
    expect(await valueOf('quickrealm.approvals.waiting')).toBe(1);
    other.abort();
    expect(await valueOf('quickrealm.approvals.waiting')).toBe(0);
    expect(await valueOf('quickrealm.turns', { outcome: 'needs-approval' })).toBe(2);
  });
});

describe('tool calls', () => {
  it('one execute_tool span per call, failures with their code; no arguments or contents', async () => {
    const set = workspaceTools(world());
    const read = await set.dispatch('fs_read', { path: 'notes.txt' });
    expect(read.content).toContain(SECRET);
    const missing = await set.dispatch('fs_read', { path: `${SECRET}.txt` });
    expect(missing.code).toBe('NOT_FOUND');
    const [ok, failed] = finished('execute_tool fs_read');
    expect(ok.attributes).toEqual({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'fs_read',
      'gen_ai.tool.type': 'function',
      'quickrealm.ok': true,
    });
    expect(failed.attributes).toMatchObject({ 'quickrealm.ok': false, 'error.type': 'NOT_FOUND' });
    expect(failed.status).toEqual({ code: api.SpanStatusCode.ERROR, message: 'NOT_FOUND' });
    expect(allAttributes()).not.toContain(SECRET);
    expect(await valueOf('quickrealm.errors', { kind: 'tool', code: 'NOT_FOUND' })).toBe(1);
  });

  it("js_exec's run is a child of the tool call's span", async () => {
    const ws = world();
    ws.writeFile('main.js', 'console.log(1)');
    const answer = await workspaceTools(ws).dispatch('js_exec', { path: 'main.js' });
    expect(answer.ok).toBe(true);
    const tool = only('execute_tool js_exec');
    expect(parentOf(only('quickrealm.exec'))).toBe(tool.spanContext().spanId);
  });
});

describe('recordContent', () => {
  it('puts source, code, arguments, results and messages on spans once the host opts in', async () => {
    expect(configureTelemetry({ recordContent: true })).toEqual({ enabled: true, recordContent: true });
    runSync(`return '${SECRET}-source'`);
    await run(`throw new Error('${SECRET}-message')`);
    const [ok, failed] = finished('quickrealm.run');
    expect(ok.attributes['quickrealm.run.source']).toBe(`return '${SECRET}-source'`);
    expect(failed.attributes['quickrealm.error.message']).toContain(`${SECRET}-message`);
    const s = new Session({ policy: OPEN, operations: { echo: (x: string) => ({ echoed: x }) } });
    const code = `return await echo('${SECRET}-arg')`;
    await s.executeTurn(code);
    expect(only('quickrealm.turn').attributes['quickrealm.turn.code']).toBe(code);
    expect(only('execute_tool echo').attributes).toMatchObject({
      'gen_ai.tool.call.arguments': `["${SECRET}-arg"]`,
      'gen_ai.tool.call.result': `{"echoed":"${SECRET}-arg"}`,
    });
    await workspaceTools(world()).dispatch('fs_read', { path: 'notes.txt' });
    expect(only('execute_tool fs_read').attributes).toMatchObject({
      'gen_ai.tool.call.arguments': '{"path":"notes.txt"}',
      'gen_ai.tool.call.result': expect.stringContaining(SECRET),
    });
  });

  it('bad options throw INVALID_INPUT and change nothing', () => {
    expect(() => configureTelemetry({ recordContent: 'yes' as unknown as boolean })).toThrow(
      expect.objectContaining({ code: 'INVALID_INPUT', name: 'TypeError' }),
    );
    expect(() => configureTelemetry({ record: true } as never)).toThrow(
      /unknown configureTelemetry\(\) option 'record'/,
    );
    expect(() => configureTelemetry(null as never)).toThrow(expect.objectContaining({ code: 'INVALID_INPUT' }));
    expect(configureTelemetry()).toEqual({ enabled: true, recordContent: false });
  });
});

describe('without a provider, or without the API', () => {
  /** What a run, an exec, a turn and a tool call answer, less timings. */
  async function workload() {
    const strip = <T extends { stats?: unknown }>(r: T) => ({ ...r, stats: undefined });
    const ws = world();
    ws.writeFile('main.js', 'console.log(40 + 2)');
    const s = new Session({ id: 'same', policy: OPEN, operations: { add: (a: number, b: number) => a + b } });
    const turn = await s.executeTurn('return await add(1, 2)');
    return {
      sync: strip(runSync('return [1, 2].map((x) => x * 2)')),
      failed: strip(await run('null.x')),
      live: strip(await run('return f(2)', { globals: { f: (x: number) => x + 1 } })),
      exec: strip(await ws.exec('main.js')),
      turn: { ...turn, result: strip(turn.result) },
      tool: await workspaceTools(ws).dispatch('fs_read', { path: 'notes.txt' }),
    };
  }

  it('with providers registered, the workload is recorded (the baseline)', async () => {
    await workload();
    expect(finished().length).toBeGreaterThan(5);
    expect(await valueOf('quickrealm.runs', { kind: 'run', ok: false })).toBe(1);
  });

  it('no provider registered: the same answers, nothing recorded', async () => {
    const recorded = await workload();
    spans.reset();
    api.trace.disable();
    api.metrics.disable();
    const plain = await workload();
    expect(plain).toEqual(recorded);
    expect(finished()).toEqual([]);
    // The providers registered again are found again.
    registerTracerProvider();
    registerMeterProvider();
    runSync('return 1');
    expect(finished('quickrealm.run')).toHaveLength(1);
    expect(await valueOf('quickrealm.runs', { kind: 'runSync' })).toBe(1);
  });

  it('only a meter provider: metrics without spans', async () => {
    api.trace.disable();
    await run('null.x');
    const s = new Session({
      policy: OPEN,
      operations: {
        fails: () => {
          throw Object.assign(new Error('down'), { code: 'BACKEND_DOWN' });
        },
      },
    });
    const t = await s.executeTurn('try { await fails() } catch (e) { return e.message }');
    expect(t.outcome).toEqual({ tag: 'ok', value: 'down' });
    expect(finished()).toEqual([]);
    expect(await valueOf('quickrealm.errors', { kind: 'run', code: 'EVAL_ERROR' })).toBe(1);
    expect(await valueOf('quickrealm.errors', { kind: 'operation', code: 'BACKEND_DOWN' })).toBe(1);
    expect(await valueOf('quickrealm.turns', { outcome: 'ok' })).toBe(1);
  });

  it('enabled: false switches the instrumentation off while providers stay registered', async () => {
    configureTelemetry({ enabled: false });
    await workload();
    expect(finished()).toEqual([]);
    expect(await points('quickrealm.runs')).toEqual([]);
  });

  it('@opentelemetry/api missing: the same answers, nothing recorded, nothing thrown', async () => {
    const recorded = await workload();
    spans.reset();
    registerMeterProvider();
    let loads = 0;
    setApiLoader(() => {
      loads += 1;
      throw Object.assign(new Error("Cannot find module '@opentelemetry/api'"), { code: 'MODULE_NOT_FOUND' });
    });
    const plain = await workload();
    expect(plain).toEqual(recorded);
    expect(finished()).toEqual([]);
    expect(await points('quickrealm.runs')).toEqual([]);
    // Loaded once: a missing package is not looked for again on every run.
    expect(loads).toBe(1);
  });
});
