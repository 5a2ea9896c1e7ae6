// What a host operation receives is plain copied data whose every key the policy inspected:
// no `__proto__` key (which `Object.assign` and spreads would read as a prototype), no getter, no
// guest object. `llmRules.maxTokensPerCall` reads every token-count field, at any depth and in
// any recognised spelling, so a handler that merges its options cannot be made to ask for more.
import { describe, expect, it } from 'vitest';
import { type OperationHandler, Session, type TurnResult } from '../../lib/index.js';

const CAP = 100;

/** An `llm.complete` handler as hosts write them: defaults merged with the caller's options. */
function mergingModel() {
  const asked: number[] = [];
  const received: unknown[][] = [];
  const handler = (prompt: unknown, options: unknown) => {
    received.push([prompt, options]);
    const settings: { temperature: number; maxTokens?: number } = { temperature: 0 };
    Object.assign(settings, options);
    asked.push(settings.maxTokens ?? 16);
    return `answer in ${settings.maxTokens ?? 16} tokens`;
  };
  return { asked, received, handler: handler as unknown as OperationHandler };
}

function session(handler: OperationHandler, extra: Record<string, OperationHandler> = {}) {
  return new Session({
    policy: { llmRules: { maxTokensPerCall: CAP } },
    operations: { 'llm.complete': handler, ...extra },
  });
}

function codeOf(turn: TurnResult): string | undefined {
  return 'code' in turn.outcome ? turn.outcome.code : undefined;
}

describe('an own __proto__ key never reaches a host operation', () => {
  it('the reproducer: 1,000,000 tokens past a cap of 100 through Object.assign is refused', async () => {
    const model = mergingModel();
    const s = session(model.handler);
    const t = await s.executeTurn(
      `return await llm.complete('q', JSON.parse('{"__proto__": {"maxTokens": 1000000}}'))`,
    );
    expect(t.outcome.tag).toBe('error');
    expect(model.asked).toEqual([]);
    expect(Math.max(0, ...model.asked)).toBeLessThanOrEqual(CAP);
    // The next call works.
    const ok = await s.executeTurn("return await llm.complete('q', { maxTokens: 50 })");
    expect(ok.outcome).toEqual({ tag: 'ok', value: 'answer in 50 tokens' });
  });

  it('every way of writing the key, at any depth and in any operation, is refused and audited', async () => {
    const model = mergingModel();
    const other: unknown[][] = [];
    const s = session(model.handler, {
      'tickets.update': ((...args: unknown[]) => {
        other.push(args);
        return Object.assign({}, ...(args as object[]));
      }) as OperationHandler,
    });
    for (const code of [
      `await llm.complete('q', { ['__proto__']: { maxTokens: 1e6 } })`,
      `const o = {}; Object.defineProperty(o, '__proto__', { value: { maxTokens: 1e6 }, enumerable: true }); await llm.complete('q', o)`,
      `await llm.complete('q', { nested: JSON.parse('{"__proto__": {"isAdmin": true}}') })`,
      `await llm.complete([JSON.parse('{"__proto__": {"maxTokens": 1e6}}')])`,
      `await tickets.update(JSON.parse('{"__proto__": {"isAdmin": true}}'))`,
    ]) {
      const t = await s.executeTurn(code);
      expect(t.outcome.tag, code).toBe('error');
      expect(JSON.stringify(t.outcome), code).toMatch(/__proto__/);
    }
    expect(model.received).toEqual([]);
    expect(other).toEqual([]);
    expect(s.audit.entries().filter((e) => /__proto__/.test(e.error ?? ''))).toHaveLength(5);
    expect(({} as { isAdmin?: boolean }).isAdmin).toBeUndefined();
    const ok = await s.executeTurn("return await tickets.update({ id: 1 }, { state: 'open' })");
    expect(ok.outcome).toEqual({ tag: 'ok', value: { id: 1, state: 'open' } });
  });

  it('a guest can catch the refusal, and the call did not happen', async () => {
    const model = mergingModel();
    const s = session(model.handler);
    const t = await s.executeTurn(`try {
        await llm.complete('q', JSON.parse('{"__proto__": {"maxTokens": 1000000}}'));
        return 'ran';
      } catch (e) { return e.name + ': ' + e.message; }`);
    expect(t.outcome).toMatchObject({ tag: 'ok', value: expect.stringMatching(/^TypeError: .*__proto__/) });
    expect(model.received).toEqual([]);
  });
});

describe('maxTokensPerCall reads every token count the arguments carry', () => {
  it('nested options, arrays of requests and other spellings above the cap are refused', async () => {
    const model = mergingModel();
    const s = session(model.handler);
    for (const code of [
      "await llm.complete({ prompt: 'q', options: { maxTokens: 1e6 } })",
      "await llm.complete('q', { generation: { config: { max_tokens: 101 } } })",
      "await llm.complete([{ prompt: 'a', maxTokens: 50 }, { prompt: 'b', maxTokens: 1e6 }])",
      "await llm.complete('q', [[[{ max_tokens: 5000 }]]])",
      "await llm.complete('q', { max_completion_tokens: 1e6 })",
      "await llm.complete('q', { maxOutputTokens: 1e6 })",
      "await llm.complete('q', { max_output_tokens: 1e6 })",
      "await llm.complete('q', { max_new_tokens: 1e6 })",
      "await llm.complete('q', { max_tokens_to_sample: 1e6 })",
      "await llm.complete('q', { MaxTokens: 1e6 })",
      "await llm.complete('q', { 'max-tokens': 1e6 })",
      "await llm.complete('q', { maxTokens: '1000000' })",
      "await llm.complete('q', { maxTokens: null })",
    ]) {
      const t = await s.executeTurn(code);
      expect(codeOf(t), code).toBe('POLICY_VIOLATION');
      expect(t.outcome, code).toMatchObject({ rule: 'llmRules.maxTokensPerCall' });
    }
    expect(model.received).toEqual([]);
  });

  it('counts within the cap, wherever they are, still run', async () => {
    const model = mergingModel();
    const s = session(model.handler);
    const t = await s.executeTurn(
      "return await llm.complete('q', { maxTokens: 100, options: { max_tokens: 80 }, list: [{ maxOutputTokens: 1 }] })",
    );
    expect(t.outcome).toEqual({ tag: 'ok', value: 'answer in 100 tokens' });
    // A prompt that merely mentions a field name is text, not a count.
    const text = await s.executeTurn(`return await llm.complete('maxTokens: 1000000', { note: 'max_tokens' })`);
    expect(text.outcome.tag).toBe('ok');
    expect(model.asked).toEqual([100, 16]);
  });

  it('deep and wide arguments are inspected whole, quickly', async () => {
    const model = mergingModel();
    const s = session(model.handler);
    const started = performance.now();
    // As deep as the marshaller lets a value cross (128 levels), and 20,000 entries wide.
    const deep = await s.executeTurn(
      "let o = { maxTokens: 1e6 }; for (let i = 0; i < 120; i++) o = { o }; await llm.complete('q', o)",
    );
    const deepProto = await s.executeTurn(
      `let o = JSON.parse('{"__proto__": {}}'); for (let i = 0; i < 120; i++) o = { o, list: [i] }; await llm.complete('q', o)`,
    );
    const wide = await s.executeTurn(
      "const a = []; for (let i = 0; i < 20000; i++) a.push({ i }); a.push({ max_tokens: 1e6 }); await llm.complete('q', a)",
    );
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(deep.outcome).toMatchObject({ code: 'POLICY_VIOLATION', rule: 'llmRules.maxTokensPerCall' });
    expect(deepProto.outcome).toMatchObject({ tag: 'error', name: 'TypeError' });
    expect(wide.outcome).toMatchObject({ code: 'POLICY_VIOLATION', rule: 'llmRules.maxTokensPerCall' });
    expect(model.received).toEqual([]);
  });
});

describe('handlers receive copies', () => {
  it('getters, class instances and functions do not reach the handler: plain data properties only', async () => {
    const received: unknown[][] = [];
    const s = session(((...args: unknown[]) => {
      received.push(args);
      return 'ok';
    }) as OperationHandler);
    const t = await s.executeTurn(`let reads = 0;
      class Options { constructor() { this.maxTokens = 10 } get extra() { reads++; return 5 } }
      const o = { get maxTokens() { reads++; return 20 }, nested: new Options() };
      await llm.complete('q', o);
      return reads`);
    expect(t.outcome).toEqual({ tag: 'ok', value: 1 });
    const [[, options]] = received as [[string, Record<string, unknown>]];
    expect(Object.getPrototypeOf(options)).toBe(Object.prototype);
    const descriptor = Object.getOwnPropertyDescriptor(options, 'maxTokens');
    expect(descriptor).toMatchObject({ value: 20, writable: true });
    expect(descriptor?.get).toBeUndefined();
    expect(Object.getPrototypeOf(options.nested)).toBe(Object.prototype);
    expect(options.nested).toEqual({ maxTokens: 10 });
  });
});
