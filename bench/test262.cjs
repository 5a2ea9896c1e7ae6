// Runs test262 tests inside quickrealm's frozen realm and, for comparison, in a fresh node:vm
// context and in plain QuickJS-ng (the same engine without quickrealm's realm setup: not
// frozen, code generation allowed), all in strict mode as scripts; prints the pass rates and
// sorts quickrealm's extra failures by cause.
//
//   cargo build --release --example unfrozen-quickjs    (once; the plain QuickJS-ng runner)
//   node bench/test262.cjs <test262 checkout> [folder ...]   (folders relative to the checkout)
//
// Skipped: module, raw and sloppy-only tests (every quickrealm run is strict), and features no
// sandbox offers (shared memory, other realms, host hooks).
const fs = require('node:fs');
const path = require('node:path');
const vm = require('node:vm');
const { spawnSync } = require('node:child_process');
const { runSync } = require(path.join(__dirname, '..', 'lib', 'index.js'));
const { hostTriple } = require(path.join(__dirname, '..', 'scripts', 'rust-host.js'));

/** The plain QuickJS-ng runner (bench/unfrozen/main.rs), if it has been built. */
const unfrozenRunner = ['release', 'debug']
  .flatMap((profile) => [
    path.join(__dirname, '..', 'target', profile, 'examples', 'unfrozen-quickjs'),
    path.join(__dirname, '..', 'target', hostTriple(), profile, 'examples', 'unfrozen-quickjs'),
  ])
  .find((p) => fs.existsSync(p));

/** Runs a batch of tests in plain QuickJS-ng; one verdict per test, or null without the runner. */
function inUnfrozen(batch) {
  if (!unfrozenRunner) return batch.map(() => null);
  const input = batch.map(({ full }) => JSON.stringify({ source: full })).join('\n');
  const r = spawnSync(unfrozenRunner, { input, maxBuffer: 1 << 30, encoding: 'utf8' });
  const results = r.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l));
  return batch.map(({ meta }, i) => {
    const res = results[i];
    if (!res) return false;
    const failure = res.lines.some((l) => l.startsWith('Test262:AsyncTestFailure'));
    return judge(meta, res.ok && !failure, res.error, res.lines);
  });
}

const root = process.argv[2];
if (!root) {
  console.error('usage: node bench/test262.cjs <test262 checkout> [folder ...]');
  process.exit(2);
}
const folders = process.argv.length > 3 ? process.argv.slice(3) : ['test/built-ins', 'test/language'];
const SKIP_FEATURES = new Set([
  'SharedArrayBuffer', 'Atomics', 'Atomics.waitAsync', 'Atomics.pause', 'cross-realm', 'IsHTMLDDA',
  'host-gc-required', 'ShadowRealm', 'import-defer', 'source-phase-imports', 'Temporal', 'caller',
  'tail-call-optimization', 'FinalizationRegistry', 'WeakRef', 'legacy-regexp',
]);

function metadata(source) {
  const m = /\/\*---([\s\S]*?)---\*\//.exec(source);
  const text = m ? m[1] : '';
  const list = (key) => {
    const inline = new RegExp(`^${key}:\\s*\\[(.*)\\]`, 'm').exec(text);
    if (inline) return inline[1].split(',').map((s) => s.trim()).filter(Boolean);
    const block = new RegExp(`^${key}:\\s*\\n((?:\\s+-.*\\n?)+)`, 'm').exec(text);
    return block ? block[1].split('\n').map((l) => l.replace(/^\s*-\s*/, '').trim()).filter(Boolean) : [];
  };
  const negative = /^negative:\s*\n\s+phase:\s*(\w+)\s*\n\s+type:\s*(\w+)/m.exec(text);
  return {
    includes: list('includes'),
    flags: list('flags'),
    features: list('features'),
    negative: negative ? { phase: negative[1], type: negative[2] } : null,
  };
}

const harnessCache = new Map();
const harness = (name) => {
  if (!harnessCache.has(name)) harnessCache.set(name, fs.readFileSync(path.join(root, 'harness', name), 'utf8'));
  return harnessCache.get(name);
};

// $262 as far as a sandbox can offer it.
const PRELUDE = `var print = function (m) { console.log(String(m)); };
var $262 = { global: globalThis, gc: function () {}, detachArrayBuffer: function (b) { b.transfer(); },
  evalScript: function () { throw new Test262Error('evalScript is not available'); },
  createRealm: function () { throw new Test262Error('createRealm is not available'); }, agent: {} };
`;

function build(source, meta) {
  const parts = [PRELUDE, harness('assert.js'), harness('sta.js')];
  if (meta.flags.includes('async')) parts.push(harness('doneprintHandle.js'));
  for (const inc of meta.includes) parts.push(harness(inc));
  parts.push(source);
  return parts.join('\n');
}

function judge(meta, ok, errorName, lines) {
  if (meta.negative) return !ok && errorName === meta.negative.type;
  if (!ok) return false;
  if (meta.flags.includes('async')) return lines.some((l) => l === 'Test262:AsyncTestComplete');
  return true;
}

function inRealm(full, meta) {
  const r = runSync(full, { mode: 'script', limits: { timeoutMs: 10_000, memoryBytes: 256 << 20 } });
  const lines = r.logs.map((l) => l.message);
  const failure = lines.find((l) => l.startsWith('Test262:AsyncTestFailure'));
  const message = r.ok ? (failure ?? '') : `${r.error.name}: ${r.error.message}`;
  return { pass: judge(meta, r.ok && !failure, r.ok ? '' : r.error.name, lines), message };
}

async function inNode(full, meta) {
  const lines = [];
  const context = vm.createContext({ console: { log: (m) => lines.push(String(m)) } });
  let ok = true;
  let errorName = '';
  try {
    vm.runInContext(`'use strict';\n${full}`, context, { timeout: 10_000 });
    if (meta.flags.includes('async')) for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
  } catch (e) {
    ok = false;
    errorName = e && typeof e === 'object' && 'name' in e ? String(e.name) : typeof e;
  }
  const failure = lines.some((l) => l.startsWith('Test262:AsyncTestFailure'));
  return judge(meta, ok && !failure, errorName, lines);
}

/**
 * Why quickrealm fails where Node passes. By design: code generation from strings (`eval`,
 * `Function`, also when the test's harness uses it to build its fixtures) and the frozen
 * built-ins (propertyHelper's descriptor checks change a built-in's property to prove it is
 * writable or configurable; Object.isFrozen/isExtensible/isSealed tests expect built-ins to be
 * extensible). Everything else is 'other'.
 */
function cause(message, file, full) {
  if (/Code generation from strings|eval is not defined|EvalError/.test(message)) {
    return 'code generation from strings (by design)';
  }
  if (
    /read-only|not extensible|not configurable|frozen|non-writable|cannot (re)?define|could not delete|descriptor should be|to have (writable|configurable|enumerable)|desc\.(writable|configurable)|extensible/i.test(
      message,
    ) ||
    /\/Object\/(isFrozen|isExtensible|isSealed)\//.test(file) ||
    (/(^|\/)(length|name|prop-desc)\.js$/.test(file) && /SameValue|descriptor/.test(message))
  ) {
    return 'frozen built-ins (by design)';
  }
  if (/\beval\b|\bFunction\(/.test(full)) return 'code generation from strings in the test or its harness (by design)';
  return 'other';
}

function* walk(dir) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* walk(p);
    else if (entry.name.endsWith('.js') && !entry.name.includes('_FIXTURE')) yield p;
  }
}

// Tests run in node:vm share this process's promise queue: their rejections are theirs.
process.on('unhandledRejection', () => {});

(async () => {
  const counts = { run: 0, skipped: 0, realm: 0, node: 0, bothFail: 0, unfrozen: 0, onlyFrozenFails: 0 };
  const unfrozenCauses = new Map();
  const unfrozenOthers = [];
  let batch = [];
  const flush = () => {
    const verdicts = inUnfrozen(batch);
    batch.forEach(({ realmPass, message, file, full }, i) => {
      if (verdicts[i]) counts.unfrozen++;
      if (verdicts[i] && !realmPass) {
        counts.onlyFrozenFails++;
        const why = cause(message, file, full);
        unfrozenCauses.set(why, (unfrozenCauses.get(why) ?? 0) + 1);
        if (why === 'other') unfrozenOthers.push(`${path.relative(root, file)}: ${message.slice(0, 160)}`);
      }
    });
    batch = [];
  };
  const causes = new Map();
  const others = [];
  for (const folder of folders) {
    for (const file of walk(path.join(root, folder))) {
      const source = fs.readFileSync(file, 'utf8');
      const meta = metadata(source);
      if (
        meta.flags.some((f) => f === 'module' || f === 'raw' || f === 'noStrict' || f === 'CanBlockIsTrue') ||
        meta.features.some((f) => SKIP_FEATURES.has(f))
      ) {
        counts.skipped++;
        continue;
      }
      const full = build(source, meta);
      counts.run++;
      const realm = inRealm(full, meta);
      const node = await inNode(full, meta);
      batch.push({ full, meta, realmPass: realm.pass, message: realm.message, file });
      if (batch.length >= 200) flush();
      if (realm.pass) counts.realm++;
      if (node) counts.node++;
      if (!realm.pass && !node) counts.bothFail++;
      if (!realm.pass && node) {
        const why = cause(realm.message, file, full);
        causes.set(why, (causes.get(why) ?? 0) + 1);
        if (why === 'other') others.push(`${path.relative(root, file)}: ${realm.message.slice(0, 160)}`);
      }
    }
  }
  flush();
  const pct = (n) => `${((100 * n) / Math.max(1, counts.run)).toFixed(1)}%`;
  console.log(`test262 ${folders.join(' ')}`);
  console.log(`run ${counts.run}, skipped ${counts.skipped}`);
  console.log(`quickrealm (frozen realm) passes ${counts.realm} (${pct(counts.realm)}); node:vm passes ${counts.node} (${pct(counts.node)}); both fail ${counts.bothFail}`);
  if (unfrozenRunner) {
    console.log(`plain QuickJS-ng (unfrozen, same engine) passes ${counts.unfrozen} (${pct(counts.unfrozen)})`);
    console.log('quickrealm fails where plain QuickJS-ng passes:');
    for (const [why, n] of [...unfrozenCauses].sort((a, b) => b[1] - a[1])) console.log(`  ${String(n).padStart(5)}  ${why}`);
    for (const line of unfrozenOthers) console.log(`    ${line}`);
  } else {
    console.log('(build the plain QuickJS-ng runner for the unfrozen baseline: cargo build --release --example unfrozen-quickjs)');
  }
  console.log('quickrealm fails where node:vm passes:');
  for (const [why, n] of [...causes].sort((a, b) => b[1] - a[1])) console.log(`  ${String(n).padStart(5)}  ${why}`);
  if (others.length > 0) {
    console.log(`other failures (${others.length}${others.length > 60 ? ', first 60' : ''}):`);
    for (const line of others.slice(0, 60)) console.log(`  ${line}`);
    if (process.env.T262_ALL) for (const line of others.slice(60)) console.log(`  ${line}`);
  }
})();
