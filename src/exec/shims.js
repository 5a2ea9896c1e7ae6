(function (ops) {
  'use strict';
  // Builds the fs, fs/promises, path and os modules over the native `ops`. Runs once per realm
  // before any guest code, so the intrinsics captured here are the originals.
  const O = Object;
  const freeze = O.freeze;
  const define = O.defineProperty;
  const setProto = O.setPrototypeOf;
  const ownNames = O.getOwnPropertyNames;
  const describeProp = O.getOwnPropertyDescriptor;
  const apply = Reflect.apply;
  const isView = ArrayBuffer.isView;
  const U8 = Uint8Array;
  const AB = ArrayBuffer;
  const PromiseCtor = Promise;
  const DateCtor = Date;
  const ceil = Math.ceil;
  const StringCtor = String;
  const TypeErrorCtor = TypeError;

  function withCode(err, code) {
    define(err, 'code', { value: code, writable: true, enumerable: true, configurable: true });
    return err;
  }

  function show(v) {
    if (v === null) return 'null';
    if (v === undefined) return 'undefined';
    const t = typeof v;
    if (t === 'function') return 'function ' + (v.name || '<anonymous>');
    if (t === 'object') {
      const proto = O.getPrototypeOf(v);
      const ctor = proto && describeProp(proto, 'constructor');
      const name = ctor && typeof ctor.value === 'function' ? ctor.value.name : '';
      return name ? 'an instance of ' + name : '[Object: null prototype]';
    }
    if (t === 'string') return "type string ('" + (v.length > 28 ? v.slice(0, 25) + '...' : v) + "')";
    if (t === 'symbol') return 'type symbol';
    return 'type ' + t + ' (' + StringCtor(v) + ')';
  }

  function argType(name, expected, value) {
    return withCode(
      new TypeErrorCtor('The "' + name + '" argument must be ' + expected + '. Received ' + show(value)),
      'ERR_INVALID_ARG_TYPE',
    );
  }

  function pathArg(p, name) {
    if (typeof p !== 'string') throw argType(name || 'path', 'of type string', p);
    return p;
  }

  function encodingName(e) {
    if (e === undefined || e === null || e === 'buffer') return null;
    switch (typeof e === 'string' ? e.toLowerCase() : e) {
      case 'utf8':
      case 'utf-8':
        return 'utf8';
      case 'latin1':
      case 'binary':
        return 'latin1';
      case 'ascii':
        return 'ascii';
      case 'hex':
        return 'hex';
      case 'base64':
        return 'base64';
      case 'base64url':
        return 'base64url';
    }
    throw withCode(
      new TypeErrorCtor("The argument 'encoding' is invalid encoding. Received " + show(e)),
      'ERR_INVALID_ARG_VALUE',
    );
  }

  function optionsOf(options) {
    if (options === undefined || options === null) return {};
    if (typeof options === 'string') return { encoding: options };
    if (typeof options === 'object') return options;
    throw argType('options', 'one of type string or an instance of Object', options);
  }

  function dataArg(data) {
    if (typeof data === 'string') return data;
    if (data instanceof U8) return data;
    if (isView(data)) return new U8(data.buffer, data.byteOffset, data.byteLength);
    if (data instanceof AB) return new U8(data);
    throw argType('data', 'of type string or an instance of Uint8Array, TypedArray, or DataView', data);
  }

  function writeFlag(flag, fallback) {
    const f = flag === undefined || flag === null ? fallback : StringCtor(flag);
    switch (f) {
      case 'w':
      case 'w+':
        return 'w';
      case 'wx':
      case 'xw':
      case 'wx+':
      case 'xw+':
        return 'wx';
      case 'a':
      case 'a+':
      case 'as':
      case 'as+':
        return 'a';
      case 'ax':
      case 'xa':
      case 'ax+':
      case 'xa+':
        return 'ax';
    }
    throw withCode(new TypeErrorCtor("The value '" + f + "' is invalid for option 'flag'"), 'ERR_INVALID_ARG_VALUE');
  }

  /** Bytes read from a file: a Uint8Array whose toString() decodes (UTF-8 by default). */
  class FileBytes extends U8 {
    toString(encoding, start, end) {
      const enc = encoding === undefined ? 'utf8' : encodingName(encoding) || 'utf8';
      const view = start === undefined && end === undefined ? this : U8.prototype.subarray.call(this, start, end);
      return ops.decode(view, enc);
    }
  }

  const S_IFMT = 0o170000;
  const S_IFDIR = 0o040000;
  const S_IFREG = 0o100000;

  class Stats {
    constructor(isDir, size, mtimeMs) {
      this.dev = 0;
      this.mode = isDir ? S_IFDIR | 0o755 : S_IFREG | 0o644;
      this.nlink = 1;
      this.uid = 0;
      this.gid = 0;
      this.rdev = 0;
      this.blksize = 4096;
      this.ino = 0;
      this.size = size;
      this.blocks = ceil(size / 512);
      this.atimeMs = mtimeMs;
      this.mtimeMs = mtimeMs;
      this.ctimeMs = mtimeMs;
      this.birthtimeMs = mtimeMs;
      this.atime = new DateCtor(mtimeMs);
      this.mtime = new DateCtor(mtimeMs);
      this.ctime = new DateCtor(mtimeMs);
      this.birthtime = new DateCtor(mtimeMs);
    }
    isFile() {
      return (this.mode & S_IFMT) === S_IFREG;
    }
    isDirectory() {
      return (this.mode & S_IFMT) === S_IFDIR;
    }
  }

  class Dirent {
    #dir;
    constructor(name, isDir, parentPath) {
      this.name = name;
      this.parentPath = parentPath;
      this.path = parentPath;
      this.#dir = isDir;
    }
    isFile() {
      return !this.#dir;
    }
    isDirectory() {
      return this.#dir;
    }
  }

  // Only files and folders exist here: never a link, a pipe, a socket or a device.
  const neverSpecial = ['isSymbolicLink', 'isFIFO', 'isSocket', 'isBlockDevice', 'isCharacterDevice'];
  for (const Kind of [Stats, Dirent]) {
    for (const name of neverSpecial) {
      const method = {
        [name]() {
          return false;
        },
      }[name];
      define(Kind.prototype, name, { value: method, writable: true, enumerable: false, configurable: true });
    }
  }

  function flagOf(options, key) {
    return options !== null && typeof options === 'object' ? Boolean(options[key]) : false;
  }

  // ----- synchronous fs -----

  function readFileSync(path, options) {
    pathArg(path);
    const enc = encodingName(optionsOf(options).encoding);
    if (enc === null) return setProto(ops.read(path), FileBytes.prototype);
    return ops.readText(path, enc);
  }

  function writeFileSync(path, data, options) {
    pathArg(path);
    const o = optionsOf(options);
    ops.write(path, dataArg(data), encodingName(o.encoding) || 'utf8', writeFlag(o.flag, 'w'));
  }

  function appendFileSync(path, data, options) {
    pathArg(path);
    const o = optionsOf(options);
    ops.write(path, dataArg(data), encodingName(o.encoding) || 'utf8', writeFlag(o.flag, 'a'));
  }

  function existsSync(path) {
    return typeof path === 'string' && ops.exists(path);
  }

  function accessSync(path) {
    ops.access(pathArg(path));
  }

  function mkdirSync(path, options) {
    const recursive = flagOf(options, 'recursive');
    const first = ops.mkdir(pathArg(path), recursive);
    return recursive ? first : undefined;
  }

  function joinChild(dir, name) {
    return dir === '~' || dir === '' ? name : dir.endsWith('/') ? dir + name : dir + '/' + name;
  }

  function readdirSync(path, options) {
    pathArg(path);
    const o = optionsOf(options);
    encodingName(o.encoding);
    const entries = ops.readdir(path, Boolean(o.recursive));
    const out = [];
    for (let i = 0; i < entries.length; i++) {
      const rel = entries[i][0];
      if (!o.withFileTypes) {
        out.push(rel);
        continue;
      }
      const slash = rel.lastIndexOf('/');
      const parent = slash === -1 ? path : joinChild(path, rel.slice(0, slash));
      out.push(new Dirent(slash === -1 ? rel : rel.slice(slash + 1), entries[i][1], parent));
    }
    return out;
  }

  function statSync(path, options) {
    pathArg(path);
    if (options !== null && typeof options === 'object' && options.throwIfNoEntry === false && !ops.exists(path)) {
      return undefined;
    }
    const s = ops.stat(path);
    return new Stats(s[0], s[1], s[2]);
  }

  function unlinkSync(path) {
    ops.unlink(pathArg(path));
  }

  function rmdirSync(path, options) {
    ops.rmdir(pathArg(path), flagOf(options, 'recursive'));
  }

  function rmSync(path, options) {
    ops.rm(pathArg(path), flagOf(options, 'recursive'), flagOf(options, 'force'));
  }

  function renameSync(oldPath, newPath) {
    ops.rename(pathArg(oldPath, 'oldPath'), pathArg(newPath, 'newPath'));
  }

  function copyFileSync(src, dest, mode) {
    ops.copy(pathArg(src, 'src'), pathArg(dest, 'dest'), typeof mode === 'number' && (mode & 1) === 1);
  }

  function realpathSync(path) {
    return ops.realpath(pathArg(path));
  }

  const sync = {
    readFileSync,
    writeFileSync,
    appendFileSync,
    existsSync,
    accessSync,
    mkdirSync,
    readdirSync,
    statSync,
    lstatSync: statSync,
    unlinkSync,
    rmdirSync,
    rmSync,
    renameSync,
    copyFileSync,
    realpathSync,
  };

  const constants = {
    F_OK: 0,
    R_OK: 4,
    W_OK: 2,
    X_OK: 1,
    COPYFILE_EXCL: 1,
    COPYFILE_FICLONE: 2,
    COPYFILE_FICLONE_FORCE: 4,
  };

  // ----- promises and callbacks over the same operations -----

  const promises = { constants };
  const callbacks = {};
  const asyncNames = [
    'readFile',
    'writeFile',
    'appendFile',
    'access',
    'mkdir',
    'readdir',
    'stat',
    'lstat',
    'unlink',
    'rmdir',
    'rm',
    'rename',
    'copyFile',
    'realpath',
  ];
  for (let i = 0; i < asyncNames.length; i++) {
    const name = asyncNames[i];
    const fn = sync[name + 'Sync'];
    promises[name] = {
      async [name](...args) {
        return apply(fn, undefined, args);
      },
    }[name];
    callbacks[name] = {
      [name](...args) {
        const cb = args.length > 0 ? args[args.length - 1] : undefined;
        if (typeof cb !== 'function') throw argType('cb', 'of type function', cb);
        const rest = args.slice(0, -1);
        PromiseCtor.resolve().then(() => {
          let result;
          try {
            result = apply(fn, undefined, rest);
          } catch (e) {
            cb(e);
            return;
          }
          cb(null, result);
        });
      },
    }[name];
  }
  callbacks.exists = function exists(path, cb) {
    if (typeof cb !== 'function') throw argType('cb', 'of type function', cb);
    const found = existsSync(path);
    PromiseCtor.resolve().then(() => cb(found));
  };

  const fs = O.assign({}, sync, callbacks, { promises, constants, Stats, Dirent });

  // ----- path (POSIX; '~' and '~/...' are rooted at the workspace home) -----

  function assertPath(p, name) {
    if (typeof p !== 'string') throw argType(name || 'path', 'of type string', p);
  }

  function rootOf(p) {
    if (p[0] === '/') return '/';
    if (p === '~' || p.startsWith('~/')) return '~';
    return '';
  }

  function normalizeParts(parts, rooted) {
    const out = [];
    for (let i = 0; i < parts.length; i++) {
      const s = parts[i];
      if (s === '' || s === '.') continue;
      if (s === '..') {
        if (out.length > 0 && out[out.length - 1] !== '..') out.pop();
        else if (!rooted) out.push('..');
        continue;
      }
      out.push(s);
    }
    return out;
  }

  function bodyOf(p, root) {
    return root === '~' ? p.slice(1) : p;
  }

  function normalize(p) {
    assertPath(p);
    if (p === '') return '.';
    const root = rootOf(p);
    const trailing = p[p.length - 1] === '/';
    let body = normalizeParts(bodyOf(p, root).split('/'), root !== '').join('/');
    if (root === '~') return body === '' ? (trailing ? '~/' : '~') : '~/' + body + (trailing ? '/' : '');
    if (body === '' && root === '') body = '.';
    if (body !== '' && body !== '.' && trailing) body += '/';
    else if (body === '.' && trailing) body = './';
    return root + body;
  }

  function join(...parts) {
    let joined = '';
    for (let i = 0; i < parts.length; i++) {
      assertPath(parts[i]);
      if (parts[i].length > 0) joined = joined === '' ? parts[i] : joined + '/' + parts[i];
    }
    return joined === '' ? '.' : normalize(joined);
  }

  function resolve(...parts) {
    let resolved = '';
    let root = '';
    for (let i = parts.length - 1; i >= -1 && root === ''; i--) {
      const p = i >= 0 ? parts[i] : '~';
      assertPath(p, 'paths[' + i + ']');
      if (p === '') continue;
      resolved = resolved === '' ? p : p + '/' + resolved;
      root = rootOf(p);
    }
    const body = normalizeParts(bodyOf(resolved, root).split('/'), true).join('/');
    if (root === '~') return body === '' ? '~' : '~/' + body;
    return '/' + body;
  }

  function isAbsolute(p) {
    assertPath(p);
    return rootOf(p) !== '';
  }

  function trimTrailing(p) {
    let end = p.length;
    while (end > 1 && p[end - 1] === '/') end--;
    return p.slice(0, end);
  }

  function dirname(p) {
    assertPath(p);
    if (p === '') return '.';
    const t = trimTrailing(p);
    const slash = t.lastIndexOf('/');
    if (slash === -1) return '.';
    if (slash === 0) return '/';
    return trimTrailing(t.slice(0, slash));
  }

  function basename(p, ext) {
    assertPath(p);
    if (ext !== undefined) assertPath(ext, 'ext');
    const t = p === '/' ? '' : trimTrailing(p);
    const base = t.slice(t.lastIndexOf('/') + 1);
    if (ext !== undefined && ext !== '' && base !== ext && base.endsWith(ext))
      return base.slice(0, base.length - ext.length);
    return base;
  }

  function extname(p) {
    const base = basename(p);
    const dot = base.lastIndexOf('.');
    return dot <= 0 ? '' : base.slice(dot);
  }

  function relative(from, to) {
    assertPath(from, 'from');
    assertPath(to, 'to');
    const a = resolve(from);
    const b = resolve(to);
    if (a === b) return '';
    if (rootOf(a) !== rootOf(b)) return b;
    const split = (p) => {
      const body = bodyOf(p, rootOf(p));
      return body.split('/').filter((s) => s !== '');
    };
    const pa = split(a);
    const pb = split(b);
    let common = 0;
    while (common < pa.length && common < pb.length && pa[common] === pb[common]) common++;
    const up = [];
    for (let i = common; i < pa.length; i++) up.push('..');
    return up.concat(pb.slice(common)).join('/');
  }

  function parse(p) {
    assertPath(p);
    const root = p[0] === '/' ? '/' : '';
    const base = basename(p);
    const ext = extname(p);
    const t = trimTrailing(p);
    const dir = t.lastIndexOf('/') === -1 ? '' : dirname(p);
    return { root, dir, base, ext, name: ext ? base.slice(0, base.length - ext.length) : base };
  }

  function format(obj) {
    if (obj === null || typeof obj !== 'object') throw argType('pathObject', 'of type object', obj);
    const dir = obj.dir || obj.root || '';
    const base = obj.base || (obj.name || '') + (obj.ext ? (obj.ext[0] === '.' ? '' : '.') + obj.ext : '');
    if (!dir) return base;
    return dir === obj.root ? dir + base : dir + '/' + base;
  }

  const path = {
    sep: '/',
    delimiter: ':',
    normalize,
    join,
    resolve,
    isAbsolute,
    dirname,
    basename,
    extname,
    relative,
    parse,
    format,
    toNamespacedPath: (p) => p,
  };
  path.posix = path;

  // ----- os -----

  const os = {
    EOL: '\n',
    devNull: '/dev/null',
    homedir: () => '~',
    tmpdir: () => '~/tmp',
    platform: () => 'linux',
    type: () => 'Linux',
    arch: () => 'x64',
    machine: () => 'x86_64',
    release: () => '0.0.0',
    version: () => 'quickrealm sandbox',
    hostname: () => 'sandbox',
    endianness: () => 'LE',
    uptime: () => 0,
    loadavg: () => [0, 0, 0],
    totalmem: () => 0,
    freemem: () => 0,
    cpus: () => [],
    availableParallelism: () => 1,
    networkInterfaces: () => ({}),
    userInfo: () => ({ uid: -1, gid: -1, username: 'sandbox', homedir: '~', shell: null }),
    constants: { signals: {}, errno: {} },
  };

  // Nothing here is reachable from the global object, so lockdown would not see it: freeze it
  // all now (own properties only; prototypes are intrinsics that lockdown freezes).
  const seen = new Set();
  function deepFreeze(v) {
    if ((typeof v !== 'object' && typeof v !== 'function') || v === null || seen.has(v)) return;
    seen.add(v);
    const names = ownNames(v);
    for (let i = 0; i < names.length; i++) {
      const d = describeProp(v, names[i]);
      if ('value' in d) deepFreeze(d.value);
      else {
        deepFreeze(d.get);
        deepFreeze(d.set);
      }
    }
    freeze(v);
  }
  const out = { fs, promises, path, os };
  deepFreeze(out);
  deepFreeze(FileBytes);
  return out;
});
