//! The deadline holds inside native operations: every guest-triggerable family of long native
//! loops (vendor/rquickjs-sys/patches/0002-0006 and 0008) stops close to the deadline or an abort.
//!
//! Each case runs a reproducer under a short timeout and checks that the run ends with
//! `TIMEOUT` (or `CANCELLED`) well within the deadline plus a generous margin for noisy
//! machines. Without the patches these take from seconds to minutes.

use super::limits::CancelToken;
use super::run::{execute, RunOutcome, RunRequest};
use super::ErrorCode;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The deadline every case runs under.
const TIMEOUT_MS: u64 = 300;
/// How far past the deadline (or the abort) a run may end; generous, the machines are noisy.
const MARGIN_MS: u128 = 1_200;

/// The cases measure wall time: run them one at a time, not against each other.
static SERIAL: Mutex<()> = Mutex::new(());

fn timed(req: &RunRequest, cancel: &CancelToken) -> (RunOutcome, u128) {
    let t = Instant::now();
    let o = execute(req, cancel);
    (o, t.elapsed().as_millis())
}

fn request(src: &str) -> RunRequest {
    let mut req = RunRequest::new(src);
    req.limits.timeout_ms = TIMEOUT_MS;
    req
}

fn assert_times_out(req: &RunRequest) {
    let (o, ms) = timed(req, &CancelToken::new());
    let code = o.error.as_ref().map(|e| e.code);
    assert_eq!(code, Some(ErrorCode::Timeout), "{}: {o:?}", req.source);
    assert!(
        ms < TIMEOUT_MS as u128 + MARGIN_MS,
        "{} ran {ms} ms under a {TIMEOUT_MS} ms deadline",
        req.source
    );
}

fn assert_all_time_out(cases: &[&str]) {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    for src in cases {
        assert_times_out(&request(src));
    }
    // The realm is gone with its run; the next run works as usual.
    let o = execute(&RunRequest::new("return 6 * 7"), &CancelToken::new());
    assert!(o.ok, "{o:?}");
}

#[test]
fn bigint_to_string_stops_in_every_radix() {
    assert_all_time_out(&[
        // The hardening issue's reproducer: ~30 s before.
        "const b = (1n << 1000000n) - 1n; for (let i = 0; i < 5; i++) String(b + BigInt(i))",
        "const b = 1n << 100000n; for (;;) b.toString(3)",
        "return ((1n << 1000000n) - 1n).toString(7)",
        "return (-((1n << 1000000n) - 1n)).toString(36)",
        "const b = (1n << 1000000n) - 1n; for (;;) `${b}`",
        "const b = (1n << 1000000n) - 1n; for (;;) b.toLocaleString()",
    ]);
}

#[test]
fn huge_bigint_arithmetic_stops() {
    assert_all_time_out(&[
        "const a = (1n << 500000n) - 1n; for (;;) a * a",
        "const a = (1n << 1000000n) - 1n, b = (1n << 500000n) + 1n; for (;;) a / b",
        "const a = (1n << 1000000n) - 1n, b = (1n << 500000n) + 1n; for (;;) a % b",
        "for (;;) 3n ** 600000n",
        "const s = '9'.repeat(300000); for (;;) BigInt(s)",
        "const s = '0x' + 'f'.repeat(250000); for (;;) BigInt(s)",
    ]);
}

const MANY_KEYS: &str = "const keys = Array.from({ length: 1e5 }, (_, i) => 'k' + i);";

#[test]
fn proxy_own_keys_checks_stop() {
    assert_all_time_out(&[
        // 5-7 s before: the duplicate check was quadratic.
        &format!("{MANY_KEYS} const p = new Proxy({{}}, {{ ownKeys: () => keys }}); for (;;) Reflect.ownKeys(p)"),
        &format!("{MANY_KEYS} const p = new Proxy({{}}, {{ ownKeys: () => keys }}); for (;;) Object.keys(p)"),
        // The invariant check against a non-extensible target was quadratic too.
        &format!(
            "{MANY_KEYS} const t = {{}}; for (const k of keys) t[k] = 1; Object.preventExtensions(t);
             const p = new Proxy(t, {{ ownKeys: () => keys }}); for (;;) Reflect.ownKeys(p)"
        ),
    ]);
}

#[test]
fn proxy_own_keys_invariants_still_hold() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let cases = [
        (
            "Reflect.ownKeys(new Proxy({}, { ownKeys: () => ['a', 'b', 'a'] }))",
            "duplicate",
        ),
        (
            "const t = {}; Object.defineProperty(t, 'x', { value: 1 });
             Reflect.ownKeys(new Proxy(t, { ownKeys: () => ['a'] }))",
            "must be present",
        ),
        (
            "const t = Object.preventExtensions({ a: 1 });
             Reflect.ownKeys(new Proxy(t, { ownKeys: () => ['a', 'b'] }))",
            "",
        ),
        (
            "const t = Object.preventExtensions({ a: 1, b: 2 });
             Reflect.ownKeys(new Proxy(t, { ownKeys: () => ['a'] }))",
            "must be present",
        ),
    ];
    for (src, needle) in cases {
        let o = execute(&RunRequest::new(src), &CancelToken::new());
        let e = o.error.as_ref().unwrap_or_else(|| panic!("{src}: {o:?}"));
        assert_eq!(e.name, "TypeError", "{src}: {e:?}");
        assert!(e.message.contains(needle), "{src}: {e:?}");
    }
    let ok = [
        "const s = Symbol('s'); return Reflect.ownKeys(new Proxy({}, { ownKeys: () => ['a', s, 'b', '1'] })).length",
        "const t = Object.preventExtensions({ a: 1, [Symbol.iterator]: 2 });
         return Reflect.ownKeys(new Proxy(t, { ownKeys: () => [Symbol.iterator, 'a'] })).length",
    ];
    for src in ok {
        let o = execute(&RunRequest::new(src), &CancelToken::new());
        assert!(o.ok, "{src}: {o:?}");
    }
}

/// A proxy whose keys and descriptors are expensive, returned as the run's result.
const COSTLY_PROXY: &str = "const keys = Array.from({ length: 1e5 }, (_, i) => 'k' + i);
    const p = new Proxy({}, {
      ownKeys: () => keys,
      getOwnPropertyDescriptor: () => ({ value: 'x'.repeat(16 << 20), enumerable: true, configurable: true, writable: true }),
    });";

#[test]
fn a_costly_proxy_returned_as_the_result_stops() {
    assert_all_time_out(&[&format!("{COSTLY_PROXY} return p")]);
}

#[test]
fn an_abort_stops_native_loops_promptly() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    for src in [
        format!("{COSTLY_PROXY} for (;;) Object.keys(p)"),
        format!("{COSTLY_PROXY} return p"),
        "const b = (1n << 1000000n) - 1n; for (;;) String(b)".to_string(),
    ] {
        let mut req = RunRequest::new(src.as_str());
        req.limits.timeout_ms = 60_000;
        let token = CancelToken::new();
        let t2 = token.clone();
        let h = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            t2.cancel();
        });
        let (o, ms) = timed(&req, &token);
        h.join().unwrap();
        assert_eq!(
            o.error.as_ref().map(|e| e.code),
            Some(ErrorCode::Cancelled),
            "{src}: {o:?}"
        );
        assert!(
            ms < 100 + MARGIN_MS,
            "{src}: aborted at 100 ms, ended at {ms} ms"
        );
    }
}

#[test]
fn array_like_loops_stop() {
    assert_all_time_out(&[
        // Walks every index of a sparse array in C.
        "const a = []; a.length = 1e6; for (;;) a.unshift(1)",
        "const a = []; a.length = 4e6; for (;;) a.reverse()",
        "const a = []; a.length = 4e6; for (;;) a.copyWithin(1, 0)",
        "const a = []; a.length = 4e6; for (;;) a.splice(0, 0, 1)",
        "const a = []; a.length = 4e6; for (;;) a.slice()",
        "const a = []; a.length = 4e6; for (;;) a.lastIndexOf(1)",
        "const o = { length: 4e6 }; for (;;) Array.prototype.join.call(o)",
        // Dense arrays: short native passes, repeated.
        "const a = new Array(1e6).fill(0); for (;;) a.fill(1)",
        "const a = new Array(1e6).fill(0); for (;;) a.reverse()",
        "const a = new Array(1e6).fill(0); for (;;) a.shift()",
        "const a = new Array(1e6).fill(0); for (;;) a.copyWithin(0, 1)",
        "const a = Array.from({ length: 3e5 }, (_, i) => String(i)); for (;;) a.sort()",
        "const t = new Float64Array(4e6).map(Math.random); for (;;) t.sort()",
        "const t = new Float64Array(4e6); for (;;) t.fill(1)",
    ]);
}

#[test]
fn string_building_and_scanning_stop() {
    assert_all_time_out(&[
        "for (;;) 'ab'.repeat(1 << 23)",
        "for (;;) ''.padStart(1 << 24, 'ab')",
        "for (;;) ''.padEnd(1 << 24, 'abc')",
        "const a = new Array(1e6).fill('x'); for (;;) a.join('')",
        "const s = 'a'.repeat(1 << 24); for (;;) s.indexOf('b')",
        "const s = 'a'.repeat(1 << 24); for (;;) s.includes('ab', 1)",
        "const s = 'a'.repeat(1 << 24), t = 'a'.repeat(1 << 24); for (;;) s === t",
        "const s = 'a'.repeat(1 << 22); for (;;) s.replaceAll('a', '')",
        // Naive substring search: quadratic in one call.
        "const s = 'a'.repeat(1 << 20); for (;;) s.split('a'.repeat(1 << 10) + 'b')",
        "const s = 'a'.repeat(1 << 20); return s.includes('a'.repeat(1 << 12) + 'b')",
    ]);
}

#[test]
fn json_over_huge_structures_stops() {
    assert_all_time_out(&[
        "const a = new Array(1e6).fill(0); for (;;) JSON.stringify(a)",
        "const o = {}; for (let i = 0; i < 2e5; i++) o['k' + i] = i; for (;;) JSON.stringify(o)",
        "const s = JSON.stringify(new Array(1e6).fill(0)); for (;;) JSON.parse(s)",
    ]);
}

#[test]
fn global_regexp_loops_stop() {
    assert_all_time_out(&[
        "const s = 'a'.repeat(1 << 22); for (;;) s.replace(/a/g, '')",
        "const s = 'a'.repeat(1 << 22); for (;;) s.split(/a/).length = 0",
        "const s = 'ab'.repeat(1 << 20); for (;;) for (const m of s.matchAll(/b/g)) {}",
        "const s = 'a'.repeat(1 << 22); for (;;) /b/.test(s)",
    ]);
}

#[test]
fn console_output_of_huge_values_stops() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    for src in [
        "const name = 'x'.repeat(16 << 20); const f = ({ [name]: () => {} })[name]; for (;;) console.log(f)",
        "const s = 'x'.repeat(16 << 20); for (;;) console.log([s])",
        "const s = 'x'.repeat(16 << 20); for (;;) console.log(s.length, { s })",
    ] {
        let mut req = request(src);
        // Room for every line: the deadline, not the output cap, has to stop these.
        req.limits.output_bytes = 256 << 20;
        assert_times_out(&req);
    }
}

/// One bulk pass over a 1 GiB typed array (patch 0008): it takes half a second or more here
/// when it runs to its end (the first touch of every page), so ending within a fraction of
/// that shows the pass itself was interrupted.
#[test]
fn typed_array_bulk_passes_stop_in_slices() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    for src in [
        "const a = new Uint8Array(2 ** 30); a.fill(1); return 1",
        "const a = new Uint32Array(2 ** 28); a.fill(7); return 1",
        "const a = new Uint8Array(2 ** 30); a.set(new Uint8Array(2 ** 30 - 1)); return 1",
        "const a = new Uint8Array(2 ** 30); a.copyWithin(1, 0); return 1",
        "const a = new Uint8Array(2 ** 30); a.slice(); return 1",
        "new ArrayBuffer(2 ** 30).slice(0); return 1",
        "const a = new Float64Array(2 ** 27); a.reverse(); return 1",
    ] {
        let mut req = RunRequest::new(src);
        req.limits.timeout_ms = 20;
        req.limits.memory_bytes = 4 << 30;
        let (o, ms) = timed(&req, &CancelToken::new());
        assert_eq!(o.error.map(|e| e.code), Some(ErrorCode::Timeout), "{src}");
        assert!(ms < 250, "{src} ran {ms} ms under a 20 ms deadline");
    }
}

#[test]
fn a_full_heap_does_not_let_a_catch_swallow_the_interrupt() {
    // Engine patch 0041: at the memory limit, building the stack of the uncatchable
    // "interrupted" error failed and replaced it with a catchable "out of memory" error, which
    // the inner `catch {}` swallowed, deadline after deadline: this ran for minutes.
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut req = request(
        "let s = new Set([13]);\n\
         for (let k = 0; k < 1000; k++) { try { s.forEach(function () { try { s.add(Math.random()) } catch {} return false }) } catch (e) { break } }",
    );
    req.mode = super::run::Mode::Script;
    req.console = super::ConsoleMode::Absent;
    req.limits.memory_bytes = 32 << 20;
    let (o, ms) = timed(&req, &CancelToken::new());
    let code = o.error.as_ref().map(|e| e.code);
    assert!(
        matches!(code, Some(ErrorCode::Timeout | ErrorCode::MemoryLimit)),
        "{o:?}"
    );
    assert!(
        ms < TIMEOUT_MS as u128 + MARGIN_MS,
        "ran {ms} ms under a {TIMEOUT_MS} ms deadline"
    );
}
