// executeScript: drafts, validation with real zod 4 and valibot schemas, all-or-nothing commits
// seen by valtio, changes and JSON Patch, completion, logs and error locations.
import { proxy, subscribe } from 'valtio/vanilla';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Permission, StatefulComponent, StateType } from '../../lib/index.js';
import { Cart, SearchComponent, Store, settle } from './fixtures.js';

describe('state management', () => {
  it('a script edits a rw state and the change lands on the real state object', async () => {
    const c = new SearchComponent();
    const box = c.box;
    const r = await c.executeScript('search_box_state.search_pattern = "example query";');
    expect(r.success).toBe(true);
    expect(c.box).toBe(box);
    expect(c.box.search_pattern).toBe('example query');
  });

  it('a script that changes nothing succeeds with no changes', async () => {
    const c = new SearchComponent();
    const r = await c.executeScript('const x = search_box_state.search_pattern.length; return x;');
    expect(r).toMatchObject({ success: true, changes: [], patch: [] });
  });

  it('nested objects keep their identity: changes are applied in place, deepest key first', async () => {
    const s = new Store();
    const address = s.profile.address;
    const r = await s.executeScript('profile.address.city = "Paris"; profile.tags.push("logic");');
    expect(r.success).toBe(true);
    expect(s.profile.address).toBe(address);
    expect(s.profile).toEqual({ name: 'Ada', tags: ['math', 'logic'], address: { city: 'Paris', zip: '12345' } });
  });

  it('private states never reach the script', async () => {
    const c = new SearchComponent();
    const r = await c.executeScript(
      'search_box_state.search_pattern = [typeof search_index, typeof secret_token, JSON.stringify(Object.keys(globalThis).filter((k) => /search|secret|quickrealm/.test(k)))].join(" ");',
    );
    expect(r.success).toBe(true);
    expect(c.box.search_pattern).toBe('undefined undefined ["search_box_state"]');
  });

  it('replacing a whole rw state object is applied key by key', async () => {
    const s = new Store();
    const r = await s.executeScript('profile = { name: "Grace", tags: [], address: { city: "NYC", zip: "10001" } };');
    expect(r.success).toBe(true);
    expect(s.profile).toEqual({ name: 'Grace', tags: [], address: { city: 'NYC', zip: '10001' } });
  });
});

describe('validation and all-or-nothing commits', () => {
  it('a schema failure reports state, path and message and changes nothing, not even valid states', async () => {
    const s = new Store();
    const r = await s.executeScript('profile.name = "Grace";\naudit.note = "ok";\nprofile.address.zip = "abc";');
    expect(r.success).toBe(false);
    expect(r.error).toBeUndefined();
    expect(r.validationErrors).toHaveLength(1);
    expect(r.validationErrors?.[0]).toMatchObject({ state: 'profile', path: ['address', 'zip'] });
    expect(r.validationErrors?.[0].message).toMatch(/pattern|Invalid/i);
    expect(r.changes).toEqual([]);
    expect(s.profile.name).toBe('Ada');
    expect(s.audit).toEqual({ secret: 'hunter2' });
  });

  it('every failing state is reported, with array indexes as numbers', async () => {
    const s = new Store();
    const r = await s.executeScript('profile.tags.push(1);\naudit.note = "x".repeat(30);');
    expect(r.validationErrors).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ state: 'profile', path: ['tags', 1] }),
        expect.objectContaining({ state: 'audit', path: ['note'] }),
      ]),
    );
  });

  it('a thrown error after valid edits changes nothing', async () => {
    const s = new Store();
    const r = await s.executeScript('profile.name = "Grace";\nthrow new Error("second thoughts");');
    expect(r.success).toBe(false);
    expect(r.error).toMatchObject({ code: 'EVAL_ERROR', name: 'Error', message: 'second thoughts', line: 2 });
    expect(s.profile.name).toBe('Ada');
  });

  it('only changed states are validated', async () => {
    let calls = 0;
    const counting = z.object({ n: z.number() }).refine(() => {
      calls++;
      return true;
    });
    class Two extends StatefulComponent {
      publicStates = {
        a: { type: StateType.public, permission: Permission.rw, schema: counting, state: { n: 1 } },
        b: { type: StateType.public, permission: Permission.rw, schema: counting, state: { n: 1 } },
      };
    }
    const r = await new Two().executeScript('a.n = 2; b.n = 1;');
    expect(r.success).toBe(true);
    expect(calls).toBe(1);
  });

  it('valibot schemas validate the same way', async () => {
    const c = new Cart();
    const bad = await c.executeScript('cart_state.items.push({ sku: "tea", qty: 0 });');
    expect(bad.success).toBe(false);
    expect(bad.validationErrors?.[0]).toMatchObject({ state: 'cart_state', path: ['items', 0, 'qty'] });
    expect(c.cart.items).toEqual([]);
    const good = await c.executeScript('cart_state.items.push({ sku: "tea", qty: await priceOf("tea") });');
    expect(good.success).toBe(true);
    expect(c.cart.items).toEqual([{ sku: 'tea', qty: 4 }]);
  });

  it('async schemas (zod refine with a promise) are awaited', async () => {
    const schema = z
      .object({ name: z.string() })
      .refine(async (v) => v.name !== 'taken', { message: 'name is taken', path: ['name'] });
    class Async extends StatefulComponent {
      readonly user = { name: 'free' };
      publicStates = { user: { type: StateType.public, permission: Permission.rw, schema, state: this.user } };
    }
    const c = new Async();
    const r = await c.executeScript('user.name = "taken";');
    expect(r.validationErrors).toEqual([{ state: 'user', path: ['name'], message: 'name is taken' }]);
    expect(c.user.name).toBe('free');
  });

  it('a state may not turn into another kind of value', async () => {
    const s = new Store();
    const r = await s.executeScript('profile = [1, 2];');
    expect(r.success).toBe(false);
    expect(r.validationErrors?.[0]).toMatchObject({ state: 'profile', path: [] });
    expect(r.validationErrors?.[0].message).toMatch(/must stay an object, not an array/);
  });
});

describe('valtio sees committed changes and nothing else', () => {
  it('subscribe fires after a successful script with the new values', async () => {
    const c = new SearchComponent();
    const seen: string[] = [];
    subscribe(c.box, () => seen.push(c.box.search_pattern));
    await c.executeScript('search_box_state.search_pattern = normalizeSearch("  HELLO  ");');
    await settle();
    expect(seen).toEqual(['hello']);
  });

  it('subscribe sees nothing after a failed script or a failed validation', async () => {
    const s = new Store();
    let notified = 0;
    subscribe(s.profile, () => notified++);
    subscribe(s.audit, () => notified++);
    await s.executeScript('profile.name = "x"; audit.note = "y"; throw new Error("no");');
    await s.executeScript('profile.name = ""; audit.note = "y";');
    await settle();
    expect(notified).toBe(0);
    expect(s.profile.name).toBe('Ada');
  });

  it('a side effect subscribed in the constructor runs after a commit (a common component pattern)', async () => {
    class Searching extends SearchComponent {
      constructor() {
        super();
        subscribe(this.box, () => {
          this.results.search_result = `results for ${this.box.search_pattern}`;
        });
      }
    }
    const c = new Searching();
    await c.executeScript('search_box_state.search_pattern = "shoes";');
    await settle();
    expect(c.results.search_result).toBe('results for shoes');
  });
});

describe('changes and patch', () => {
  it('list every leaf change with before and after, and RFC 6902 operations', async () => {
    const s = new Store();
    const r = await s.executeScript(
      'profile.name = "Grace";\nprofile.tags.push("x");\ndelete profile.address.city;\nprofile.address["a/b~c"] = "odd";',
    );
    // The schema strips nothing: an object schema accepts unknown keys, and the state keeps what the script wrote.
    expect(r.validationErrors?.[0]).toMatchObject({ path: ['address', 'city'] });
    const ok = await s.executeScript(
      'profile.name = "Grace";\nprofile.tags.push("x");\nprofile.address["a/b~c"] = "odd";',
    );
    expect(ok.success).toBe(true);
    expect(ok.changes).toEqual([
      { state: 'profile', path: ['name'], before: 'Ada', after: 'Grace', op: 'replace' },
      { state: 'profile', path: ['tags', 1], before: undefined, after: 'x', op: 'add' },
      { state: 'profile', path: ['address', 'a/b~c'], before: undefined, after: 'odd', op: 'add' },
    ]);
    expect(ok.patch).toEqual([
      { op: 'replace', path: '/profile/name', value: 'Grace' },
      { op: 'add', path: '/profile/tags/1', value: 'x' },
      { op: 'add', path: '/profile/address/a~1b~0c', value: 'odd' },
    ]);
  });

  it('array shrinking removes from the end; applying the patch to the old value gives the new one', async () => {
    const s = new Store();
    s.profile.tags = ['a', 'b', 'c', 'd'];
    const before = structuredClone({
      profile: { ...s.profile, tags: [...s.profile.tags], address: { ...s.profile.address } },
    });
    const r = await s.executeScript('profile.tags.splice(1, 2);\nprofile.name = "Bo";');
    expect(r.success).toBe(true);
    expect(s.profile.tags).toEqual(['a', 'd']);
    expect(r.patch).toEqual([
      { op: 'replace', path: '/profile/name', value: 'Bo' },
      { op: 'replace', path: '/profile/tags/1', value: 'd' },
      { op: 'remove', path: '/profile/tags/3' },
      { op: 'remove', path: '/profile/tags/2' },
    ]);
    expect(applyPatch(before, r.patch)).toEqual({ profile: JSON.parse(JSON.stringify(s.profile)) });
  });

  it('changes never share objects with the live state', async () => {
    const s = new Store();
    const r = await s.executeScript('profile.address = { city: "Rome", zip: "00100" };');
    expect(r.success).toBe(true);
    const change = r.changes.find((c) => c.path.join('.') === 'address.city');
    expect(change?.after).toBe('Rome');
    (r.patch[0] as { value: unknown }).value = 'mutated';
    expect(s.profile.address.city).toBe('Rome');
  });
});

describe('script execution', () => {
  it('top-level await, utilities on the host and return work; the return value is not a state', async () => {
    const c = new SearchComponent();
    const r = await c.executeScript(
      'const n = normalizeSearch("  A b "); await null; search_box_state.search_pattern = n; return 42;',
    );
    expect(r.success).toBe(true);
    expect(c.box.search_pattern).toBe('a b');
  });

  it('console output comes back in logs', async () => {
    const c = new SearchComponent();
    const r = await c.executeScript('console.log("pattern is", search_box_state.search_pattern.length);');
    expect(r.logs).toEqual([{ level: 'log', message: 'pattern is 0' }]);
  });

  it('errors point into the script: line, column and frame, no prelude in the stack', async () => {
    const s = new Store();
    const r = await s.executeScript('const a = 1;\nconst b = profile.missing.deep;\n');
    expect(r.error).toMatchObject({ code: 'EVAL_ERROR', name: 'TypeError', line: 2, column: 11 });
    expect(r.error?.frame).toContain('> 2 | const b = profile.missing.deep;');
    expect(r.error?.stack).toBe('    at <anonymous> (script.js:2:11)');
  });

  it('columns on the first line are the script own', async () => {
    const s = new Store();
    const r = await s.executeScript('config.limit = 3;');
    expect(r.error).toMatchObject({ line: 1, column: 1 });
    expect(r.error?.frame).toBe('> 1 | config.limit = 3;\n    | ^');
  });

  it('syntax errors are located, and an unclosed brace is reported at the end of the script', async () => {
    const s = new Store();
    const bad = await s.executeScript('const a = ;');
    expect(bad.error).toMatchObject({ name: 'SyntaxError', line: 1, column: 11 });
    const open = await s.executeScript('if (true) {\n  profile.name = "x";');
    expect(open.error).toMatchObject({ name: 'SyntaxError', line: 2, column: 22 });
    expect(open.error?.message).toMatch(/brackets or braces do not balance/);
  });

  it('a script that redeclares a state is warned that its edits are not kept', async () => {
    const c = new SearchComponent();
    const r = await c.executeScript(
      'let search_box_state = { search_pattern: "" };\nsearch_box_state.search_pattern = "lost";',
    );
    expect(r.success).toBe(true);
    expect(r.changes).toEqual([]);
    expect(r.warnings).toEqual([
      "the script declares its own 'search_box_state', which hides the state: edits to it are not kept",
    ]);
    expect((await c.executeScript('const search_box_state_copy = 1;')).warnings).toEqual([]);
  });

  it('a non-string script fails without throwing', async () => {
    const r = await new SearchComponent().executeScript(42 as unknown as string);
    expect(r).toMatchObject({ success: false, error: { code: 'INVALID_INPUT' } });
  });

  it('an aborted signal stops the script and changes nothing', async () => {
    const c = new (class Unbounded extends SearchComponent {
      securityConfig = { maxIterations: 2 ** 53 };
    })();
    const r = await c.executeScript('search_box_state.search_pattern = "x"; while (true) {}', {
      signal: AbortSignal.timeout(50),
    });
    expect(r.error?.code).toBe('TIMEOUT');
    expect(c.box.search_pattern).toBe('');
  });

  it('scripts on one component run one after another', async () => {
    const c = new SearchComponent();
    const a = c.executeScript('await new Promise((r) => setTimeout(r, 30)); search_box_state.search_pattern += "a";');
    const b = c.executeScript('search_box_state.search_pattern += "b";');
    await Promise.all([a, b]);
    expect(c.box.search_pattern).toBe('ab');
  });
});

describe('attempt_completion inside scripts', () => {
  it('is awaitable, records completion and does not end the script', async () => {
    const c = new SearchComponent();
    const r = await c.executeScript(
      'await attempt_completion("Search completed");\nsearch_box_state.search_pattern = "after";',
    );
    expect(r.completion).toEqual({ result: 'Search completed' });
    expect(c.box.search_pattern).toBe('after');
    expect(c.getCompletion()).toEqual({ result: 'Search completed' });
  });

  it('is not recorded when the script or validation fails', async () => {
    const c = new SearchComponent();
    const r = await c.executeScript(
      'await attempt_completion("done");\nsearch_box_state.search_pattern = "x".repeat(301);',
    );
    expect(r.success).toBe(false);
    expect(r.completion).toBeUndefined();
    expect(r.warnings.join()).toMatch(/attempt_completion was called, but validation failed/);
    expect(c.getCompletion()).toBeUndefined();
  });
});

/** A small RFC 6902 applier (add, replace, remove) to check the patch independently. */
function applyPatch(doc: unknown, ops: { op: string; path: string; value?: unknown }[]): unknown {
  const root = structuredClone(doc) as Record<string, unknown>;
  for (const op of ops) {
    const keys = op.path
      .split('/')
      .slice(1)
      .map((k) => k.replaceAll('~1', '/').replaceAll('~0', '~'));
    const last = keys.pop() as string;
    let target: any = root;
    for (const k of keys) target = target[k];
    if (Array.isArray(target)) {
      const i = last === '-' ? target.length : Number(last);
      if (op.op === 'add') target.splice(i, 0, op.value);
      else if (op.op === 'remove') target.splice(i, 1);
      else target[i] = op.value;
    } else if (op.op === 'remove') delete target[last];
    else target[last] = op.value;
  }
  return root;
}

describe('a live state that refuses a change', () => {
  it('a getter without a setter is found before anything is written, in any state', async () => {
    const first = proxy({ n: 1 });
    const second = proxy({
      base: 2,
      get double() {
        return this.base * 2;
      },
    });
    class Computed extends StatefulComponent {
      publicStates = {
        first: { type: StateType.public, permission: Permission.rw, schema: z.object({ n: z.number() }), state: first },
        second: {
          type: StateType.public,
          permission: Permission.rw,
          schema: z.object({ base: z.number(), double: z.number() }),
          state: second,
        },
      };
    }
    const c = new Computed();
    let notified = 0;
    subscribe(first, () => notified++);
    subscribe(second, () => notified++);
    const r = await c.executeScript('first.n = 10;\nsecond.base = 5;\nsecond.double = 99;');
    expect(r.success).toBe(false);
    expect(r.validationErrors).toEqual([
      {
        state: 'second',
        path: ['double'],
        message: 'the state refused the change: the property has a getter and no setter',
      },
    ]);
    await settle();
    expect(notified).toBe(0);
    expect([first.n, second.base, second.double]).toEqual([1, 2, 4]);
    // The computed value is readable; changing what it is computed from works.
    const ok = await c.executeScript('second.base = second.double;');
    expect(ok.success).toBe(true);
    expect(second.double).toBe(8);
  });

  it('a write the live object throws on undoes every change already applied, across states', async () => {
    const first = { n: 1 };
    const guarded = new Proxy(
      { a: 1, b: 1 },
      {
        set(target, key, value) {
          if (key === 'b') throw new Error('b is managed elsewhere');
          return Reflect.set(target, key, value);
        },
      },
    );
    class Guarded extends StatefulComponent {
      publicStates = {
        first: { type: StateType.public, permission: Permission.rw, schema: z.object({ n: z.number() }), state: first },
        guarded: {
          type: StateType.public,
          permission: Permission.rw,
          schema: z.object({ a: z.number(), b: z.number() }),
          state: guarded,
        },
      };
    }
    const r = await new Guarded().executeScript('first.n = 2;\nguarded.a = 2;\nguarded.b = 2;');
    expect(r.success).toBe(false);
    expect(r.validationErrors).toEqual([
      { state: 'guarded', path: ['b'], message: 'the state refused the change: b is managed elsewhere' },
    ]);
    expect(first).toEqual({ n: 1 });
    expect({ ...guarded }).toEqual({ a: 1, b: 1 });
  });
});
