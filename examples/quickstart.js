'use strict';
// A tour of quickrealm: a successful run with output, a timeout, an error with its frame, the
// frozen realm, and a persistent realm restored in another process.
const { execFileSync } = require('node:child_process');
const { run, runSync, createRepl } = require('..');

async function main() {
  // 1. Data goes in as a copy; the return value comes back as a copy.
  const ok = await run(
    `
    const total = order.items.reduce((sum, item) => sum + item.price * item.qty, 0);
    emit(\`order \${order.id}: \${order.items.length} lines\\n\`);
    console.log('computed total', total);
    return { id: order.id, total };
    `,
    {
      data: {
        order: {
          id: 'A-17',
          items: [
            { price: 2.5, qty: 4 },
            { price: 10, qty: 1 },
          ],
        },
      },
    },
  );
  console.log('--- a successful run');
  console.log('value: ', ok.value);
  console.log('output:', JSON.stringify(ok.output));
  console.log('logs:  ', ok.logs);

  // 2. An infinite loop is stopped at the deadline; the host keeps running.
  const started = Date.now();
  const slow = await run('for (;;) {}', { limits: { timeoutMs: 200 } });
  console.log('\n--- a timeout');
  console.log(`${slow.error.code} after ${Date.now() - started} ms: ${slow.error.message}`);

  // 3. A guest error comes back located in the caller's source, with a code frame.
  const bad = runSync(['const user = { name: "Ada" };', 'const city = user.address.city;', 'return city;'].join('\n'));
  console.log('\n--- an error with its code frame');
  console.log(
    `${bad.error.code} ${bad.error.name}: ${bad.error.message} (line ${bad.error.line}, column ${bad.error.column})`,
  );
  console.log(bad.error.frame);

  // 4. The realm is frozen: built-ins cannot be polluted.
  const pollute = runSync("Object.prototype.polluted = 'hacked!'");
  console.log('\n--- a pollution attempt');
  console.log(`${pollute.error.name}: ${pollute.error.message}`);
  console.log('host Object.prototype.polluted is', {}.polluted);

  // 5. A persistent realm keeps its top-level bindings, closures included, from cell to cell;
  //    its snapshot is authenticated bytes that another process restores.
  const repl = createRepl();
  await repl.eval(
    'const seen = new Map(); let calls = 0; function see(word) { calls++; seen.set(word, (seen.get(word) ?? 0) + 1); return seen.get(word) }',
  );
  await repl.eval('["to", "be", "or", "not", "to", "be"].forEach(see)');
  const key = 'an example key, keep yours secret';
  const bytes = repl.snapshot({ key });
  const child = `const { restoreRepl } = require(${JSON.stringify(require.resolve('..'))});
    restoreRepl(Buffer.from(process.argv[1], 'base64'), { key: ${JSON.stringify(key)} })
      .eval('see("be"); [calls, [...seen]]').then((r) => process.stdout.write(JSON.stringify(r.value)));`;
  const there = execFileSync(process.execPath, ['-e', child, Buffer.from(bytes).toString('base64')], {
    encoding: 'utf8',
  });
  console.log('\n--- a persistent realm');
  console.log(`snapshot: ${bytes.length} bytes; restored in another process:`, there);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
