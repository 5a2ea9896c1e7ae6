// TextEncoder, TextDecoder (UTF-8) and crypto.getRandomValues/randomUUID, over three native
// helpers the host passes in: utf8Encode(string) -> ArrayBuffer, utf8Decode(view, fatal) ->
// string, randomBytes(n) -> ArrayBuffer. The classes follow the WHATWG Encoding and Web Crypto
// specifications for what they offer; TextDecoder decodes whole inputs (`stream` is accepted and
// buffers an incomplete trailing sequence until the next call).
(utf8Encode, utf8Decode, randomBytes) => {
  'use strict';
  const UTF8_LABELS = ['utf-8', 'utf8', 'unicode-1-1-utf-8', 'unicode11utf8', 'unicode20utf8', 'x-unicode20utf8'];
  const MAX_RANDOM_BYTES = 65536;
  const isView = ArrayBuffer.isView;
  const TypedArrayProto = Object.getPrototypeOf(Uint8Array.prototype);
  const taName = Object.getOwnPropertyDescriptor(TypedArrayProto, Symbol.toStringTag).get;

  class TextEncoder {
    get encoding() {
      return 'utf-8';
    }
    encode(input = '') {
      return new Uint8Array(utf8Encode(String(input)));
    }
    encodeInto(source, destination) {
      if (!(destination instanceof Uint8Array)) {
        throw new TypeError('The "destination" argument must be a Uint8Array');
      }
      const text = String(source);
      let read = 0;
      let written = 0;
      for (const ch of text) {
        const cp = ch.codePointAt(0);
        // A lone surrogate is encoded as U+FFFD (3 bytes), like encode().
        const size = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
        if (written + size > destination.length) break;
        destination.set(new Uint8Array(utf8Encode(ch)), written);
        written += size;
        read += ch.length;
      }
      return { read, written };
    }
  }

  const decoderState = new WeakMap();

  class TextDecoder {
    constructor(label = 'utf-8', options = {}) {
      const name = String(label).trim().toLowerCase();
      if (!UTF8_LABELS.includes(name)) {
        throw new RangeError(`The "${label}" encoding is not supported`);
      }
      const opts = options ?? {};
      decoderState.set(this, {
        fatal: Boolean(opts.fatal),
        ignoreBOM: Boolean(opts.ignoreBOM),
        pending: [],
        bomSeen: false,
      });
    }
    get encoding() {
      return 'utf-8';
    }
    get fatal() {
      return decoderState.get(this).fatal;
    }
    get ignoreBOM() {
      return decoderState.get(this).ignoreBOM;
    }
    decode(input, options = {}) {
      const state = decoderState.get(this);
      if (state === undefined) throw new TypeError('Illegal invocation');
      let bytes;
      if (input === undefined) {
        bytes = new Uint8Array(0);
      } else if (input instanceof ArrayBuffer) {
        bytes = new Uint8Array(input);
      } else if (isView(input)) {
        bytes = new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
      } else {
        throw new TypeError('The "input" argument must be an ArrayBuffer or an ArrayBufferView');
      }
      const stream = Boolean(options?.stream);
      if (state.pending.length > 0) {
        const joined = new Uint8Array(state.pending.length + bytes.length);
        joined.set(state.pending);
        joined.set(bytes, state.pending.length);
        bytes = joined;
        state.pending = [];
      }
      if (stream) {
        // Keep an incomplete sequence at the end for the next call.
        let cut = bytes.length;
        for (let back = 1; back <= 3 && back <= bytes.length; back++) {
          const b = bytes[bytes.length - back];
          if ((b & 0xc0) !== 0x80) {
            const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
            if (need > back) cut = bytes.length - back;
            break;
          }
        }
        state.pending = Array.from(bytes.subarray(cut));
        bytes = bytes.subarray(0, cut);
      }
      let text = utf8Decode(bytes, state.fatal);
      if (!state.ignoreBOM && !state.bomSeen && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      state.bomSeen = stream && (state.bomSeen || bytes.length > 0);
      return text;
    }
  }

  const crypto = {
    getRandomValues(array) {
      const kind = isView(array) ? taName.call(array) : undefined;
      if (kind === undefined || kind === 'Float16Array' || kind === 'Float32Array' || kind === 'Float64Array') {
        throw new DOMException('The data argument must be an integer-type TypedArray', 'TypeMismatchError');
      }
      if (array.byteLength > MAX_RANDOM_BYTES) {
        throw new DOMException(
          `The ArrayBufferView's byte length (${array.byteLength}) exceeds the number of bytes of entropy available via this API (${MAX_RANDOM_BYTES})`,
          'QuotaExceededError',
        );
      }
      new Uint8Array(array.buffer, array.byteOffset, array.byteLength).set(
        new Uint8Array(randomBytes(array.byteLength)),
      );
      return array;
    },
    randomUUID() {
      const b = new Uint8Array(randomBytes(16));
      b[6] = (b[6] & 0x0f) | 0x40;
      b[8] = (b[8] & 0x3f) | 0x80;
      const hex = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
      return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
    },
  };
  return { TextEncoder, TextDecoder, crypto };
};
