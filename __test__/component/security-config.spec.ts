// securityConfig: limits, blocked patterns as warnings, custom validators, and host mistakes
// in a component's definition thrown as INVALID_INPUT.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Permission, type PublicState, type SecurityConfig, StatefulComponent, StateType } from '../../lib/index.js';
import { SearchComponent } from './fixtures.js';

function withConfig(securityConfig: SecurityConfig) {
  return new (class Limited extends SearchComponent {
    securityConfig = securityConfig;
  })();
}

describe('limits', () => {
  it('maxExecutionTime stops a runaway script with TIMEOUT and changes nothing', async () => {
    const c = withConfig({ maxExecutionTime: 100, maxIterations: 2 ** 53 });
    const started = Date.now();
    const r = await c.executeScript('search_box_state.search_pattern = "x";\nwhile (true) {}');
    expect(r.error?.code).toBe('TIMEOUT');
    expect(Date.now() - started).toBeLessThan(2000);
    expect(c.box.search_pattern).toBe('');
  });

  it('maxMemoryUsage is in MiB', async () => {
    const script =
      'const keep = [];\nfor (let i = 0; i < 64; i++) keep.push(new Uint8Array(1024 * 1024));\nsearch_box_state.search_pattern = "big";';
    const small = await withConfig({ maxMemoryUsage: 16 }).executeScript(script);
    expect(small.error?.code).toBe('MEMORY_LIMIT');
    const large = await withConfig({ maxMemoryUsage: 256 }).executeScript(script);
    expect(large.success).toBe(true);
  });
});

describe('blockedPatterns', () => {
  it('only warn, naming each pattern that matched (strings literally, RegExps as given)', async () => {
    const c = withConfig({ blockedPatterns: [/eval\s*\(/, 'process.', 'a.b*', /never/g] });
    const r = await c.executeScript(
      '// eval (x) and process.env are only text here\nsearch_box_state.search_pattern = "a.b*";',
    );
    expect(r.success).toBe(true);
    expect(r.warnings).toEqual([
      'blocked pattern /eval\\s*\\(/ found in the script',
      'blocked pattern "process." found in the script',
      'blocked pattern "a.b*" found in the script',
    ]);
    expect(c.box.search_pattern).toBe('a.b*');
  });

  it('a global RegExp matches the same way on every script', async () => {
    const c = withConfig({ blockedPatterns: [/pattern/g] });
    for (let i = 0; i < 3; i++) {
      const r = await c.executeScript('search_box_state.search_pattern = "pattern";');
      expect(r.warnings).toHaveLength(1);
    }
  });
});

describe('customValidator', () => {
  it('refuses a script before it runs with SCRIPT_REFUSED', async () => {
    let ran = false;
    class Guarded extends SearchComponent {
      securityConfig: SecurityConfig = { customValidator: (script) => !script.includes('forbidden') };
      protected override getScriptUtilities() {
        return {
          mark: () => {
            ran = true;
          },
        };
      }
    }
    const c = new Guarded();
    const r = await c.executeScript('mark(); search_box_state.search_pattern = "forbidden";');
    expect(r.success).toBe(false);
    expect(r.error).toEqual({
      code: 'SCRIPT_REFUSED',
      name: 'ScriptRefused',
      message: 'the script was refused by the component',
    });
    expect(ran).toBe(false);
    expect(c.box.search_pattern).toBe('');
    expect((await c.executeScript('search_box_state.search_pattern = "fine";')).success).toBe(true);
  });

  it('may be async and give its reason; a throwing validator refuses', async () => {
    const reasoned = withConfig({ customValidator: async () => ({ ok: false, reason: 'no loops please' }) });
    expect((await reasoned.executeScript('1')).error).toMatchObject({
      code: 'SCRIPT_REFUSED',
      message: 'no loops please',
    });
    const text = withConfig({ customValidator: () => 'too long' });
    expect((await text.executeScript('1')).error?.message).toBe('too long');
    const throwing = withConfig({
      customValidator: () => {
        throw new Error('boom');
      },
    });
    expect((await throwing.executeScript('1')).error).toMatchObject({
      code: 'SCRIPT_REFUSED',
      message: 'the script validator failed: boom',
    });
  });
});

describe('host mistakes throw INVALID_INPUT', () => {
  const cases: Record<string, SecurityConfig> = {
    'a negative time': { maxExecutionTime: -1 },
    'memory as a string': { maxMemoryUsage: '100' as unknown as number },
    'an unknown key': { maxCpu: 1 } as unknown as SecurityConfig,
    'network turned on': { allowNetwork: true as unknown as false },
    'a bad pattern': { blockedPatterns: [42 as unknown as string] },
  };
  for (const [name, config] of Object.entries(cases)) {
    it(`securityConfig with ${name}`, async () => {
      await expect(withConfig(config).executeScript('1')).rejects.toMatchObject({
        name: 'TypeError',
        code: 'INVALID_INPUT',
      });
    });
  }

  const stateCases: Record<string, unknown> = {
    'a name that is not an identifier': { 'my-state': { permission: 'rw', schema: z.object({}), state: {} } },
    'a name the realm already has': { console: { permission: 'rw', schema: z.object({}), state: {} } },
    'a reserved word': { delete: { permission: 'rw', schema: z.object({}), state: {} } },
    'an unknown permission': { s: { permission: 'x', schema: z.object({}), state: {} } },
    'no Standard Schema': { s: { permission: 'rw', schema: { parse() {} }, state: {} } },
    'a primitive state': { s: { permission: 'rw', schema: z.object({}), state: 3 } },
    'a private type in publicStates': {
      s: { type: StateType.private, permission: 'rw', schema: z.object({}), state: {} },
    },
  };
  for (const [name, publicStates] of Object.entries(stateCases)) {
    it(`publicStates with ${name}`, async () => {
      class Bad extends StatefulComponent {
        publicStates = publicStates as never;
      }
      await expect(new Bad().executeScript('1')).rejects.toMatchObject({ code: 'INVALID_INPUT' });
      await expect(new Bad().render()).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    });
  }

  it('a utility named like a state', async () => {
    class Clash extends SearchComponent {
      protected override getScriptUtilities() {
        return { search_box_state: () => 1 } as never;
      }
    }
    await expect(new Clash().executeScript('1')).rejects.toThrow(/the name 'search_box_state' is used twice/);
  });
});

describe('subclass fields', () => {
  it('are read at each call, after the constructor, and never clash with the base class', async () => {
    class Late extends StatefulComponent {
      // Names the base class could have used for itself.
      state = { note: 'subclass field' };
      completion = 'mine';
      publicStates: Record<string, PublicState> = {
        s: { type: StateType.public, permission: Permission.rw, schema: z.object({ n: z.number() }), state: { n: 1 } },
      };
    }
    const c = new Late();
    expect((await c.executeScript('s.n = 2;')).success).toBe(true);
    expect(c.state).toEqual({ note: 'subclass field' });
    expect(c.completion).toBe('mine');
    c.publicStates = {
      s: { type: StateType.public, permission: Permission.r, schema: z.object({ n: z.number() }), state: { n: 5 } },
    };
    expect((await c.executeScript('s.n = 3;')).error?.message).toMatch(/s is read-only/);
  });

  it('a getter on the subclass prototype is honoured', async () => {
    const box = { v: 'a' };
    class Getter extends StatefulComponent {}
    Object.defineProperty(Getter.prototype, 'publicStates', {
      get: () => ({
        g: { type: StateType.public, permission: Permission.rw, schema: z.object({ v: z.string() }), state: box },
      }),
    });
    await new Getter().executeScript('g.v = "b";');
    expect(box.v).toBe('b');
  });
});

describe('maxIterations: the engine step budget', () => {
  const LOOP = 'let i = 0;\nwhile (true) {\n  i++;\n  if (i % 100 === 0) console.log(i);\n}';

  it('stops a while (true) script with STEP_LIMIT and changes nothing', async () => {
    const c = withConfig({ maxIterations: 10_000 });
    const r = await c.executeScript(`search_box_state.search_pattern = "x";\n${LOOP}`);
    expect(r.success).toBe(false);
    expect(r.error?.code).toBe('STEP_LIMIT');
    expect(r.stats.steps).toBe(10_000);
    expect(c.box.search_pattern).toBe('');
  });

  it('stops the same script at the same step every time', async () => {
    const c = withConfig({ maxIterations: 5_000, maxExecutionTime: 60_000 });
    const outcomes = [];
    for (let i = 0; i < 3; i++) {
      const r = await c.executeScript(LOOP);
      outcomes.push({ code: r.error?.code, last: r.logs.at(-1)?.message, steps: r.stats.steps });
    }
    expect(outcomes[0].code).toBe('STEP_LIMIT');
    expect(Number(outcomes[0].last)).toBeGreaterThan(1000);
    expect(Number(outcomes[0].last)).toBeLessThan(5000);
    expect(outcomes[1]).toEqual(outcomes[0]);
    expect(outcomes[2]).toEqual(outcomes[0]);
  });

  it('a budget large enough for the work lets the script finish', async () => {
    const script = 'let n = 0;\nfor (let i = 0; i < 2000; i++) n += i;\nsearch_box_state.search_pattern = String(n);';
    expect((await withConfig({ maxIterations: 1_000 }).executeScript(script)).error?.code).toBe('STEP_LIMIT');
    const ok = withConfig({ maxIterations: 100_000 });
    expect((await ok.executeScript(script)).success).toBe(true);
    expect(ok.box.search_pattern).toBe('1999000');
  });
});
