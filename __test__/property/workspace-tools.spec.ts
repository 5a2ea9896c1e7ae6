// Every workspace tool driven with generated hostile arguments over a workspace of hostile files:
// each call answers a ToolResult (never a throw) within the time, memory and answer bounds of
// DESIGN §4.4.
import { describe, it } from 'vitest';
import { workspaceTools } from '../../lib/tools/index.js';
import { checkEveryTool, hostileWorkspace } from './tools.js';

const names = workspaceTools(hostileWorkspace().ws).tools.map((t) => t.name);

describe('workspace tools stay within the host bounds', () => {
  for (const name of names) {
    it(name, () => checkEveryTool('workspaceTools', (ws) => workspaceTools(ws), name), 120_000);
  }
});
