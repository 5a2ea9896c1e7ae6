'use strict';
// A host-controlled agent session: the host runs the loop, the model only writes the code of
// each turn. A scripted "model" analyses a small project, proposes a fix (staged, not applied),
// a reviewer looks at the diff and approves, the host commits, and a notification that needs a
// person's approval pauses the turn until it is approved. Sessions are kept in a folder, saved
// after every turn. Run with `node examples/session-review.js`.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { SessionManager, ZipWorkspace, policies } = require('..');

// The project the agent works on.
const project = new ZipWorkspace();
project.writeFile(
  'src/math.js',
  'export function average(xs) {\n  return xs.reduce((a, b) => a + b, 0) / xs.length - 1;\n}\n',
);
project.writeFile('README.md', '# stats\n`average(xs)` returns the mean of `xs`.\n');

// Host operations the guest may call. `llm.complete` stands in for a real model call and
// reports its token use; `team.notify` needs a person's approval before it runs.
const sent = [];
const operations = {
  'llm.complete': async (prompt) => ({
    value: prompt.includes('- 1') ? 'average() subtracts 1 from the mean; remove "- 1".' : 'looks fine',
    usage: { tokens: 120 },
  }),
  'team.notify': {
    handler: async (message) => {
      sent.push(message);
      return 'sent';
    },
    needsApproval: true,
  },
};

// What the model answers, turn by turn (a real loop would ask a model, passing the last outcome).
const modelTurns = [
  `// Turn 1: look around and ask for a review of the code.
   const files = world.list();
   const code = world.read('src/math.js');
   const review = await llm.complete('Review this code:\\n' + code);
   env.review = review;
   return { files, review };`,
  `// Turn 2: propose the fix (proposal mode: staged for review, not applied).
   const code = world.read('src/math.js');
   world.write('src/math.js', code.replace(' - 1;', ';'));
   world.write('test/math.test.js', "import { average } from '../src/math.js';\\nif (average([1, 2, 3]) !== 2) throw new Error('wrong');\\n");
   return 'fix proposed: ' + env.review;`,
  `// Turn 3: tell the team (this pauses until a person approves).
   const status = await team.notify('average() fixed and tested');
   return { notified: status };`,
];

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quickrealm-sessions-'));
  const manager = new SessionManager({ dir, operations });
  const session = await manager.create({
    workspace: project,
    policy: {
      ...policies.SAFE_EDIT,
      allowedOperations: new Set([...policies.SAFE_EDIT.allowedOperations, 'team.notify']),
    },
    budget: { turns: 10, tokens: 10_000, hostCalls: 100 },
  });

  for (const code of modelTurns) {
    if (!session.canContinue()) break;
    let turn = await session.executeTurn(code);
    console.log(`turn ${turn.turnNumber}: ${turn.outcome.tag}`);

    if (turn.outcome.tag === 'needs-approval') {
      for (const request of turn.outcome.requests) {
        console.log(`  approval requested: ${request.operation}(${JSON.stringify(request.args)}) — approved`);
        await manager.approve(session.id, request.id);
      }
      turn = /** @type {NonNullable<typeof turn>} */ (await manager.resume(session.id));
      console.log(`turn ${turn.turnNumber} resumed: ${turn.outcome.tag}`);
    }
    if (turn.outcome.tag === 'proposed') {
      console.log('  proposals for review:');
      for (const p of turn.proposals) {
        console.log(
          p.dir
            ? `  ${p.kind} ${p.path}/`
            : `  ${p.kind} ${p.path}\n${(p.diff ?? '').trimEnd().replace(/^/gm, '    ')}`,
        );
      }
      // A person reviews the diff here; the example approves it.
      const entry = await manager.commit(session.id);
      console.log(`  committed as history entry ${entry}`);
    }
    if (turn.outcome.tag === 'ok') console.log('  value:', JSON.stringify(turn.outcome.value));
    if (turn.outcome.tag === 'error') console.log(`  ${turn.outcome.code}: ${turn.outcome.message}`);
  }
  await manager.complete(session.id);

  // Another process could pick the session up from the folder; here a second manager does.
  const reloaded = await new SessionManager({ dir, operations }).get(session.id);
  if (!reloaded) throw new Error('the session was not stored');
  console.log('\nstatus:', reloaded.status, '| turns:', reloaded.turnNumber, '| notifications sent:', sent.length);
  console.log('fixed code:', JSON.stringify(reloaded.workspace.readText('src/math.js')));
  console.log('budget left:', JSON.stringify(reloaded.budgetRemaining()));
  console.log('audit:', JSON.stringify(reloaded.audit.stats()), '| chain verified:', reloaded.audit.verify().ok);
  fs.rmSync(dir, { recursive: true, force: true });
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
