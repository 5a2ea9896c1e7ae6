// onLog: console lines reach the host as the run prints them.
import { describe, expect, it } from 'vitest';
import { run, runSync } from '../lib/index.js';

describe('onLog', () => {
  it('a worker run delivers lines while it is still running', async () => {
    const arrivals: Array<[string, number]> = [];
    const started = Date.now();
    const r = await run(
      `console.log('first'); const t = Date.now(); while (Date.now() - t < 400) {} console.warn('second'); return 1`,
      { onLog: ({ message }) => arrivals.push([message, Date.now() - started]) },
    );
    const ended = Date.now() - started;
    expect(r.ok).toBe(true);
    // The second line may still be queued when the result arrives.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(arrivals.map(([m]) => m)).toEqual(['first', 'second']);
    expect(arrivals[0]?.[1]).toBeLessThan(ended - 200);
    expect(r.logs.map((l) => l.message)).toEqual(['first', 'second']);
  });

  it('levels and order are kept; runSync delivers when the thread is free', async () => {
    const lines: string[] = [];
    const r = runSync(`console.info('a'); console.error('b'); console.debug('c'); console.log({ d: 1 })`, {
      onLog: ({ level, message }) => lines.push(`${level}:${message}`),
    });
    expect(r.ok).toBe(true);
    expect(lines).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(lines).toEqual(['info:a', 'error:b', 'debug:c', 'log:{ d: 1 }']);
  });

  it('lines past the output cap are not delivered beyond what the run kept', async () => {
    const lines: string[] = [];
    const r = await run(`for (let i = 0; i < 100; i++) console.log('line ' + i)`, {
      limits: { outputBytes: 40 },
      onLog: ({ message }) => lines.push(message),
    });
    expect(r.error?.code).toBe('OUTPUT_LIMIT');
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(lines).toEqual(r.logs.map((l) => l.message));
  });

  it('a non-function is INVALID_INPUT', () => {
    const r = runSync('return 1', { onLog: 'yes' as unknown as () => void });
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.code).toBe('INVALID_INPUT');
      expect(r.error.message).toMatch(/onLog must be a function/);
    }
  });
});

describe('onLog on workspace runs', () => {
  it('ws.exec delivers console lines while the run is still running', async () => {
    const { ZipWorkspace } = await import('../lib/index.js');
    const ws = new ZipWorkspace();
    ws.writeFile(
      'main.ts',
      "console.log('start');\nconst t = Date.now(); while (Date.now() - t < 400) {}\nconsole.error('end');\nprocess.stdout.write('raw\\n');\n",
    );
    const arrivals: Array<[string, number]> = [];
    const started = Date.now();
    const r = await ws.exec('main.ts', {
      onLog: ({ level, message }) => arrivals.push([`${level}:${message}`, Date.now() - started]),
    });
    const ended = Date.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(r.stdout).toBe('start\nraw\n');
    expect(arrivals.map(([m]) => m)).toEqual(['log:start', 'error:end']);
    expect(arrivals[0]?.[1]).toBeLessThan(ended - 200);
    await expect(ws.exec('main.ts', { onLog: 42 as unknown as () => void })).rejects.toMatchObject({
      code: 'INVALID_INPUT',
    });
  });
});
