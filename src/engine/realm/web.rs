//! Web APIs models and libraries expect: `TextEncoder`/`TextDecoder` (UTF-8) and
//! `crypto.getRandomValues`/`crypto.randomUUID`, and `structuredClone`. They are guest code
//! (`web.js`, `clone.js`) over native helpers that only they can reach.

use super::super::marshal::text_of;
use super::super::raw;
use rquickjs::{ArrayBuffer, Ctx, Exception, Function, Object, Value};
use std::cell::Cell;
use std::rc::Rc;

const SOURCE: &str = include_str!("web.js");
const CLONE_SOURCE: &str = include_str!("clone.js");
/// Most bytes one `getRandomValues` call fills (the Web Crypto quota).
const MAX_RANDOM_BYTES: usize = 65536;

/// Where `crypto`'s randomness comes from: the system, or a seeded stream (deterministic
/// runs). A realm's `crypto` reads it at every call, so a context derived from a template gets
/// the stream of its own run: the template's is seeded for a deterministic run and emptied
/// when the run's context is released.
#[derive(Clone, Default)]
pub(crate) struct RandomSource(Rc<Cell<Option<SeededBytes>>>);

impl RandomSource {
    /// From now on `crypto` draws from `seed` (`None`: from the system).
    pub(crate) fn seed(&self, seed: Option<u64>) {
        self.0.set(seed.map(SeededBytes::new));
    }
}

/// Defines `TextEncoder`, `TextDecoder` and `crypto` on the global object (before lockdown).
/// With a seed (deterministic runs) `crypto`'s randomness comes from it instead of the system.
pub(crate) fn install<'js>(ctx: &Ctx<'js>, seed: Option<u64>) -> rquickjs::Result<RandomSource> {
    let make: Function = raw::eval_helper(ctx, SOURCE, c"quickrealm:web")?.get()?;
    let encode = Function::new(ctx.clone(), utf8_encode)?;
    let decode = Function::new(ctx.clone(), utf8_decode)?;
    let source = RandomSource::default();
    source.seed(seed);
    let stream = source.0.clone();
    let random = Function::new(ctx.clone(), move |ctx: Ctx<'js>, n: usize| {
        if n > MAX_RANDOM_BYTES {
            return Err(Exception::throw_range(&ctx, "too many random bytes"));
        }
        match stream.get() {
            None => random_bytes(ctx, n),
            Some(mut gen) => {
                let bytes = gen.take(n);
                stream.set(Some(gen));
                ArrayBuffer::new_copy(ctx, &bytes)
            }
        }
    })?;
    let made: Object = make.call((encode, decode, random))?;
    let global = ctx.globals();
    for name in ["TextEncoder", "TextDecoder", "crypto"] {
        let v: Value = made.get(name)?;
        global.set(name, v)?;
    }
    let make_clone: Function = raw::eval_helper(ctx, CLONE_SOURCE, c"quickrealm:clone")?.get()?;
    let is_proxy = Function::new(ctx.clone(), |v: Value<'js>| v.is_proxy())?;
    let is_promise = Function::new(ctx.clone(), |v: Value<'js>| v.is_promise())?;
    let clone: Function = make_clone.call((is_proxy, is_promise))?;
    global.set("structuredClone", clone)?;
    Ok(source)
}

/// UTF-8 bytes of a string; lone surrogates become U+FFFD, as the Encoding standard says.
fn utf8_encode<'js>(ctx: Ctx<'js>, text: Value<'js>) -> rquickjs::Result<ArrayBuffer<'js>> {
    let text = text_of(&ctx, &text)
        .map(|t| t.to_lossy())
        .unwrap_or_default();
    // A copy into the realm's own (metered) heap.
    ArrayBuffer::new_copy(ctx, text.as_bytes())
}

/// A string from UTF-8 bytes: invalid sequences become U+FFFD, or a TypeError when `fatal`.
fn utf8_decode<'js>(
    ctx: Ctx<'js>,
    view: Value<'js>,
    fatal: bool,
) -> rquickjs::Result<rquickjs::String<'js>> {
    let Some(bytes) = raw::view_bytes(&ctx, &view) else {
        return Err(Exception::throw_type(&ctx, "cannot read a detached buffer"));
    };
    let text = if fatal {
        match std::str::from_utf8(&bytes) {
            Ok(s) => std::borrow::Cow::Borrowed(s),
            Err(_) => {
                return Err(Exception::throw_type(
                    &ctx,
                    "The encoded data was not valid for encoding utf-8",
                ))
            }
        }
    } else {
        String::from_utf8_lossy(&bytes)
    };
    rquickjs::String::from_str(ctx, &text)
}

/// A reproducible byte stream (SplitMix64) for deterministic runs: the same seed, the same
/// bytes. A different constant from `Math.random`'s seeding keeps the two streams apart.
#[derive(Clone, Copy)]
struct SeededBytes {
    state: u64,
}

impl SeededBytes {
    fn new(seed: u64) -> Self {
        SeededBytes {
            state: seed ^ 0x6a09_e667_f3bc_c909,
        }
    }

    fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn take(&mut self, n: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(n + 8);
        while out.len() < n {
            out.extend_from_slice(&self.next_u64().to_le_bytes());
        }
        out.truncate(n);
        out
    }
}

/// `n` bytes from the operating system's random source.
fn random_bytes<'js>(ctx: Ctx<'js>, n: usize) -> rquickjs::Result<ArrayBuffer<'js>> {
    if n > MAX_RANDOM_BYTES {
        return Err(Exception::throw_range(&ctx, "too many random bytes"));
    }
    let mut bytes = vec![0u8; n];
    if getrandom::fill(&mut bytes).is_err() {
        return Err(Exception::throw_internal(
            &ctx,
            "the system's random source failed",
        ));
    }
    ArrayBuffer::new_copy(ctx, &bytes)
}
