// Runs and workspace execs announce themselves on node:diagnostics_channel.
import dc from 'node:diagnostics_channel';
import { afterEach, describe, expect, it } from 'vitest';
import { run, runSync, ZipWorkspace } from '../lib/index.js';

type Message = Record<string, unknown>;
const seen: Array<[string, Message]> = [];
const onStart = (m: unknown) => seen.push(['start', m as Message]);
const onEnd = (m: unknown) => seen.push(['end', m as Message]);

afterEach(() => {
  dc.unsubscribe('quickrealm:run:start', onStart);
  dc.unsubscribe('quickrealm:run:end', onEnd);
  seen.length = 0;
});

describe('diagnostics_channel', () => {
  it('run, runSync and exec publish start and end with the outcome and stats', async () => {
    dc.subscribe('quickrealm:run:start', onStart);
    dc.subscribe('quickrealm:run:end', onEnd);
    runSync('return 1', { deterministic: true });
    await run('throw new TypeError("x")', { mode: 'function' });
    const ws = new ZipWorkspace();
    ws.writeFile('main.js', 'console.log(1)');
    await ws.exec('main.js');
    expect(seen.map(([phase, m]) => [phase, m.kind])).toEqual([
      ['start', 'runSync'],
      ['end', 'runSync'],
      ['start', 'run'],
      ['end', 'run'],
      ['start', 'exec'],
      ['end', 'exec'],
    ]);
    const [, syncStart] = seen[0] as [string, Message];
    expect(syncStart).toMatchObject({
      mode: 'function',
      sourceBytes: 8,
      live: false,
      workspace: false,
      deterministic: true,
    });
    const [, runEnd] = seen[3] as [string, Message];
    expect(runEnd).toMatchObject({ ok: false, code: 'EVAL_ERROR' });
    expect((runEnd.stats as { wallMs: number }).wallMs).toBeGreaterThanOrEqual(0);
    expect(seen[2]?.[1].id).toBe(runEnd.id);
    expect(seen[4]?.[1]).toMatchObject({ entryPath: 'main.js' });
    expect(seen[5]?.[1]).toMatchObject({ ok: true, code: null });
  });

  it('nothing is published without subscribers, and the source text never is', async () => {
    runSync('return "secret"');
    expect(seen).toEqual([]);
    dc.subscribe('quickrealm:run:start', onStart);
    runSync('return "secret"');
    expect(JSON.stringify(seen)).not.toMatch(/secret/);
  });
});
