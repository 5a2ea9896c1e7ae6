import { describe, expect, it } from 'vitest';
import { runSync } from '../../lib/index.js';
import { expectHealthy } from '../helpers.js';

// Operations that fail for lack of memory must release what they took: a reference leaked on
// such a path keeps objects alive past the run, and freeing the realm then aborts the process
// (engine patch 0010, found by fuzzing: setting the prototype of an array with a full heap).
describe('running out of memory in the middle of an operation leaks nothing', () => {
  // Fill the heap with a Set grown from inside its own forEach, keep it full, then act.
  const fill = 'const s = new Set([1]); try { s.forEach(() => s.add(Math.random())) } catch {}\n';
  const acts: Record<string, string> = {
    'Object.setPrototypeOf on an array': 'const t = [1]; Object.setPrototypeOf(t, {});',
    'Reflect.setPrototypeOf on an array':
      'const t = [1, 2]; Reflect.setPrototypeOf(t, Array.prototype.constructor.prototype === t ? null : {});',
    '__proto__ assignment on an array': 'const t = [1]; t.__proto__ = { marker: 1 };',
    'setPrototypeOf on a proxy over an array': 'const p = new Proxy([1], {}); Object.setPrototypeOf(p, {});',
    'setPrototypeOf on a function': 'const f = function () {}; Object.setPrototypeOf(f, {});',
    'setPrototypeOf on a class instance': 'class K {} const k = new K(); Object.setPrototypeOf(k, {});',
  };
  for (const [name, act] of Object.entries(acts)) {
    it(name, () => {
      const r = runSync(`${fill}try { ${act} } catch {}\nreturn 1`, {
        limits: { memoryBytes: 32 << 20, timeoutMs: 5000 },
      });
      // The run ends one way or the other; what matters is that freeing it does not abort.
      expect(['MEMORY_LIMIT', undefined]).toContain(r.error?.code);
      expectHealthy();
    });
  }
});
