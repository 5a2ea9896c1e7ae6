// quickrealm/tools through the package's exports map, from CommonJS and ES modules, and the
// message a converter gives when its optional peer is missing.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadPeer } from '../../lib/tools/peers.js';

const ROOT = join(__dirname, '..', '..');

const NAMES = [
  'createToolSet',
  'restrictToolSet',
  'combineToolSets',
  'workspaceTools',
  'codeTool',
  'editorTools',
  'toOpenAITools',
  'toOpenAIToolMessage',
  'toStrictJsonSchema',
  'toAnthropicTools',
  'toAnthropicToolResult',
  'toAISDKTools',
  'createMcpServer',
];

describe('quickrealm/tools', () => {
  it('import and require give the same functions as the main entry', () => {
    const out = execFileSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import * as esm from 'quickrealm/tools';
         import main from 'quickrealm';
         import { createRequire } from 'node:module';
         const cjs = createRequire(import.meta.url)('quickrealm/tools');
         const names = ${JSON.stringify(NAMES)};
         process.stdout.write(JSON.stringify({
           esm: names.filter((n) => typeof esm[n] === 'function' && esm[n] === cjs[n] && main[n] === cjs[n]),
           keys: Object.keys(cjs),
           resolved: import.meta.resolve('quickrealm/tools'),
         }));`,
      ],
      { cwd: ROOT, encoding: 'utf8' },
    );
    const r = JSON.parse(out);
    expect(r.esm).toEqual(NAMES);
    expect(r.keys).toEqual(NAMES);
    expect(r.resolved).toMatch(/\/lib\/tools\/index\.mjs$/);
  });

  it('a missing optional peer is named, with how to install it', () => {
    let thrown: unknown;
    try {
      loadPeer('quickrealm-no-such-peer', 'quickrealm-no-such-peer', 'toSomething()');
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(Error);
    expect((thrown as Error).message).toBe(
      "toSomething() needs the optional peer dependency 'quickrealm-no-such-peer', which is not installed: npm install quickrealm-no-such-peer",
    );
    expect((thrown as { code?: string }).code).toBe('MODULE_NOT_FOUND');
    expect(loadPeer('ai', 'ai', 'x').tool).toBeTypeOf('function');
  });
});
