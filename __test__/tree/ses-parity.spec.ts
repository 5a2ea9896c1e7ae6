// The SES edit executor's own test cases, run against createSandboxExecutor on a real tree.
// Unlike the SES suite these need no lockdown of the test process, so none is skipped.
import { SchemaFactory, TreeViewConfiguration, createIndependentTreeViewAlpha } from '@fluidframework/tree/alpha';
import { describe, expect, it } from 'vitest';
import { createSandboxExecutor } from '../../lib/index.js';
import { applyEdit, createContext, expectEditingError, snapshot } from './harness.js';

const sf = new SchemaFactory('com.example.ses');

function stringView(initial = 'Initial') {
  const view = createIndependentTreeViewAlpha(new TreeViewConfiguration({ schema: sf.string }));
  view.initialize(initial);
  return view;
}

describe('SES executor parity', () => {
  it('rejects a global named context when the executor is created', () => {
    expect(() =>
      createSandboxExecutor({ createContext, compartmentOptions: { globals: new Map([['context', {}]]) } }),
    ).toThrow(/context.*reserved/);
    expect(() => createSandboxExecutor({ createContext, globals: new Map([['context', 1]]) })).toThrow(
      /context.*reserved/,
    );
    expect(() => createSandboxExecutor({ createContext, globals: { context: 1 } })).toThrow(/context.*reserved/);
  });

  it('creates the executor twice', async () => {
    const first = createSandboxExecutor({ createContext, lockdownOptions: { consoleTaming: 'unsafe' } });
    const second = createSandboxExecutor({ createContext, lockdownOptions: { consoleTaming: 'unsafe' } });
    const view = stringView();
    expect((await applyEdit(view, first, 'context.root = "first";')).type).toBe('success');
    expect((await applyEdit(view, second, 'context.root = context.root + " then second";')).type).toBe('success');
    expect(view.root).toBe('first then second');
  });

  it('passes extra globals through to the code', async () => {
    const editor = createSandboxExecutor({
      createContext,
      compartmentOptions: { globals: new Map<string, unknown>([['extraGlobal', 'from the host']]) },
    });
    const view = stringView();
    const outcome = await applyEdit(view, editor, 'context.root = extraGlobal;');
    expect(outcome.type).toBe('success');
    expect(view.root).toBe('from the host');
  });

  it('blocks prototype pollution as an editing error and leaves the tree unchanged', async () => {
    const editor = createSandboxExecutor({ createContext });
    const view = stringView();
    const before = snapshot(view);
    const outcome = await applyEdit(view, editor, "Object.prototype.polluted = 'hacked!';");
    expectEditingError(outcome, /is not extensible/);
    expect(snapshot(view)).toBe(before);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.isFrozen(Object.prototype)).toBe(false);
  });
});
