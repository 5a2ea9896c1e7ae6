// URL and URLSearchParams inside the realm, compared with Node's own (WHATWG) implementations
// run on the same inputs in this process.
import { describe, expect, it } from 'vitest';
import { runSync } from '../../lib/index.js';

function inRealm(body: string): unknown {
  const r = runSync(body);
  if (!r.ok) return `error: ${r.error.name}: ${r.error.message}`;
  return r.value;
}

const PARTS = [
  'href',
  'origin',
  'protocol',
  'username',
  'password',
  'host',
  'hostname',
  'port',
  'pathname',
  'search',
  'hash',
] as const;

function partsOf(u: URL): string[] {
  return PARTS.map((p) => u[p]);
}

const PARSE: Array<[string, string?]> = [
  ['https://example.com'],
  ['HTTPS://User:Pa%20ss@EXAMPLE.com:443/a/./b/../c?q=1&r=a b#frag'],
  ['http://example.com:8080/path/to/file.html?x=%zz#h h'],
  ['https://münchen.de/straße'],
  ['https://xn--mnchen-3ya.de/'],
  ['http://[::1]:3000/api'],
  ['http://192.168.0.1/'],
  ['http://0x7f.1/'],
  ['file:///home/user/notes.txt'],
  ['mailto:someone@example.com?subject=hi'],
  ['data:text/plain,hello world'],
  ['blob:https://example.com/uuid'],
  ['ws://socket.example.com/chat'],
  ['https://example.com/?a=1&a=2&b=%F0%9F%98%80'],
  ['  https://trimmed.example.com/  '],
  ['https://example.com/\u00e9?\u00e9#\u00e9'],
  ['/api/users?id=3', 'https://example.com/v1/'],
  ['../up', 'https://example.com/a/b/c'],
  ['?only=query', 'https://example.com/page'],
  ['#only-hash', 'https://example.com/page?x=1'],
  ['//other.example.org/x', 'https://example.com/'],
  ['https://example.com:0/'],
  ['custom-scheme://host/path'],
];

const INVALID: Array<[string, string?]> = [
  ['not a url'],
  [''],
  ['http://exa mple.com'],
  ['https://example.com:99999/'],
  ['/relative'],
  ['http://[::1/'],
];

describe('URL parses as in Node', () => {
  for (const [input, base] of PARSE) {
    it(`${JSON.stringify(input)}${base ? ` against ${base}` : ''}`, () => {
      const expected = partsOf(new URL(input, base));
      const args = base === undefined ? JSON.stringify(input) : `${JSON.stringify(input)}, ${JSON.stringify(base)}`;
      expect(inRealm(`const u = new URL(${args}); return ${JSON.stringify(PARTS)}.map((p) => u[p])`)).toEqual(expected);
    });
  }

  for (const [input, base] of INVALID) {
    it(`refuses ${JSON.stringify(input)} with Node's error`, () => {
      expect(() => new URL(input, base)).toThrow(TypeError);
      const args = base === undefined ? JSON.stringify(input) : `${JSON.stringify(input)}, ${JSON.stringify(base)}`;
      expect(
        inRealm(
          `try { new URL(${args}); return 'parsed' } catch (e) { return [e instanceof TypeError, e.message, e.code, e.input] }`,
        ),
      ).toEqual([true, 'Invalid URL', 'ERR_INVALID_URL', input]);
      expect(inRealm(`return URL.canParse(${args})`)).toBe(false);
    });
  }

  it('URL.canParse and URL.parse', () => {
    expect(
      inRealm(
        `return [URL.canParse('https://a.b'), URL.canParse('x', 'https://a.b/'), URL.parse('nope'), URL.parse('/p', 'https://a.b').href]`,
      ),
    ).toEqual([true, true, null, 'https://a.b/p']);
  });

  it('toString, toJSON, JSON.stringify and string conversion give href', () => {
    const u = new URL('https://example.com/a?b=c');
    expect(
      inRealm(
        `const u = new URL('https://example.com/a?b=c'); return [String(u), u.toJSON(), JSON.stringify({ u }), \`\${u}\`]`,
      ),
    ).toEqual([String(u), u.toJSON(), JSON.stringify({ u }), `${u}`]);
  });
});

const SETTERS: Array<[string, string, string]> = [
  ['https://example.com/a?x=1#h', 'pathname', '/new path/ü'],
  ['https://example.com/a?x=1#h', 'search', '?y=2&z=a b'],
  ['https://example.com/a?x=1#h', 'search', ''],
  ['https://example.com/a?x=1#h', 'hash', 'section 2'],
  ['https://example.com/a?x=1#h', 'hash', ''],
  ['https://example.com/a', 'host', 'other.org:8443'],
  ['https://example.com/a', 'hostname', 'sub.example.com'],
  ['https://example.com/a', 'port', '8080'],
  ['https://example.com:8080/a', 'port', ''],
  ['https://example.com/a', 'port', '443'],
  ['https://example.com/a', 'port', 'abc'],
  ['https://example.com/a', 'protocol', 'http'],
  ['https://example.com/a', 'protocol', 'mailto'],
  ['https://example.com/a', 'username', 'me@home'],
  ['https://example.com/a', 'password', 's3cr:t'],
  ['https://example.com/a', 'href', 'http://replaced.example/'],
  ['mailto:a@b.c', 'hostname', 'ignored.example'],
];

describe('URL setters behave as in Node', () => {
  for (const [start, part, value] of SETTERS) {
    it(`${part} = ${JSON.stringify(value)} on ${start}`, () => {
      const u = new URL(start);
      (u as unknown as Record<string, string>)[part] = value;
      expect(
        inRealm(`const u = new URL(${JSON.stringify(start)}); u[${JSON.stringify(part)}] = ${JSON.stringify(value)};
          return ${JSON.stringify(PARTS)}.map((p) => u[p])`),
      ).toEqual(partsOf(u));
    });
  }

  it('an href that does not parse throws and leaves the URL alone', () => {
    expect(
      inRealm(
        `const u = new URL('https://a.b/'); try { u.href = 'nope' } catch (e) { return [e.name, u.href] } return 'no error'`,
      ),
    ).toEqual(['TypeError', 'https://a.b/']);
  });

  it('origin is read-only', () => {
    expect(
      inRealm(
        `'use strict'; const u = new URL('https://a.b/'); try { u.origin = 'x' } catch (e) { return e.name } return 'assigned'`,
      ),
    ).toBe('TypeError');
  });
});

describe('URLSearchParams behaves as in Node', () => {
  const script = (init: string, ops: string) =>
    `const p = new URLSearchParams(${init}); ${ops}; return [p.toString(), [...p], p.size]`;
  const inNode = (init: unknown, ops: (p: URLSearchParams) => void): unknown => {
    const p = new URLSearchParams(init as string);
    ops(p);
    return [p.toString(), [...p], p.size];
  };
  const cases: Array<[string, string, unknown, (p: URLSearchParams) => void, string]> = [
    ['a query string', `'?a=1&b=two words&c=%26&d'`, '?a=1&b=two words&c=%26&d', () => {}, ''],
    [
      'pairs',
      `[['x', '1'], ['y', 'é'], ['x', '2']]`,
      [
        ['x', '1'],
        ['y', 'é'],
        ['x', '2'],
      ],
      () => {},
      '',
    ],
    [
      'a record',
      `{ name: 'Ada Lovelace', year: 1815, ok: true }`,
      { name: 'Ada Lovelace', year: 1815, ok: true },
      () => {},
      '',
    ],
    [
      'append, set and delete',
      `'a=1&b=2&a=3'`,
      'a=1&b=2&a=3',
      (p) => {
        p.append('c', '4 5');
        p.set('a', 'only');
        p.delete('b');
      },
      `p.append('c', '4 5'); p.set('a', 'only'); p.delete('b')`,
    ],
    ['delete with a value', `'t=1&t=2&t=1'`, 't=1&t=2&t=1', (p) => p.delete('t', '1'), `p.delete('t', '1')`],
    ['sort is stable', `'z=1&a=2&z=0&b=3&a=1'`, 'z=1&a=2&z=0&b=3&a=1', (p) => p.sort(), 'p.sort()'],
    [
      'special characters',
      `''`,
      '',
      (p) => {
        p.append('q', "a+b c&d=e/f?g#h~*'()!");
        p.append('emoji', '😀');
      },
      `p.append('q', 'a+b c&d=e/f?g#h~*\\'()!'); p.append('emoji', '😀')`,
    ],
  ];
  for (const [name, init, nodeInit, ops, opsSource] of cases) {
    it(name, () => {
      expect(inRealm(script(init, opsSource))).toEqual(inNode(nodeInit, ops));
    });
  }

  it('get, getAll, has, keys, values, entries and forEach', () => {
    const p = new URLSearchParams('a=1&b=2&a=3');
    const seen: string[] = [];
    p.forEach((v, k) => {
      seen.push(`${k}=${v}`);
    });
    const expected = [
      p.get('a'),
      p.get('zz'),
      p.getAll('a'),
      p.has('b'),
      p.has('a', '3'),
      p.has('a', '9'),
      [...p.keys()],
      [...p.values()],
      [...p.entries()],
      seen,
    ];
    expect(
      inRealm(`const p = new URLSearchParams('a=1&b=2&a=3'); const seen = []; p.forEach((v, k) => seen.push(k + '=' + v));
        return [p.get('a'), p.get('zz'), p.getAll('a'), p.has('b'), p.has('a', '3'), p.has('a', '9'), [...p.keys()], [...p.values()], [...p.entries()], seen]`),
    ).toEqual(expected);
  });

  it('a URL and its searchParams stay in step both ways', () => {
    const u = new URL('https://shop.example/items?page=1&sort=price');
    u.searchParams.set('page', '2');
    u.searchParams.append('tag', 'red shoes');
    const afterParams = u.href;
    u.search = '?q=new';
    const afterSearch = [...u.searchParams];
    u.searchParams.delete('q');
    expect(
      inRealm(`const u = new URL('https://shop.example/items?page=1&sort=price');
        u.searchParams.set('page', '2'); u.searchParams.append('tag', 'red shoes');
        const afterParams = u.href; u.search = '?q=new'; const afterSearch = [...u.searchParams];
        u.searchParams.delete('q');
        return [afterParams, afterSearch, u.href, u.searchParams === u.searchParams]`),
    ).toEqual([afterParams, afterSearch, u.href, true]);
  });

  it("iterators are live and typed like Node's", () => {
    expect(
      inRealm(`const p = new URLSearchParams('a=1'); const it = p.keys(); p.append('b', '2');
        return [[...it], Object.prototype.toString.call(p), Object.prototype.toString.call(p.entries()), typeof p[Symbol.iterator]]`),
    ).toEqual([['a', 'b'], '[object URLSearchParams]', '[object URLSearchParams Iterator]', 'function']);
  });

  it('bad arguments throw TypeErrors', () => {
    expect(
      inRealm(`const out = []; for (const f of [() => new URLSearchParams([['a']]), () => new URLSearchParams([1]), () => new URLSearchParams().append('x'), () => URLSearchParams.prototype.get.call({}, 'a')]) {
        try { f(); out.push('ok') } catch (e) { out.push(e.name) } } return out`),
    ).toEqual(['TypeError', 'TypeError', 'TypeError', 'TypeError']);
  });
});

describe('URL in the realm is part of the frozen realm', () => {
  it('URL and URLSearchParams and their prototypes are frozen', () => {
    expect(
      inRealm(`return [Object.isFrozen(URL), Object.isFrozen(URL.prototype), Object.isFrozen(URLSearchParams.prototype),
        Object.isFrozen(Object.getPrototypeOf(new URLSearchParams().keys()))]`),
    ).toEqual([true, true, true, true]);
  });

  it('overriding a method on an instance works (the override mistake is fixed)', () => {
    expect(inRealm(`const u = new URL('https://a.b/'); u.toString = () => 'mine'; return String(u)`)).toBe('mine');
  });

  it("one run cannot see another run's URL state", () => {
    runSync(`globalThis.leak = new URL('https://secret.example/'); return 1`);
    expect(inRealm(`return typeof leak`)).toBe('undefined');
  });

  it('a huge input is refused quickly instead of stalling the run', () => {
    const r = runSync(
      `try { new URL('https://a.b/' + 'x'.repeat(9 << 20)) } catch (e) { return e.name } return 'parsed'`,
      {
        limits: { memoryBytes: 256 << 20 },
      },
    );
    expect(r.ok && r.value).toBe('RangeError');
  });
});
