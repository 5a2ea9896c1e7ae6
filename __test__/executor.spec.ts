// createSandboxExecutor: a drop-in for tree-agent's SES edit executor.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createSandboxExecutor } from '../lib/index.js';

const PREFIX =
  'Running the generated code produced an error. The state of the tree will be reset to its previous state as it was before the code ran. Please try again. Here is the error: ';
/** What `.run()` says instead when the tree cannot fork, so the failed edit's changes stay. */
const NOT_RESET_PREFIX =
  'Running the generated code produced an error. The tree was not reset: changes the code made before the error are still in place. Please try again. Here is the error: ';

/** A stand-in tree: the context exposes its root for reading and writing. */
function fakeTree(root: unknown = { items: [1, 2, 3], title: 'List' }) {
  return { root };
}
const createContext = (tree: unknown) => {
  const t = tree as { root: unknown };
  return {
    get root() {
      return t.root;
    },
    set root(v: unknown) {
      t.root = v;
    },
  };
};

afterEach(() => {
  vi.restoreAllMocks();
});

describe('as an AsynchronousEditor', () => {
  it('resolves on success and the edit reaches the host object', async () => {
    const editor = createSandboxExecutor({ createContext });
    const tree = fakeTree();
    await expect(editor(tree, 'context.root.items.push(4);\ncontext.root.title = "Edited";')).resolves.toBeUndefined();
    expect(tree.root).toEqual({ items: [1, 2, 3, 4], title: 'Edited' });
  });

  it('replaces the root through the context setter', async () => {
    const editor = createSandboxExecutor({ createContext });
    const tree = fakeTree('before');
    await editor(tree, 'context.root = "after";');
    expect(tree.root).toBe('after');
  });

  it('throws on failure with the guest message plus location', async () => {
    const editor = createSandboxExecutor({ createContext });
    let caught: unknown;
    try {
      await editor(
        fakeTree(),
        'const n = context.root.items.length;\n  throw new Error("Found " + n + " items, expected 4");',
      );
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(Error);
    const err = caught as Error & { code?: string };
    expect(err.message.startsWith('Found 3 items, expected 4 (line 2, column ')).toBe(true);
    expect(err.message).toContain('> 2 |   throw new Error("Found " + n + " items, expected 4");');
    expect(err.name).toBe('Error');
    expect(err.code).toBe('EVAL_ERROR');
  });

  it('throws for limit failures with the limit message', async () => {
    const editor = createSandboxExecutor({ createContext, limits: { timeoutMs: 100 } });
    await expect(editor(fakeTree(), 'for (;;) {}')).rejects.toMatchObject({
      code: 'TIMEOUT',
      message: 'execution exceeded 100 ms',
    });
  });

  it('accepts return, top-level await and an async IIFE (function mode)', async () => {
    const editor = createSandboxExecutor({ createContext });
    const tree = fakeTree({ n: 0 });
    await editor(tree, 'context.root.n++;\nreturn;\ncontext.root.n = 100;');
    await editor(tree, 'await null;\ncontext.root.n++;');
    await editor(tree, '(async () => { context.root.n++; })();');
    expect(tree.root).toEqual({ n: 3 });
  });

  it('script mode evaluates the code as a script, like the SES executor', async () => {
    const editor = createSandboxExecutor({ createContext, mode: 'script' });
    const tree = fakeTree({ n: 0 });
    await editor(tree, 'context.root.n = 1;');
    expect(tree.root).toEqual({ n: 1 });
    await expect(editor(tree, 'return;')).rejects.toMatchObject({ name: 'SyntaxError' });
  });

  it('each edit gets a fresh realm', async () => {
    const editor = createSandboxExecutor({ createContext });
    const tree = fakeTree({ seen: 'none' });
    await editor(tree, 'globalThis.leftover = "from the first edit";');
    await editor(tree, 'context.root.seen = typeof leftover;');
    expect(tree.root).toEqual({ seen: 'undefined' });
  });
});

describe('.run()', () => {
  it('reports success with the new state and the run result', async () => {
    const editor = createSandboxExecutor({ createContext });
    const tree = fakeTree({ items: [1] });
    const r = await editor.run(tree, 'context.root.items.push(2);');
    expect(r.type).toBe('success');
    expect(r.message).toContain('{"items":[1,2]}');
    expect(r.result.ok).toBe(true);
    expect(r.result.stats.hostCalls).toBeGreaterThan(0);
  });

  it('never throws: an editing error with location and frame, saying a tree that cannot fork was not reset', async () => {
    const editor = createSandboxExecutor({ createContext });
    const tree = fakeTree({ items: [1] });
    const r = await editor.run(tree, 'const items = context.root.items;\nitems.push(2);\nitems.missing.push(1);');
    expect(r.type).toBe('editingError');
    expect(r.message).toBe(
      `${NOT_RESET_PREFIX}cannot read property 'push' of undefined (line 3, column ${r.result.error?.column})\n` +
        r.result.error?.frame,
    );
    expect(r.result.error?.frame).toContain('> 3 | items.missing.push(1);');
    expect(r.result.error?.frame).toContain('^');
    expect(r.result.ok).toBe(false);
    expect(r.result.error?.line).toBe(3);
    // What the message says: the push before the error stayed.
    expect(tree.root).toEqual({ items: [1, 2] });
  });

  it('never throws for syntax errors, limits or thrown non-errors', async () => {
    const editor = createSandboxExecutor({ createContext, limits: { timeoutMs: 100 } });
    for (const code of ['const = 1;', 'for (;;) {}', 'throw 42', 'await Promise.reject("no")', '']) {
      const r = await editor.run(fakeTree(), code === '' ? 'x'.repeat(2 * 1024 * 1024) : code);
      expect(r.type, code).toBe('editingError');
      expect(r.message.startsWith(NOT_RESET_PREFIX), code).toBe(true);
      expect(r.message.length, code).toBeGreaterThan(NOT_RESET_PREFIX.length);
    }
  });

  it("a failing createContext is the host's: both forms reject with its error", async () => {
    const broken = createSandboxExecutor({
      createContext: () => {
        throw new RangeError('no context today');
      },
    });
    await expect(broken.run(fakeTree(), 'context.root = 1;')).rejects.toThrow(new RangeError('no context today'));
    await expect(broken(fakeTree(), 'context.root = 1;')).rejects.toThrow(new RangeError('no context today'));
  });

  it('the prefix is exported exactly as tree-agent words it', () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { EDITING_ERROR_PREFIX, EDITING_ERROR_NOT_RESET_PREFIX } = require('../lib/executor.js') as {
      EDITING_ERROR_PREFIX: string;
      EDITING_ERROR_NOT_RESET_PREFIX: string;
    };
    expect(EDITING_ERROR_PREFIX).toBe(PREFIX);
    expect(EDITING_ERROR_NOT_RESET_PREFIX).toBe(NOT_RESET_PREFIX);
  });
});

describe('@fluidframework/tree stays unloaded', () => {
  it('with a builder of its own, plain-object trees never load the package; a class instance may', () => {
    const script = `const Module = require('node:module');
      const resolve = Module._resolveFilename;
      let asked = 0;
      Module._resolveFilename = function (request, ...rest) {
        if (request.startsWith('@fluidframework/tree')) asked++;
        return resolve.call(this, request, ...rest);
      };
      const { createSandboxExecutor } = require(${JSON.stringify(join(__dirname, '..', 'lib', 'index.js'))});
      const editor = createSandboxExecutor({ createContext: (t) => ({ root: t.root }) });
      (async () => {
        const counts = [];
        await editor.run({ root: { a: 1 } }, 'context.root.a = 2');
        await editor({ root: [1] }, 'context.root.push(2)');
        counts.push(asked);
        class Doc { root = { a: 1 }; }
        await editor.run(new Doc(), 'context.root.a = 2');
        counts.push(asked);
        process.stdout.write(JSON.stringify(counts));
      })();`;
    const counts = JSON.parse(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' }));
    expect(counts).toEqual([0, 1]);
  });
});

describe('options', () => {
  it('uses the createContext option for every edit', async () => {
    const trees: unknown[] = [];
    const editor = createSandboxExecutor({
      createContext: (tree) => {
        trees.push(tree);
        return { root: 'from createContext', tag: (tree as { id: number }).id };
      },
    });
    const seen: unknown[] = [];
    const withRecord = createSandboxExecutor({ createContext: () => ({ record: (v: unknown) => seen.push(v) }) });
    await editor(
      { id: 1 },
      'if (context.root !== "from createContext" || context.tag !== 1) throw new Error("wrong context");',
    );
    await editor({ id: 2 }, 'if (context.tag !== 2) throw new Error("stale context");');
    await withRecord({}, 'context.record("hello");');
    expect(trees).toEqual([{ id: 1 }, { id: 2 }]);
    expect(seen).toEqual(['hello']);
  });

  it("without createContext, quickrealm/tree's builder refuses a tree that is not a SharedTree view or node", async () => {
    const editor = createSandboxExecutor();
    for (const attempt of [editor(fakeTree(), 'context.root = 1;'), editor.run(fakeTree(), 'context.root = 1;')]) {
      await expect(attempt).rejects.toMatchObject({
        name: 'TypeError',
        code: 'INVALID_INPUT',
        message: expect.stringMatching(/^INVALID_INPUT: createContext\(\) takes a tree view or a tree node/),
      });
    }
  });

  it('a global named context is reserved, in globals (Record or Map) and compartmentOptions.globals', () => {
    expect(() => createSandboxExecutor({ createContext, globals: { context: 1 } })).toThrow(/context.*reserved/);
    expect(() => createSandboxExecutor({ createContext, globals: new Map([['context', 1]]) })).toThrow(
      /context.*reserved/,
    );
    expect(() =>
      createSandboxExecutor({ createContext, compartmentOptions: { globals: new Map([['context', 1]]) } }),
    ).toThrow(/context.*reserved/);
  });

  it('extra globals from both options reach the code live', async () => {
    const log: string[] = [];
    const editor = createSandboxExecutor({
      createContext,
      globals: { note: (s: string) => log.push(`note:${s}`) },
      compartmentOptions: { globals: new Map<string, unknown>([['limit', 3]]) },
    });
    const tree = fakeTree({ items: [] as number[] });
    await editor(tree, 'for (let i = 0; i < limit; i++) context.root.items.push(i);\nnote("done");');
    expect(tree.root).toEqual({ items: [0, 1, 2] });
    expect(log).toEqual(['note:done']);
  });

  it('rejects unknown options and bad option shapes', () => {
    expect(() => createSandboxExecutor({ createContext, lockdown: true } as never)).toThrow(
      /unknown .*option 'lockdown'/,
    );
    expect(() => createSandboxExecutor({ createContext, globals: 5 } as never)).toThrow(/globals/);
  });

  it('limits apply to each edit', async () => {
    // The time limit leaves room to fill 8 MiB on a loaded machine, so the memory case hits memory first.
    const editor = createSandboxExecutor({ createContext, limits: { timeoutMs: 1500, memoryBytes: 8 * 1024 * 1024 } });
    const slow = await editor.run(fakeTree(), 'for (;;) {}');
    expect(slow.result.error?.code).toBe('TIMEOUT');
    const big = await editor.run(fakeTree(), 'const a = []; for (;;) a.push("x".repeat(1e5) + a.length);');
    expect(big.result.error?.code).toBe('MEMORY_LIMIT');
  });
});

describe('SES-shaped options', () => {
  it('accepts the lockdown options tree-agent users pass', async () => {
    const editor = createSandboxExecutor({
      createContext,
      lockdownOptions: { consoleTaming: 'unsafe', errorTaming: 'unsafe', stackFiltering: 'verbose' },
    });
    const tree = fakeTree({ n: 1 });
    await editor(tree, 'context.root.n = 2;');
    expect(tree.root).toEqual({ n: 2 });
  });

  it('consoleTaming unsafe sends guest console output to the host console', async () => {
    const spy = vi.spyOn(console, 'log').mockImplementation(() => {});
    const editor = createSandboxExecutor({ createContext, lockdownOptions: { consoleTaming: 'unsafe' } });
    await editor(fakeTree(), 'console.log("items:", context.root.items.length);');
    expect(spy).toHaveBeenCalledWith('items: 3');
  });

  it('without consoleTaming unsafe, guest console output stays in the run result', async () => {
    const spy = vi.spyOn(console, 'log').mockImplementation(() => {});
    const editor = createSandboxExecutor({ createContext });
    const r = await editor.run(fakeTree(), 'console.log("quiet");');
    expect(spy).not.toHaveBeenCalled();
    expect(r.result.logs).toEqual([{ level: 'log', message: 'quiet' }]);
  });

  it('errorTaming unsafe keeps guest frames on the thrown error stack', async () => {
    const code =
      'function checkItems(items) {\n  if (items.length < 5) throw new RangeError("too few items");\n}\ncheckItems(context.root.items);';
    const unsafe = createSandboxExecutor({ createContext, lockdownOptions: { errorTaming: 'unsafe' } });
    const err = (await unsafe(fakeTree(), code).catch((e: unknown) => e)) as Error;
    expect(err.name).toBe('RangeError');
    expect(err.stack).toMatch(/at checkItems \(sandbox\.js:2:\d+\)/);
    expect(err.stack).not.toContain('executor.js');

    const tamed = createSandboxExecutor({ createContext });
    const plain = (await tamed(fakeTree(), code).catch((e: unknown) => e)) as Error;
    expect(plain.stack).not.toMatch(/at checkItems|sandbox\.js:/);
    expect(plain.stack).toBe(`RangeError: ${plain.message}`);
  });

  it('creating many executors has no global side effect', async () => {
    const globalsBefore = Object.getOwnPropertyNames(globalThis).sort();
    const symbolsBefore = Object.getOwnPropertySymbols(globalThis).length;
    const editors = [];
    for (let i = 0; i < 50; i++) {
      editors.push(
        createSandboxExecutor({
          createContext,
          lockdownOptions: {
            consoleTaming: 'unsafe',
            errorTaming: 'unsafe',
            stackFiltering: 'verbose',
            overrideTaming: 'severe',
          },
          compartmentOptions: { globals: new Map([[`extra${i}`, i]]) },
        }),
      );
    }
    await editors[49]!(fakeTree(), 'Object.prototype.x = 1;').catch(() => {});
    expect(Object.isFrozen(Object.prototype)).toBe(false);
    expect(Object.isFrozen(Array.prototype)).toBe(false);
    expect(Object.isFrozen(Function.prototype)).toBe(false);
    expect(Object.getOwnPropertyNames(globalThis).sort()).toEqual(globalsBefore);
    expect(Object.getOwnPropertySymbols(globalThis)).toHaveLength(symbolsBefore);
    expect((globalThis as Record<symbol, unknown>)[Symbol.for('tree-agent.ses.locked')]).toBeUndefined();
    expect(({} as Record<string, unknown>).x).toBeUndefined();
    // host intrinsics remain mutable, as they were
    const probe = '__quickrealm_probe__';
    (Object.prototype as Record<string, unknown>)[probe] = 1;
    expect(({} as Record<string, unknown>)[probe]).toBe(1);
    delete (Object.prototype as Record<string, unknown>)[probe];
  });
});

describe("host mistakes are the host's", () => {
  it('bad limits or mode throw at creation instead of becoming an editing error', async () => {
    const { createSandboxExecutor: create } = await import('../lib/index.js');
    for (const options of [{ limits: { bogus: 1 } }, { limits: { timeoutMs: -1 } }, { mode: 'sloppy' }]) {
      let thrown: { code?: string; message?: string } | undefined;
      try {
        create({ createContext: (t: unknown) => t as object, ...(options as object) });
      } catch (e) {
        thrown = e as { code?: string };
      }
      expect(thrown?.code, JSON.stringify(options)).toBe('INVALID_INPUT');
    }
    // Good options still build an editor that works.
    const editor = create({ createContext: (t: unknown) => t as object, limits: { timeoutMs: 1000 } });
    expect((await editor.run({ root: {} }, 'context.root.x = 1')).type).toBe('success');
  });

  it('other bad options throw at creation, coded INVALID_INPUT', () => {
    const cases: [unknown, RegExp][] = [
      [{ createContext: 'createContext' }, /createContext must be a function.*got a string/],
      [{ createContext: {} }, /createContext must be a function.*got an object/],
      [{ createContext, lockdownOptions: 'unsafe' }, /lockdownOptions must be an object/],
      [{ createContext, compartmentOptions: 1 }, /compartmentOptions must be an object/],
      [{ createContext, compartmentOptions: { globals: 'x' } }, /compartmentOptions\.globals must be a Map/],
      [{ createContext, limits: { timeoutMs: 'soon' } }, /timeoutMs/],
      ['options', /takes an options object/],
    ];
    for (const [options, message] of cases) {
      let thrown: unknown;
      try {
        createSandboxExecutor(options as never);
      } catch (e) {
        thrown = e;
      }
      expect(thrown, JSON.stringify(options)).toBeInstanceOf(Error);
      expect(thrown, JSON.stringify(options)).toMatchObject({ code: 'INVALID_INPUT', message });
    }
  });

  it('bad edit arguments reject from both forms before any code runs', async () => {
    let built = 0;
    const editor = createSandboxExecutor({
      createContext: (tree) => {
        built++;
        return createContext(tree);
      },
    });
    const tree = fakeTree({ n: 0 });
    const cases: [unknown, unknown, RegExp][] = [
      [42, undefined, /^INVALID_INPUT: the edit code must be a string, got a number$/],
      [undefined, undefined, /^INVALID_INPUT: the edit code must be a string, got undefined$/],
      ['context.root.n++', 'fast', /^INVALID_INPUT: the edit options must be an object, got a string$/],
      ['context.root.n++', { timeoutMs: 5 }, /^INVALID_INPUT: unknown edit option 'timeoutMs'/],
      ['context.root.n++', { signal: 'stop' }, /^INVALID_INPUT: signal must be an AbortSignal$/],
    ];
    for (const [code, callOptions, message] of cases) {
      for (const form of [editor, editor.run]) {
        await expect(form(tree, code as string, callOptions as never), String(code)).rejects.toMatchObject({
          name: 'TypeError',
          code: 'INVALID_INPUT',
          message: expect.stringMatching(message),
        });
      }
    }
    expect(built).toBe(0);
    expect(tree.root).toEqual({ n: 0 });
    // The same editor still edits with good arguments.
    await editor.run(tree, 'context.root.n++', { signal: new AbortController().signal });
    expect(tree.root).toEqual({ n: 1 });
  });

  it('a createContext that returns no object is refused before the code runs', async () => {
    for (const made of [undefined, null, 'context']) {
      const editor = createSandboxExecutor({ createContext: () => made as never });
      for (const form of [editor, editor.run]) {
        await expect(form(fakeTree(), 'globalThis.ran = true;')).rejects.toMatchObject({
          name: 'TypeError',
          code: 'INVALID_INPUT',
          message: expect.stringMatching(/^INVALID_INPUT: createContext must return an object, got /),
        });
      }
    }
  });
});
