// One path display: `ZipWorkspace.displayPath` is the workspace's own, and the model tools show
// paths through it.
import { describe, expect, it } from 'vitest';
import { workspaceTools, ZipWorkspace } from '../../lib/index.js';
import { thrown } from './helpers.js';

describe('ZipWorkspace.displayPath', () => {
  it('shows every accepted form as ~/path', () => {
    const cases: [string, string][] = [
      ['', '~/'],
      ['~', '~/'],
      ['/', '~/'],
      ['src/a.js', '~/src/a.js'],
      ['~/src/a.js', '~/src/a.js'],
      ['/src//a.js', '~/src/a.js'],
      ['./src/./x/../a.js', '~/src/a.js'],
      ['~foo/bar', '~/~foo/bar'],
      ['dir/', '~/dir'],
    ];
    for (const [input, shown] of cases) expect(ZipWorkspace.displayPath(input), input).toBe(shown);
  });

  it('refuses what the workspace refuses', () => {
    for (const bad of ['../x', '~/a/../../x', 'a\\b', 'a\0b', '.time/log.json', 'C:/x', 'a/'.repeat(100)]) {
      const e = thrown(() => ZipWorkspace.displayPath(bad));
      expect(e.code, bad).toBe('PATH_INVALID');
    }
    const e = thrown(() => ZipWorkspace.displayPath(42 as unknown as string));
    expect(e.code).toBe('INVALID_INPUT');
    expect(e.error).toBeInstanceOf(TypeError);
  });

  it('is what the tools show', async () => {
    const ws = new ZipWorkspace();
    const { dispatch } = workspaceTools(ws);
    const wrote = await dispatch('fs_write', { path: '/src//./app.js', content: 'x\n' });
    expect(wrote).toEqual({
      ok: true,
      content: `wrote 2 bytes to ${ZipWorkspace.displayPath('src/app.js')} (history #1)`,
    });
    expect(wrote.content).toContain('~/src/app.js');
    const listed = await dispatch('fs_list', { path: '~', recursive: true });
    expect(listed.content).toBe('~/src/\n~/src/app.js (2 bytes)');
    const stat = await dispatch('fs_stat', { path: '/' });
    expect(stat.content).toBe('~/: folder');
    const empty = await dispatch('fs_mkdir', { path: 'a/../empty' });
    expect(empty.content).toBe('created folder ~/empty (history #2)');
  });
});
