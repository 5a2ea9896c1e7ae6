'use strict';
// A search box as a stateful component, driven by a scripted "model": each turn the component
// is rendered, the model answers with a script, the script runs through the execute_script
// tool, and the next turn starts from the new render. Everything the model would read is
// printed. Run with `node examples/search-component.js`.
const { StatefulComponent, StateType, Permission } = require('..');
const { proxy, subscribe } = require('valtio/vanilla');
const { z } = require('zod');

const CATALOG = ['green tea', 'black tea', 'oolong tea', 'coffee beans', 'teapot', 'tea towel'];

class SearchComponent extends StatefulComponent {
  results = { items: /** @type {string[]} */ ([]) };

  publicStates = {
    search_box_state: {
      type: StateType.public,
      permission: Permission.rw,
      schema: z.object({ search_pattern: z.string().max(300), page_size: z.number().int().min(1).max(5) }),
      sideEffectsDesc: 'Changing it runs the search and refreshes the results below',
      state: proxy({ search_pattern: '', page_size: 3 }),
    },
    shop_config: {
      type: StateType.public,
      permission: Permission.r,
      schema: z.object({ currency: z.string(), categories: z.array(z.string()) }),
      state: { currency: 'EUR', categories: ['tea', 'coffee', 'kitchen'] },
    },
  };

  constructor() {
    super();
    // The side effect: a committed change to the search box runs the search.
    subscribe(this.publicStates.search_box_state.state, () => {
      const { search_pattern, page_size } = this.publicStates.search_box_state.state;
      this.results.items = CATALOG.filter((item) => item.includes(search_pattern)).slice(0, page_size);
    });
  }

  getScriptUtilities() {
    return { normalizeSearch: (/** @type {string} */ text) => text.trim().toLowerCase() };
  }

  async render() {
    const found = this.results.items.length > 0 ? this.results.items.join(', ') : '(no search yet)';
    return `${await super.render()}\nResults: ${found}`;
  }
}

/** What a model might answer on each turn, mistakes included. */
const SCRIPTED_MODEL = [
  // A write to a read-only state: the model is told where and why.
  'shop_config.categories.push("gifts");\nsearch_box_state.search_pattern = "tea";',
  // A value the schema refuses: nothing changes, the issue comes back.
  'search_box_state.page_size = 50;\nsearch_box_state.search_pattern = normalizeSearch("  TEA ");',
  // A correct script that completes the task.
  'search_box_state.page_size = 5;\nsearch_box_state.search_pattern = normalizeSearch("  TEA ");\nawait attempt_completion("Found the teas in the shop.");',
];

/** @param {string} title @param {string} text */
function show(title, text) {
  console.log(`\n==== ${title} ${'='.repeat(Math.max(0, 60 - title.length))}\n${text}`);
}

async function main() {
  const search = new SearchComponent();
  const { dispatch } = search.getCommonTools();
  show('context (renderWithScriptSection)', await search.renderWithScriptSection());
  for (const [turn, script] of SCRIPTED_MODEL.entries()) {
    show(`turn ${turn + 1}: the model's script`, script);
    const answer = await dispatch('execute_script', { script });
    // valtio delivers its notifications after the current task: let the search run.
    await new Promise((resolve) => setTimeout(resolve, 0));
    show(`turn ${turn + 1}: tool answer (${answer.ok ? 'ok' : answer.code})`, answer.content);
    show(`turn ${turn + 1}: render()`, await search.render());
    if (search.getCompletion()) break;
  }
  show('completion', JSON.stringify(search.getCompletion()));
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
