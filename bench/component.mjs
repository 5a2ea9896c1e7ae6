#!/usr/bin/env node
// Stateful component costs.
//
//   node --expose-gc bench/component.mjs [--quick]
//
// 1. executeScript over a bare run(): the same script, the same state copied in as `data`,
//    the same live globals (the utility and attempt_completion). The difference is what the
//    component adds: the permission prelude, copying drafts out, diffing, validation and the
//    in-place commit.
// 2. Validation per changed state: one script changes N states; `stats.validationMs / N`
//    (diff plus the Standard Schema validate call), for zod 4 and valibot.
// 3. Rendered guidance size in characters (render() and renderWithScriptSection()). Tokens are
//    not counted here (no tokenizer is a dependency); characters / 4 is a rough estimate for
//    English text and JSON.
//
// Needs no peers: zod, valibot and valtio are dev dependencies of the package itself.

import { createRequire } from 'node:module';
import { cfg, median, summarize, now, gcFull } from './lib/measure.mjs';
import { fmtUs, table } from './lib/format.mjs';

const require = createRequire(import.meta.url);
const qr = require(process.env.QUICKREALM_PATH ?? '..');
const { z } = require('zod');
const v = require('valibot');
const { proxy } = require('valtio/vanilla');
const { StatefulComponent, StateType, Permission, compose, run } = qr;

if (process.argv.includes('--quick')) Object.assign(cfg, { warmMs: 50, batches: 3, batchMs: 60 });

const normalizeSearch = (text) => text.trim().toLowerCase();

class Search extends StatefulComponent {
  publicStates = {
    search_box_state: {
      type: StateType.public,
      permission: Permission.rw,
      schema: z.object({ search_pattern: z.string().max(300), page: z.number().int().min(1) }),
      sideEffectsDesc: 'Changes trigger a search and refresh the results',
      state: proxy({ search_pattern: 'a', page: 1 }),
    },
  };
  getScriptUtilities() {
    return { normalizeSearch };
  }
}

/** N rw states with the same shape, typed with zod or valibot. */
function manyStates(n, library) {
  const schema =
    library === 'zod'
      ? z.object({ title: z.string().max(100), tags: z.array(z.string()).max(10), count: z.number().int().min(0) })
      : v.object({
          title: v.pipe(v.string(), v.maxLength(100)),
          tags: v.pipe(v.array(v.string()), v.maxLength(10)),
          count: v.pipe(v.number(), v.integer(), v.minValue(0)),
        });
  const states = {};
  for (let i = 0; i < n; i++) {
    states[`item_${i}`] = {
      type: StateType.public,
      permission: Permission.rw,
      schema,
      state: proxy({ title: 'x', tags: ['a'], count: 0 }),
    };
  }
  return new (class Many extends StatefulComponent {
    publicStates = states;
  })();
}

const TOGGLE = 'search_box_state.search_pattern = search_box_state.search_pattern === "a" ? normalizeSearch(" B ") : "a";';

/** µs per op of `op` over one time box. */
async function batch(op) {
  let count = 0;
  const start = now();
  let end;
  do {
    await op();
    count++;
    end = now();
  } while (end - start < cfg.batchMs || count < cfg.minOps);
  return ((end - start) * 1000) / count;
}

async function overhead() {
  const component = new Search();
  const state = component.publicStates.search_box_state.state;
  const probe = await component.executeScript(TOGGLE);
  if (!probe.success) throw new Error(`executeScript failed: ${JSON.stringify(probe.error)}`);
  const globals = { normalizeSearch, attempt_completion: async () => {} };
  // The limits executeScript passes with the default securityConfig.
  const limits = { timeoutMs: 5000, memoryBytes: 100 * 1024 * 1024 };
  const bare = () => run(TOGGLE, { data: { search_box_state: { ...state } }, globals, limits });
  const full = () => component.executeScript(TOGGLE);
  gcFull();
  const warmEnd = now() + cfg.warmMs;
  while (now() < warmEnd) {
    await bare();
    await full();
  }
  // Interleaved batches, so both rows see the same machine load; the overhead is the median of
  // the per-pair differences.
  const bareUs = [];
  const fullUs = [];
  for (let b = 0; b < cfg.batches; b++) {
    bareUs.push(await batch(bare));
    fullUs.push(await batch(full));
  }
  return {
    bare: summarize(bareUs),
    full: summarize(fullUs),
    overhead: median(fullUs.map((f, i) => f - bareUs[i])),
  };
}

async function validation(library, n) {
  const component = manyStates(n, library);
  const script = `for (let i = 0; i < ${n}; i++) { const s = globalThis["item_" + i]; s.count += 1; s.tags.push("t"); s.tags.length = 1; s.title = "t" + s.count; }`;
  const perState = [];
  const rounds = Math.max(cfg.batches * 3, 9);
  for (let i = 0; i < rounds + 3; i++) {
    const r = await component.executeScript(script);
    if (!r.success) throw new Error(`validation bench failed: ${JSON.stringify(r.error ?? r.validationErrors)}`);
    if (i >= 3) perState.push((r.stats.validationMs * 1000) / n);
  }
  return median(perState);
}

/** Counts tokens with gpt-tokenizer (o200k_base, the GPT-4o family's encoding) when the bench's own dependencies are installed; otherwise estimates characters / 4. */
async function tokenCounter() {
  try {
    const { countTokens } = await import('gpt-tokenizer');
    return { label: 'tokens (o200k_base)', count: (text) => String(countTokens(text)) };
  } catch {
    return { label: 'tokens (chars/4, estimate)', count: (text) => `~${Math.round(text.length / 4)}` };
  }
}

async function sizes(tokens) {
  const search = new Search();
  const many = manyStates(5, 'zod');
  const rows = [];
  for (const [name, target] of [
    ['Search (1 rw state, 1 utility)', search],
    ['5 zod states', many],
    ['compose(Search, 5 zod states)', compose(new Search(), manyStates(5, 'zod'))],
  ]) {
    const plain = (await target.render()).length;
    const text = await target.renderWithScriptSection();
    rows.push([name, String(plain), String(text.length), tokens.count(text)]);
  }
  return rows;
}

async function main() {
  console.log(`quickrealm components — Node ${process.version}, ${new Date().toISOString()}\n`);
  const { bare, full, overhead: extra } = await overhead();
  console.log('## executeScript overhead (µs/op, median of batches)\n');
  console.log(
    table(
      ['what', 'median', 'min', 'max'],
      [
        ['bare run() with the same data and globals', fmtUs(bare.median), fmtUs(bare.min), fmtUs(bare.max)],
        ['executeScript (prelude, diff, validation, commit)', fmtUs(full.median), fmtUs(full.min), fmtUs(full.max)],
        ['overhead (median of paired batch differences)', fmtUs(extra), '', ''],
      ],
    ),
  );
  console.log('\n## Validation per changed state (diff + schema, µs)\n');
  const vrows = [];
  for (const library of ['zod', 'valibot']) {
    for (const n of [1, 10, 50]) vrows.push([library, String(n), fmtUs(await validation(library, n))]);
  }
  console.log(table(['schema', 'states changed', 'per state'], vrows));
  console.log('\n## Rendered guidance (characters, and tokens of the full text)\n');
  const tokens = await tokenCounter();
  console.log(
    table(['component', 'render()', 'renderWithScriptSection()', `script section ${tokens.label}`], await sizes(tokens)),
  );
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
