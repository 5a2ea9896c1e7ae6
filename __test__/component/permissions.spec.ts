// Permissions are enforced inside the realm: r states refuse every kind of write, w states
// refuse every kind of read, rw states allow both. Each refusal is a TypeError naming the
// state, located on the script's line, and nothing changes.
import { describe, expect, it } from 'vitest';
import { Store } from './fixtures.js';

async function expectRefused(script: string, word: 'read-only' | 'write-only', state: string) {
  const s = new Store();
  const r = await s.executeScript(`profile.name = "Changed";\n${script}`);
  expect(r.success, script).toBe(false);
  expect(r.error?.name, script).toBe('TypeError');
  expect(r.error?.message, script).toContain(state);
  expect(r.error?.message, script).toContain(word);
  expect(r.error?.line, script).toBe(2);
  expect(s.profile.name).toBe('Ada');
  expect(s.config.limit).toBe(10);
  expect(s.audit).toEqual({ secret: 'hunter2' });
  return r;
}

describe('r: read-only', () => {
  it('reads work at every depth, through iteration and JSON', async () => {
    const s = new Store();
    const r = await s.executeScript(
      'profile.tags = [String(config.limit), config.items[0].label, String(config.nested.deep.value), Object.keys(config).join("+"), JSON.stringify(config.items), ...config.items.map((i) => String(i.id)), String({ ...config }.limit)];',
    );
    expect(r.success).toBe(false); // more than 5 tags: the schema says so, which proves every read happened
    expect(r.validationErrors?.[0].path).toEqual(['tags']);
    const ok = await s.executeScript('profile.name = `${config.limit}:${config.items.length}:${"limit" in config}`;');
    expect(ok.success).toBe(true);
    expect(s.profile.name).toBe('10:1:true');
  });

  const writes: Record<string, string> = {
    'top-level set': 'config.limit = 5;',
    'nested set': 'config.nested.deep.value = 2;',
    'array element': 'config.items[0] = { id: 9, label: "x" };',
    'array element property': 'config.items[0].label = "x";',
    push: 'config.items.push({ id: 2, label: "two" });',
    splice: 'config.items.splice(0, 1);',
    fill: 'config.items.fill(null);',
    unshift: 'config.items.unshift(0);',
    'length truncation': 'config.items.length = 0;',
    delete: 'delete config.limit;',
    'nested delete': 'delete config.nested.deep;',
    'Object.defineProperty': 'Object.defineProperty(config, "x", { value: 1 });',
    'Reflect.set': 'Reflect.set(config, "limit", 1);',
    'Reflect.defineProperty': 'Reflect.defineProperty(config.nested, "x", { value: 1 });',
    'Reflect.deleteProperty': 'Reflect.deleteProperty(config.items, 0);',
    'Object.assign': 'Object.assign(config, { limit: 3 });',
    'Object.setPrototypeOf': 'Object.setPrototypeOf(config, null);',
    'Object.freeze': 'Object.freeze(config.nested);',
    'replacing the state': 'config = { limit: 1 };',
  };
  for (const [name, script] of Object.entries(writes)) {
    it(`refuses ${name}`, async () => {
      await expectRefused(script, 'read-only', 'config');
    });
  }

  it('a descriptor read does not hand out a writable inner object', async () => {
    await expectRefused('Object.getOwnPropertyDescriptor(config, "nested").value.deep = 1;', 'read-only', 'config');
  });

  it('the message names the path that was written', async () => {
    const r = await expectRefused('config.items[0].label = "x";', 'read-only', 'config');
    expect(r.error?.message).toBe('config is read-only: cannot set config.items[0].label');
  });

  it('a refused write caught by the script leaves the state as it was', async () => {
    const s = new Store();
    const r = await s.executeScript(
      'try { config.limit = 1; } catch (e) { profile.name = e.name; }\ntry { config.items.pop(); } catch {}',
    );
    expect(r.success).toBe(true);
    expect(r.changes).toEqual([{ state: 'profile', path: ['name'], before: 'Ada', after: 'TypeError', op: 'replace' }]);
    expect(s.config.limit).toBe(10);
    expect(s.config.items).toHaveLength(1);
  });
});

describe('w: write-only', () => {
  const reads: Record<string, string> = {
    'property read': 'const x = audit.secret;',
    'compound assignment': 'audit.note += "x";',
    'nested write (reads the parent)': 'audit.secret.length = 1;',
    'Object.keys': 'Object.keys(audit);',
    'Object.entries': 'Object.entries(audit);',
    'Reflect.ownKeys': 'Reflect.ownKeys(audit);',
    spread: 'const copy = { ...audit };',
    'Object.assign from it': 'Object.assign({}, audit);',
    'JSON.stringify': 'JSON.stringify(audit);',
    'in operator': '"secret" in audit;',
    'for...in': 'for (const k in audit) {}',
    'template literal': '`${audit}`;',
    getOwnPropertyDescriptor: 'Object.getOwnPropertyDescriptor(audit, "secret");',
    instanceof: 'audit instanceof Object;',
    hasOwnProperty: 'Object.prototype.hasOwnProperty.call(audit, "secret");',
  };
  for (const [name, script] of Object.entries(reads)) {
    it(`refuses ${name}`, async () => {
      await expectRefused(script, 'write-only', 'audit');
    });
  }

  it('top-level writes, deletes and defineProperty apply on top of the hidden value', async () => {
    const s = new Store();
    const r = await s.executeScript(
      'audit.note = "first";\naudit.level = "warn";\nObject.defineProperty(audit, "note", { value: "second", enumerable: true });\ndelete audit.level;',
    );
    expect(r.success).toBe(true);
    expect(s.audit).toEqual({ secret: 'hunter2', note: 'second' });
    expect(r.changes).toEqual([{ state: 'audit', path: ['note'], before: undefined, after: 'second', op: 'add' }]);
  });

  it('Object.assign into a write-only state works (it only sets)', async () => {
    const s = new Store();
    const r = await s.executeScript('Object.assign(audit, { note: "a", level: "info" });');
    expect(r.success).toBe(true);
    expect(s.audit).toEqual({ secret: 'hunter2', note: 'a', level: 'info' });
  });

  it('replacing the whole state is validated like any change', async () => {
    const s = new Store();
    const bad = await s.executeScript('audit = { note: "n" };');
    expect(bad.validationErrors?.[0]).toMatchObject({ state: 'audit', path: ['secret'] });
    const good = await s.executeScript('audit = { secret: "new" };');
    expect(good.success).toBe(true);
    expect(s.audit).toEqual({ secret: 'new' });
  });

  it('console.log of a write-only state shows nothing of its value', async () => {
    const s = new Store();
    const r = await s.executeScript('audit.note = "mine";\nconsole.log(audit);');
    expect(r.success).toBe(true);
    expect(r.logs.map((l) => l.message).join()).not.toContain('hunter2');
  });

  it('accessors cannot be defined on it', async () => {
    const s = new Store();
    const r = await s.executeScript('Object.defineProperty(audit, "note", { get() { return "x"; } });');
    expect(r.error?.message).toMatch(/audit: cannot define an accessor/);
  });
});

describe('rw: read and write', () => {
  it('reads, writes, deletes and defineProperty all work', async () => {
    const s = new Store();
    const r = await s.executeScript(
      'profile.tags = [...profile.tags, Object.keys(profile).join("-")];\nObject.defineProperty(profile, "name", { value: profile.name + "!", enumerable: true, writable: true, configurable: true });\ndelete profile.address.city;\nprofile.address.city = "Oslo";',
    );
    expect(r.success).toBe(true);
    expect(s.profile).toEqual({
      name: 'Ada!',
      tags: ['math', 'name-tags-address'],
      address: { zip: '12345', city: 'Oslo' },
    });
  });
});
