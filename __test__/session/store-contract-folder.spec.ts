// FolderStore passes the shared session store contract (store-contract.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FolderStore } from '../../lib/index.js';
import { storeContract } from './store-contract';

storeContract('FolderStore', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'quickrealm-contract-'));
  return {
    store: new FolderStore(dir),
    another: () => new FolderStore(dir),
    dispose: async () => rmSync(dir, { recursive: true, force: true }),
  };
});
