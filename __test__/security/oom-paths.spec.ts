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

// Engine patch 0024 (found by fuzzing): the memory limit failing the reallocation of a growing
// object's property table threw while the table was out of the collector's list, and the
// collection that the error started crashed the host. Each way of adding many properties is run
// under a sweep of limits, since which limit fails that one reallocation depends on the heap.
describe('running out of memory while an object grows is an error, never a crash', () => {
  const grows: Record<string, string> = {
    assignment: "const o = {}; for (let i = 0; i < 20000; i++) o['k' + i] = i;",
    'JSON.parse': `const o = JSON.parse('{' + Array.from({ length: 20000 }, (_, i) => '"k' + i + '":' + i).join(',') + '}');`,
    'Object.defineProperty':
      "const o = {}; for (let i = 0; i < 20000; i++) Object.defineProperty(o, 'k' + i, { value: i, enumerable: true });",
    'object spread':
      "const a = {}; for (let i = 0; i < 10000; i++) a['k' + i] = i; const o = { ...a, ...Object.fromEntries(Object.keys(a).map((k) => [k + 'x', 1])) };",
    'class fields on an instance':
      "class K { constructor() { for (let i = 0; i < 20000; i++) this['f' + i] = i } } const o = new K();",
  };
  for (const [name, grow] of Object.entries(grows)) {
    it(name, () => {
      const codes = new Set<string | undefined>();
      for (let kib = 1024; kib <= 4096; kib += 16) {
        const r = runSync(`${grow}\nreturn Object.keys(o).length`, {
          limits: { memoryBytes: kib << 10, timeoutMs: 5000 },
        });
        codes.add(r.error?.code);
      }
      // Small limits stop the run, large ones let it finish: both ends were reached.
      expect([...codes].sort()).toEqual(['MEMORY_LIMIT', undefined]);
      expectHealthy();
    });
  }
});
