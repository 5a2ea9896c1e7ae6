// compose(): one script over several components' states, committed together or not at all.
import { subscribe } from 'valtio/vanilla';
import { describe, expect, it } from 'vitest';
import { ComponentGroup, compose, type SecurityConfig } from '../../lib/index.js';
import { Cart, SearchComponent, Store, settle } from './fixtures.js';

describe('compose()', () => {
  it('one script edits states of several components, each under its own name', async () => {
    const search = new SearchComponent();
    const cart = new Cart();
    const group = compose(search, cart);
    expect(group).toBeInstanceOf(ComponentGroup);
    expect(group.components).toEqual([search, cart]);
    const r = await group.executeScript(
      'search_box_state.search_pattern = normalizeSearch(" TEA ");\ncart_state.items.push({ sku: "tea", qty: await priceOf("tea") });',
    );
    expect(r.success).toBe(true);
    expect(search.box.search_pattern).toBe('tea');
    expect(cart.cart.items).toEqual([{ sku: 'tea', qty: 4 }]);
    expect(r.patch.map((op) => op.path)).toEqual(['/search_box_state/search_pattern', '/cart_state/items/0']);
  });

  it('all or nothing across components: one invalid state keeps every component unchanged', async () => {
    const search = new SearchComponent();
    const cart = new Cart();
    let notified = 0;
    subscribe(search.box, () => notified++);
    const r = await compose(search, cart).executeScript(
      'search_box_state.search_pattern = "valid";\ncart_state.items.push({ sku: "tea", qty: -1 });',
    );
    expect(r.success).toBe(false);
    expect(r.validationErrors?.map((i) => i.state)).toEqual(['cart_state']);
    await settle();
    expect(notified).toBe(0);
    expect(search.box.search_pattern).toBe('');
    expect(cart.cart.items).toEqual([]);
  });

  it('renders every component, then one script section over all states and utilities', async () => {
    const group = compose(new SearchComponent(), new Cart());
    const rendered = await group.render();
    expect(rendered).toContain('# SearchComponent');
    expect(rendered).toContain('# Cart');
    const text = await group.renderWithScriptSection();
    expect(text.match(/# Script/g)).toHaveLength(1);
    expect(text).toContain('declare const search_box_state');
    expect(text).toContain('declare const cart_state');
    expect(text).toContain('declare function normalizeSearch');
    expect(text).toContain('declare function priceOf');
  });

  it('state and utility names must not clash between components', async () => {
    await expect(compose(new SearchComponent(), new SearchComponent()).executeScript('1')).rejects.toMatchObject({
      code: 'INVALID_INPUT',
    });
    expect(() => compose()).toThrow(/one or more StatefulComponent/);
    const s = new Store();
    expect(() => compose(s, s)).toThrow(/the same component twice/);
  });

  it('uses the strictest limits and every custom validator of its components', async () => {
    class Strict extends Cart {
      securityConfig: SecurityConfig = {
        maxExecutionTime: 100,
        maxIterations: 2 ** 53,
        customValidator: (s) => !s.includes('nope'),
      };
    }
    const group = compose(new SearchComponent(), new Strict());
    // The time limit comes from Strict, the step budget from SearchComponent's default.
    expect((await group.executeScript('await new Promise((r) => setTimeout(r, 2000));')).error?.code).toBe('TIMEOUT');
    expect((await group.executeScript('while (true) {}')).error?.code).toBe('STEP_LIMIT');
    expect((await group.executeScript('// nope')).error?.code).toBe('SCRIPT_REFUSED');
  });

  it('completion is recorded on the group and on each component; tools work over the group', async () => {
    const search = new SearchComponent();
    const cart = new Cart();
    const group = compose(search, cart);
    const r = await group.getCommonTools().dispatch('execute_script', {
      script: 'cart_state.coupon = "TEA10";\nawait attempt_completion("coupon applied");',
    });
    expect(r.ok).toBe(true);
    expect(r.content).toContain('Completion recorded: "coupon applied"');
    expect(group.getCompletion()).toEqual({ result: 'coupon applied' });
    expect(search.getCompletion()).toEqual({ result: 'coupon applied' });
    expect(cart.cart.coupon).toBe('TEA10');
  });

  it('a group script and a component script never interleave', async () => {
    const search = new SearchComponent();
    const group = compose(search, new Cart());
    const slow = group.executeScript(
      'await new Promise((r) => setTimeout(r, 30));\nsearch_box_state.search_pattern += "g";',
    );
    const fast = search.executeScript('search_box_state.search_pattern += "c";');
    await Promise.all([slow, fast]);
    expect(search.box.search_pattern).toBe('gc');
  });
});
