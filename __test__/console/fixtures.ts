// Sessions for the review console's tests, in a fresh FolderStore: proposals with hostile file
// names and contents, a failed turn, an approval with hostile arguments, and a session whose
// stored audit was changed after it was written.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type FolderStore, policies, SessionManager } from '../../lib/session/index.js';
import { decodeSnapshot, encodeSnapshot } from '../../lib/session/snapshot.js';

export const HOSTILE_SCRIPT = '<script>alert(1)</script>';
export const HOSTILE_IMG = '<img src=x onerror=alert(2)>';
export const HOSTILE_NAME = `src/${HOSTILE_IMG}.js`;

const operations = {
  'tickets.create': { handler: (ticket: unknown) => ({ id: 7, ticket }), needsApproval: true },
};
const policy = {
  ...policies.SAFE_EDIT,
  allowedOperations: [...(policies.SAFE_EDIT.allowedOperations ?? []), 'tickets.create'],
};

export async function makeSessions(dir = mkdtempSync(join(tmpdir(), 'qr-console-'))) {
  const manager = new SessionManager({ dir, operations });

  const edits = await manager.create({ id: 'edits', policy, tenant: 'acme', budget: { turns: 10 } });
  edits.workspace.writeFile('src/app.js', 'export const greeting = "hello";\n');
  await edits.executeTurn(
    [
      `world.write('src/app.js', 'export const greeting = ' + JSON.stringify(${JSON.stringify(HOSTILE_SCRIPT)}) + ';\\n');`,
      `world.write(${JSON.stringify(HOSTILE_NAME)}, ${JSON.stringify(`${HOSTILE_SCRIPT}\n${HOSTILE_IMG}\n`)});`,
    ].join('\n'),
  );
  await edits.executeTurn('const x = 1;\nnull.boom;');

  const asks = await manager.create({ id: 'asks', policy, tenant: 'globex' });
  await asks.executeTurn(
    `const n = 1;\nconst t = tickets.create({ title: ${JSON.stringify(HOSTILE_SCRIPT)}, body: ${JSON.stringify(HOSTILE_IMG)} });\nt`,
  );

  const broken = await manager.create({ id: 'broken', policy, tenant: 'acme' });
  await broken.executeTurn("world.read('README.md') ?? 1; world.list('**/*');");
  await tamperAudit(manager.store as FolderStore, 'broken');

  return { dir, manager, operations };
}

/** Rewrites the stored session with its first audit entry's arguments changed (a valid zip, a broken chain). */
async function tamperAudit(store: FolderStore, id: string) {
  const stored = await store.get(id);
  if (!stored) throw new Error(`no session ${id}`);
  const parts = decodeSnapshot(stored.bytes, undefined, { id, version: stored.version, purpose: 'store' });
  const ledger = JSON.parse(parts.ledger);
  ledger.audit[0].args = JSON.stringify(['changed-afterwards.md']);
  const next = stored.version + 1;
  const bytes = encodeSnapshot({
    ...parts,
    ledger: JSON.stringify(ledger),
    binding: { id, version: next, purpose: 'store' },
  });
  const head = await store.head(id);
  await store.put(id, bytes, { expectedVersion: stored.version, meta: head?.meta ?? {} });
}
