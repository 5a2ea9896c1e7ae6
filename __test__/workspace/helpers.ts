import { expect } from 'vitest';

// A minimal zip writer for building archives by hand, hostile ones included: stored
// (uncompressed) entries only, one local header per entry, a central directory and the end
// record. Every header field the tests need to bend can be overridden.

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

export function crc32(data: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of data) c = CRC_TABLE[(c ^ b) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

export interface RawEntry {
  /** Entry name; a Buffer allows bytes a string cannot carry. */
  name: string | Uint8Array;
  data?: string | Uint8Array;
  /** Central directory external attributes (Unix mode in the high 16 bits). */
  externalAttrs?: number;
  /** Central directory "version made by"; 0x031e (Unix) by default so modes are honoured. */
  versionMadeBy?: number;
  /** General purpose flags (bit 0: encrypted). */
  flags?: number;
  /** Compression method written to both headers (the data itself is always stored). */
  method?: number;
}

const bytesOf = (v: string | Uint8Array): Buffer => (typeof v === 'string' ? Buffer.from(v, 'utf8') : Buffer.from(v));

/** Builds a zip archive from `entries`, in order. */
export function makeZip(entries: RawEntry[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = bytesOf(e.name);
    const data = bytesOf(e.data ?? '');
    const crc = crc32(data);
    const flags = e.flags ?? 0;
    const method = e.method ?? 0;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4); // version needed
    local.writeUInt16LE(flags, 6);
    local.writeUInt16LE(method, 8);
    local.writeUInt16LE(0, 10); // time
    local.writeUInt16LE(0x21, 12); // date: 1980-01-01
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(name.length, 26);
    local.writeUInt16LE(0, 28);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(e.versionMadeBy ?? 0x031e, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(flags, 8);
    central.writeUInt16LE(method, 10);
    central.writeUInt16LE(0, 12);
    central.writeUInt16LE(0x21, 14);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt16LE(0, 30); // extra
    central.writeUInt16LE(0, 32); // comment
    central.writeUInt16LE(0, 34); // disk
    central.writeUInt16LE(0, 36); // internal attributes
    central.writeUInt32LE((e.externalAttrs ?? 0) >>> 0, 38);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, data);
    centrals.push(central, name);
    offset += local.length + name.length + data.length;
  }
  const cd = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(0, 4);
  end.writeUInt16LE(0, 6);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  end.writeUInt16LE(0, 20);
  return Buffer.concat([...locals, cd, end]);
}

/** Unix mode bits as zip external attributes. */
export const unixMode = (mode: number): number => (mode << 16) >>> 0;

/** Runs `fn`, expects it to throw an Error with a `code`, and returns that code. */
export function thrownCode(fn: () => unknown): string {
  let caught: unknown;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  expect(caught, 'expected a throw').toBeInstanceOf(Error);
  const code = (caught as { code?: unknown }).code;
  expect(typeof code).toBe('string');
  return code as string;
}

/** Like `thrownCode`, also returning the message. */
export function thrown(fn: () => unknown): { code: string; message: string; error: Error } {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(Error);
    const error = e as Error & { code?: string };
    return { code: String(error.code), message: error.message, error };
  }
  throw new Error('expected a throw');
}
