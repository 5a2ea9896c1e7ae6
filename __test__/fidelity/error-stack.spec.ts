// `err.stack` begins with `Name: message` as in V8, computed when the stack is first read, so a
// name or message set after construction shows. Expected first lines come from Node itself.
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { runSync } from '../../lib/index.js';

// A separate Node process: the test runner's own stack formatting (source maps) would change
// what `stack` looks like in this one.
function firstLinesInNode(bodies: string[]): string[] {
  const script = `const vm = require('node:vm');
    const bodies = JSON.parse(process.argv[1]);
    process.stdout.write(JSON.stringify(bodies.map((b) =>
      vm.runInNewContext('(function () { "use strict"; ' + b + ' })().stack.split("\\\\n")[0]'))));`;
  return JSON.parse(execFileSync(process.execPath, ['-e', script, JSON.stringify(bodies)], { encoding: 'utf8' }));
}

function firstLineInRealm(body: string): string {
  const r = runSync(`return (function () { ${body} })().stack.split('\\n')[0]`);
  if (!r.ok) throw new Error(`${r.error.name}: ${r.error.message}`);
  return r.value as string;
}

const CASES: Record<string, string> = {
  'a plain Error': `return new Error('plain')`,
  'an Error without a message': `return new Error()`,
  'a TypeError': `return new TypeError('bad type')`,
  'a subclass that sets its name in the constructor': `
    class ValidationError extends Error { constructor(m) { super(m); this.name = 'ValidationError'; } }
    return new ValidationError('age must be positive')`,
  'a subclass with a name on its prototype': `
    class NotFound extends Error {}
    Object.defineProperty(NotFound.prototype, 'name', { value: 'NotFound' });
    return new NotFound('no such user')`,
  'a message changed before the stack is read': `const e = new Error('first'); e.message = 'second'; return e`,
  'captureStackTrace inside a subclass constructor': `
    class HttpError extends Error {
      constructor(status) { super('HTTP ' + status); Error.captureStackTrace(this, HttpError); this.name = 'HttpError'; }
    }
    return new HttpError(404)`,
  'an error with a cause': `return new Error('outer', { cause: new Error('inner') })`,
  'an AggregateError': `return new AggregateError([new Error('a')], 'many failed')`,
  'a multi-line message': `return new Error('line one\\nline two')`,
};

describe('err.stack begins with the name and message, as in Node', () => {
  const expected = firstLinesInNode(Object.values(CASES));
  Object.entries(CASES).forEach(([name, body], i) => {
    it(name, () => {
      expect(firstLineInRealm(body)).toBe(expected[i]);
    });
  });

  it('an engine error (the engine words its messages differently from V8)', () => {
    const r = runSync(`try { null.x } catch (e) { return [e.stack.split('\\n')[0], e.name + ': ' + e.message] }`);
    expect(r.ok).toBe(true);
    const [first, head] = r.value as [string, string];
    expect(first).toBe(head);
    expect(first.startsWith('TypeError: ')).toBe(true);
  });

  it('the frames follow the first line and name the guest file', () => {
    const r = runSync(`function inner() { return new Error('deep') } return inner().stack`, { filename: 'task.js' });
    expect(r.ok).toBe(true);
    const lines = String(r.value).split('\n');
    expect(lines[0]).toBe('Error: deep');
    expect(lines[1]).toMatch(/^ {4}at inner \(task\.js:1:\d+\)$/);
    // No trailing newline, as in V8.
    expect(String(r.value).endsWith('\n')).toBe(false);
  });

  it('the stack is fixed once read, as in V8', () => {
    const r = runSync(
      `const e = new Error('a'); const first = e.stack; e.message = 'b'; return [first === e.stack, e.stack.split('\\n')[0]]`,
    );
    expect(r.ok && r.value).toEqual([true, 'Error: a']);
  });

  it('a DOMException stack starts with its name and message', () => {
    const r = runSync(`return new DOMException('stopped', 'AbortError').stack.split('\\n')[0]`);
    expect(r.ok && r.value).toBe('AbortError: stopped');
  });

  it('a throwing name getter makes reading the stack throw, and the run still reports the error', () => {
    const r = runSync(`
      const e = new Error('m');
      Object.defineProperty(e, 'name', { get() { throw new RangeError('no name') } });
      let seen; try { e.stack } catch (x) { seen = x.message }
      return seen`);
    expect(r.ok && r.value).toBe('no name');
  });

  it('console.log prints the stack once, with its first line', () => {
    const r = runSync(
      `class E extends Error { constructor(m) { super(m); this.name = 'E' } } console.log(new E('shown')); return 1`,
    );
    expect(r.ok).toBe(true);
    const printed = r.logs[0]?.message ?? '';
    expect(printed.split('\n')[0]).toBe('E: shown');
    expect(printed.match(/E: shown/g)?.length).toBe(1);
    expect(printed).toMatch(/\n {4}at /);
  });

  it('the run result keeps the error line apart from the guest frames', () => {
    const r = runSync(`function f() { throw new TypeError('boom') } f()`);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.message).toBe('boom');
    expect(r.error.stack?.split('\n')[0]).toMatch(/^ {4}at f \(sandbox\.js:1:\d+\)$/);
  });
});
