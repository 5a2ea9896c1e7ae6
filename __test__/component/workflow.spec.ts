// The loop a model drives: render → script → execute → render again, through the tools, with
// a model that makes mistakes and fixes them from what it is told.
import { subscribe } from 'valtio/vanilla';
import { describe, expect, it } from 'vitest';
import { SearchComponent, Store, settle } from './fixtures.js';

/** A component whose side effect (a search) runs when its public state changes. */
class Catalog extends SearchComponent {
  readonly catalog = ['green tea', 'black tea', 'coffee beans', 'teapot'];
  constructor() {
    super();
    subscribe(this.box, () => {
      const pattern = this.box.search_pattern;
      this.results.search_result = this.catalog.filter((item) => item.includes(pattern)).join(', ');
    });
  }
  override async render() {
    return `${await super.render()}\nResults: ${this.results.search_result || '(none)'}`;
  }
}

describe('end-to-end workflow', () => {
  it('a scripted model searches, reads the results and completes', async () => {
    const c = new Catalog();
    const { dispatch } = c.getCommonTools();
    const transcript: string[] = [];
    const scripts = [
      // Turn 1: the model forgets to normalise and writes a pattern that is too long.
      'search_box_state.search_pattern = "TEA ".repeat(100);',
      // Turn 2: it fixes its script with the utility the context offers.
      'search_box_state.search_pattern = normalizeSearch("  TEA ");',
    ];
    transcript.push(await c.renderWithScriptSection());
    for (const script of scripts) {
      const answer = await dispatch('execute_script', { script });
      transcript.push(answer.content);
      await settle();
      transcript.push(await c.render());
    }
    const done = await dispatch('attempt_completion', { result: 'Found teas: green tea, black tea, teapot' });
    expect(done.ok).toBe(true);
    expect(transcript[1]).toMatch(/ERROR VALIDATION_FAILED[\s\S]*search_box_state\.search_pattern: Too big/);
    expect(transcript[2]).toContain('Results: (none)');
    expect(transcript[3]).toBe('The script ran. Changes:\n- search_box_state.search_pattern: "" -> "tea"');
    expect(transcript[4]).toContain('Results: green tea, black tea, teapot');
    expect(c.getCompletion()?.result).toBe('Found teas: green tea, black tea, teapot');
  });

  it('a model told that a state is read-only or write-only can correct itself', async () => {
    const s = new Store();
    const { dispatch } = s.getCommonTools();
    const first = await dispatch('execute_script', { script: 'config.limit = 20;\naudit.note = "raised limit";' });
    expect(first.content).toContain('config is read-only');
    const second = await dispatch('execute_script', { script: 'audit.note = audit.note + " again";' });
    expect(second.content).toContain('audit is write-only');
    const third = await dispatch('execute_script', { script: 'audit.note = `limit is ${config.limit}`;' });
    expect(third.ok).toBe(true);
    expect(s.audit.note).toBe('limit is 10');
    expect(s.config.limit).toBe(10);
  });

  it('the script section is enough to write a correct script (its own example runs)', async () => {
    const c = new SearchComponent();
    const text = await c.renderWithScriptSection();
    const example = /Examples:\n```js\n([\s\S]*?)\n```/.exec(text)?.[1] ?? '';
    const runnable = example
      .split('\n')
      .filter((line) => !line.includes('/* … */'))
      .join('\n');
    const r = await c.executeScript(runnable);
    expect(r.success).toBe(true);
    expect(r.completion).toBeDefined();
  });
});
