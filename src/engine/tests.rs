//! Engine behaviour tests (run with `cargo test`).

use super::limits::CancelToken;
use super::marshal::{BytesKind, Data, Text, TypedArrayKind};
use super::run::{execute, Mode, RunOutcome, RunRequest};
use super::{ConsoleMode, ErrorCode};
use std::time::Instant;

fn run_mode(src: &str, mode: Mode) -> RunOutcome {
    let mut req = RunRequest::new(src);
    req.mode = mode;
    execute(&req, &CancelToken::new())
}

fn run(src: &str) -> RunOutcome {
    run_mode(src, Mode::Function)
}

fn with_timeout(src: &str, ms: u64) -> RunOutcome {
    let mut req = RunRequest::new(src);
    req.limits.timeout_ms = ms;
    execute(&req, &CancelToken::new())
}

fn code(o: &RunOutcome) -> Option<ErrorCode> {
    o.error.as_ref().map(|e| e.code)
}

#[test]
fn function_mode_returns_and_awaits() {
    let o = run("const x = await Promise.resolve(20); return x + 1 + 1;");
    assert!(o.ok, "{o:?}");
    assert_eq!(o.value, Some(Data::Number(22.0)));
}

#[test]
fn script_mode_gives_the_completion_value() {
    let o = run_mode("let a = 2; a * 21", Mode::Script);
    assert_eq!(o.value, Some(Data::Number(42.0)), "{o:?}");
}

#[test]
fn an_uncaught_dom_exception_reports_its_name_and_message() {
    let o = run("structuredClone(() => 1)");
    let e = o.error.expect("the clone fails");
    assert_eq!(e.name, "DataCloneError", "{e:?}");
    assert!(e.message.contains("could not be cloned"), "{e:?}");
    assert_eq!(e.line, Some(1), "{e:?}");
}

#[test]
fn module_mode_gives_the_exports() {
    let o = run_mode(
        "export const a = 1; export default 'd'; await 0;",
        Mode::Module,
    );
    assert!(o.ok, "{o:?}");
    let Some(Data::Object(entries)) = o.value else {
        panic!("{o:?}")
    };
    assert!(entries.contains(&("a".into(), Data::Number(1.0))));
    assert!(entries.contains(&("default".into(), Data::str("d"))));
}

#[test]
fn eval_and_function_constructors_throw() {
    for src in [
        "return eval('1')",
        "return Function('return 1')()",
        "return (function(){}).constructor('return 1')()",
        "return (async function(){}).constructor('return 1')",
        "return (function*(){}).constructor('yield 1')",
        "return (async function*(){}).constructor('yield 1')",
        "return new Function('return 1')",
    ] {
        let o = run(src);
        assert!(!o.ok, "{src} succeeded: {o:?}");
        let e = o.error.unwrap();
        assert_eq!(e.code, ErrorCode::EvalError, "{src}");
        assert!(
            e.message.contains("disabled") || e.message.contains("not defined"),
            "{src}: {}",
            e.message
        );
    }
}

#[test]
fn intrinsics_are_frozen() {
    let o = run("Object.prototype.x = 1");
    let e = o.error.expect("should fail");
    assert_eq!(e.name, "TypeError");
    assert!(e.message.contains("not extensible"), "{}", e.message);
    let o = run("Array.prototype.push = null");
    assert!(!o.ok);
    let o = run("return [typeof require, typeof process, typeof module, typeof Buffer, typeof fetch].join()");
    assert_eq!(
        o.value,
        Some(Data::str(
            "undefined,undefined,undefined,undefined,undefined"
        ))
    );
    let o =
        run("return [setTimeout, setInterval, clearTimeout, clearInterval].every(Object.isFrozen)");
    assert_eq!(o.value, Some(Data::Bool(true)), "{:?}", o.error);
}

#[test]
fn globals_can_still_be_declared() {
    let o = run_mode(
        "var a = 1; let b = 2; globalThis.c = 3; a + b + c",
        Mode::Script,
    );
    assert_eq!(o.value, Some(Data::Number(6.0)), "{o:?}");
}

#[test]
fn errors_point_at_the_callers_source() {
    let o = run("const a = 1;\nconst b = null;\nreturn b.x;");
    let e = o.error.unwrap();
    assert_eq!(e.code, ErrorCode::EvalError);
    assert_eq!(e.name, "TypeError");
    assert_eq!(e.line, Some(3), "{e:?}");
    assert!(
        e.frame.as_deref().unwrap().contains("> 3 | return b.x;"),
        "{e:?}"
    );
    let o = run("throw new RangeError('bad')");
    let e = o.error.unwrap();
    assert_eq!((e.line, e.column), (Some(1), Some(11)), "{e:?}");
    assert_eq!(e.name, "RangeError");
    let o = run("let x = 1;\nlet = = 2;");
    let e = o.error.unwrap();
    assert_eq!(e.name, "SyntaxError");
    assert_eq!(e.line, Some(2), "{e:?}");
    for mode in [Mode::Script, Mode::Module] {
        let o = run_mode("1;\n  null.x", mode);
        let e = o.error.unwrap();
        assert_eq!((e.line, e.column), (Some(2), Some(3)), "{mode:?} {e:?}");
    }
}

#[test]
fn timeouts_stop_every_kind_of_loop() {
    let cases = [
        "for(;;){}",
        "for(;;){ try { for(;;){} } catch (e) {} }",
        "try { for(;;){} } finally { for(;;){} }",
        "/(a+)+$/.test('a'.repeat(40) + '!')",
        "const o = { get x() { for(;;){} } }; return o.x",
        "[3,2,1].sort(() => { for(;;){} })",
        "(async () => { for(;;) await 0 })(); return 1",
        "await new Promise(() => {}); for(;;){}",
    ];
    for src in cases {
        let t = Instant::now();
        let o = with_timeout(src, 150);
        let ms = t.elapsed().as_millis();
        assert_eq!(code(&o), Some(ErrorCode::Timeout), "{src}: {o:?}");
        assert!(ms < 2000, "{src} took {ms} ms");
    }
}

#[test]
fn never_settling_await_is_reported_without_hanging() {
    let t = Instant::now();
    let o = with_timeout("await new Promise(() => {})", 10_000);
    assert_eq!(code(&o), Some(ErrorCode::Timeout));
    assert!(t.elapsed().as_millis() < 2000);
}

#[test]
fn memory_limit_is_reported_even_if_caught() {
    let mut req = RunRequest::new("try { const a = []; for(;;) a.push('x'.repeat(1000) + a.length) } catch (e) {} return 'survived'");
    req.limits.memory_bytes = 8 << 20;
    let o = execute(&req, &CancelToken::new());
    assert_eq!(code(&o), Some(ErrorCode::MemoryLimit), "{o:?}");
}

#[test]
fn deep_recursion_is_an_error_and_the_next_run_works() {
    let o = run("function f(n) { return f(n + 1) + 1 } return f(0)");
    let e = o.error.unwrap();
    assert_eq!(e.code, ErrorCode::EvalError);
    assert_eq!(e.name, "RangeError", "{e:?}");
    assert_eq!(run("return 1").value, Some(Data::Number(1.0)));
}

#[test]
fn output_is_truncated_exactly_at_the_cap() {
    let mut req = RunRequest::new("emit('a'.repeat(1500)); emit('more')");
    req.limits.output_bytes = 1024;
    let o = execute(&req, &CancelToken::new());
    assert_eq!(code(&o), Some(ErrorCode::OutputLimit));
    assert_eq!(o.output.len(), 1024);
    let mut req = RunRequest::new("for(;;) { try { emit('x') } catch (e) {} }");
    req.limits.output_bytes = 10;
    let o = execute(&req, &CancelToken::new());
    assert_eq!(code(&o), Some(ErrorCode::OutputLimit), "{o:?}");
    assert_eq!(o.output, "x".repeat(10));
}

#[test]
fn console_is_captured_and_formatted() {
    let o = run("console.log('a', 1, {b: [1, 'x']}, null); console.error(new TypeError('t'))");
    assert!(o.ok, "{o:?}");
    assert_eq!(o.logs[0].level, "log");
    assert_eq!(o.logs[0].message, "a 1 { b: [ 1, 'x' ] } null");
    assert_eq!(o.logs[1].level, "error");
    assert!(
        o.logs[1].message.starts_with("TypeError: t"),
        "{:?}",
        o.logs[1]
    );
}

#[test]
fn console_can_be_absent() {
    let mut req = RunRequest::new("return typeof console");
    req.console = ConsoleMode::Absent;
    let o = execute(&req, &CancelToken::new());
    assert_eq!(o.value, Some(Data::str("undefined")));
}

#[test]
fn emit_and_read_input() {
    let mut req = RunRequest::new("emit(read_input().toUpperCase())");
    req.input = Some("hello".into());
    let o = execute(&req, &CancelToken::new());
    assert_eq!(o.output, "HELLO");
}

#[test]
fn data_is_copied_in_and_results_out() {
    let mut req = RunRequest::new("data.list.push(3); return { n: data.list.length, big: 2n ** 70n, neg: -0, nan: NaN, m: new Map([[1, 'a']]), proto: JSON.parse('{\"__proto__\": {\"x\": 1}}') }");
    req.data = vec![(
        "data".into(),
        Data::Object(vec![(
            "list".into(),
            Data::Array(vec![Data::Number(1.0), Data::Number(2.0)]),
        )]),
    )];
    let o = execute(&req, &CancelToken::new());
    assert!(o.ok, "{o:?}");
    let Some(Data::Object(e)) = o.value else {
        panic!()
    };
    assert_eq!(e[0], ("n".into(), Data::Number(3.0)));
    assert_eq!(
        e[1],
        (
            "big".into(),
            Data::BigInt {
                negative: false,
                words: vec![0, 64]
            }
        )
    );
    assert!(matches!(e[2].1, Data::Number(z) if z == 0.0 && z.is_sign_negative()));
    assert!(matches!(e[3].1, Data::Number(z) if z.is_nan()));
    assert_eq!(e[4].1, Data::Map(vec![(Data::Number(1.0), Data::str("a"))]));
    assert_eq!(
        e[5].1,
        Data::Object(vec![(
            "__proto__".into(),
            Data::Object(vec![("x".into(), Data::Number(1.0))])
        )])
    );
}

#[test]
fn lone_surrogates_survive() {
    let o = run("return '\\ud800x'");
    assert_eq!(
        o.value,
        Some(Data::String(Text::Utf16(vec![0xd800, 'x' as u16])))
    );
}

#[test]
fn cycles_in_results_are_kept_and_depth_is_capped() {
    let o = run("const a = { n: 1 }; a.self = a; return a");
    assert_eq!(
        o.value,
        Some(Data::Object(vec![
            ("n".into(), Data::Number(1.0)),
            ("self".into(), Data::Ref(0)),
        ])),
        "{o:?}"
    );
    let o = run("let v = 0; for (let i = 0; i < 1e5; i++) v = [v]; return v");
    let e = o.error.unwrap();
    assert!(e.message.contains("nesting deeper"), "{e:?}");
}

#[test]
fn shared_results_are_numbered_in_pre_order() {
    // Containers 0 (outer array), 1 (o), 2 (the map), 3 (the set); repeats are refs.
    let o = run(
        "const o = {}; const m = new Map([[o, o]]); const s = new Set([m]); return [o, m, s, o, s]",
    );
    assert_eq!(
        o.value,
        Some(Data::Array(vec![
            Data::Object(vec![]),
            Data::Map(vec![(Data::Ref(1), Data::Ref(1))]),
            Data::Set(vec![Data::Ref(2)]),
            Data::Ref(1),
            Data::Ref(3),
        ])),
        "{o:?}"
    );
}

#[test]
fn a_deep_dag_result_is_copied_once_per_object() {
    let started = Instant::now();
    let o = run("let x = {}; for (let i = 0; i < 20; i++) x = [x, x]; return x");
    assert!(o.ok, "{o:?}");
    assert!(started.elapsed().as_millis() < 1000);
    let mut v = o.value.unwrap();
    for level in 0..20 {
        let Data::Array(mut items) = v else {
            panic!("level {level}: {v:?}")
        };
        assert_eq!(items.len(), 2);
        assert_eq!(items[1], Data::Ref(level + 1));
        v = items.swap_remove(0);
    }
    assert_eq!(v, Data::Object(vec![]));
}

#[test]
fn repeated_references_count_against_the_value_cap() {
    let o = run("const o = {}; return [Array(600000).fill(o), Array(600000).fill(o)]");
    let e = o.error.unwrap();
    assert!(e.message.contains("more than 1000000 values"), "{e:?}");
}

#[test]
fn refs_in_data_resolve_to_one_guest_value_across_keys() {
    let mut req = RunRequest::new(
        "return [a.x === b, a.x.self === b, c === a, b.s.has(b.s), a.d === a.e, a.d instanceof Date]",
    );
    // Containers: 0 (a), 1 (a.x), 2 (b.s), 3 (a.d); `b` is a.x again, `c` is a.
    req.data = vec![
        (
            "a".into(),
            Data::Object(vec![
                (
                    "x".into(),
                    Data::Object(vec![
                        ("self".into(), Data::Ref(1)),
                        ("s".into(), Data::Set(vec![Data::Ref(2)])),
                    ]),
                ),
                ("d".into(), Data::Date(0.0)),
                ("e".into(), Data::Ref(3)),
            ]),
        ),
        ("b".into(), Data::Ref(1)),
        ("c".into(), Data::Ref(0)),
    ];
    let o = execute(&req, &CancelToken::new());
    assert_eq!(
        o.value,
        Some(Data::Array(vec![Data::Bool(true); 6])),
        "{o:?}"
    );
}

#[test]
fn a_ref_to_nothing_copied_is_refused() {
    let mut req = RunRequest::new("return 1");
    req.data = vec![("a".into(), Data::Array(vec![Data::Ref(5)]))];
    let o = execute(&req, &CancelToken::new());
    assert_eq!(code(&o), Some(ErrorCode::InvalidInput), "{o:?}");
}

#[test]
fn unhandled_rejections_are_reported_in_logs() {
    let o = run("Promise.reject(new Error('lost')); return 1");
    assert!(o.ok);
    assert!(
        o.logs.iter().any(|l| l
            .message
            .contains("Unhandled promise rejection: Error: lost")),
        "{o:?}"
    );
}

#[test]
fn cancellation_stops_a_running_loop() {
    let token = CancelToken::new();
    let t2 = token.clone();
    let h = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(50));
        t2.cancel();
    });
    let o = execute(&RunRequest::new("for(;;){}"), &token);
    h.join().unwrap();
    assert_eq!(code(&o), Some(ErrorCode::Cancelled));
}

#[test]
fn replayed_lockdown_freezes_everything_the_walk_finds() {
    use super::realm::{Realm, RealmSpec};
    let spec = RealmSpec::standard;
    // The first standard realm records the plan; later ones replay it.
    let first = Realm::build(spec()).unwrap();
    let second = Realm::build(spec()).unwrap();
    assert!(second.standard);
    for realm in [&first, &second] {
        let unfrozen = realm
            .context
            .with(|ctx| super::realm::lockdown::unfrozen_reachable(&ctx))
            .unwrap();
        assert_eq!(unfrozen, 0);
    }
}

#[test]
fn a_realm_is_never_reused() {
    // Globals written by one run are absent in the next, whether or not the pool served it.
    for _ in 0..20 {
        let o = run("const seen = typeof globalThis.marker; globalThis.marker = 1; return seen");
        assert_eq!(o.value, Some(Data::str("undefined")));
    }
}

#[test]
fn detached_buffers_in_results_are_errors() {
    for src in [
        "const b = new ArrayBuffer(4); b.transfer(); return b",
        "const b = new ArrayBuffer(4), v = new Uint8Array(b); b.transfer(); return { v }",
    ] {
        let e = run(src).error.expect(src);
        assert!(
            e.message.contains("detached or out-of-bounds buffer"),
            "{src}: {e:?}"
        );
    }
    let o = run("return [new Uint8Array([1, 2]).subarray(1), new ArrayBuffer(0)]");
    assert_eq!(
        o.value,
        Some(Data::Array(vec![
            Data::Bytes(BytesKind::Typed(TypedArrayKind::Uint8), vec![2]),
            Data::Bytes(BytesKind::ArrayBuffer, vec![]),
        ])),
        "{o:?}"
    );
}

#[test]
fn sliced_typed_array_passes_give_the_same_results_across_slice_boundaries() {
    // 3 MiB + 5 elements: several 1 MiB slices and a ragged end, in every direction.
    let mut request = RunRequest::new(
            "const n = 3 * 2 ** 20 + 5;
             const src = new Uint8Array(n); for (let i = 0; i < n; i++) src[i] = (i * 7) % 251;
             const plain = (a) => Array.prototype.slice.call(a);
             const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);
             const checks = [];
             const r = src.slice(); r.reverse();
             checks.push(same(plain(r), plain(src).reverse()));
             const w = new Uint16Array(src.buffer.slice(0, n - 1)); const wr = plain(w).reverse(); w.reverse();
             checks.push(same(plain(w), wr));
             for (const [to, from] of [[1, 0], [0, 1], [2 ** 20 + 3, 5], [5, 2 ** 20 + 3]]) {
               const a = src.slice(); a.copyWithin(to, from);
               const b = plain(src); const moved = b.slice(from, from + (n - Math.max(to, from)));
               for (let i = 0; i < moved.length; i++) b[to + i] = moved[i];
               checks.push(same(plain(a), b));
             }
             const f = new Uint32Array(2 ** 19 + 3); f.fill(0xdeadbeef, 1, f.length - 1);
             checks.push(f[0] === 0 && f[1] === 0xdeadbeef && f[f.length - 2] === 0xdeadbeef && f[f.length - 1] === 0);
             const s = new Uint8Array(n + 10); s.set(src, 10);
             checks.push(same(plain(s.subarray(10)), plain(src)));
             checks.push(same(plain(new Uint8Array(src.buffer.slice(3))), plain(src).slice(3)));
             return checks",
    );
    // Plain-array copies of every check: far beyond the default heap.
    request.limits.memory_bytes = 2 << 30;
    request.limits.timeout_ms = 60_000;
    let outcome = execute(&request, &CancelToken::new());
    assert!(outcome.ok, "{:?}", outcome.error);
    let Some(Data::Array(items)) = outcome.value else {
        panic!("{:?}", outcome.value)
    };
    assert_eq!(items.len(), 9);
    for (i, item) in items.iter().enumerate() {
        assert_eq!(item, &Data::Bool(true), "check {i}");
    }
}

#[test]
fn assignments_shadow_properties_inherited_from_the_frozen_intrinsics() {
    // Patch 0009 (the override mistake): without it each of these throws "read-only".
    let outcome = execute(
        &RunRequest::new(
            "class E extends Error { constructor() { super('m'); this.name = 'E' } }
             const o = {}; o.toString = () => 'o';
             function P() {} P.prototype = Object.create(Object.prototype); P.prototype.constructor = P;
             const refused = (() => { try { Error.prototype.name = 'X'; return false } catch { return true } })();
             return [new E().name, String(o), new P().constructor === P, refused, Error.prototype.name]",
        ),
        &CancelToken::new(),
    );
    assert!(outcome.ok, "{:?}", outcome.error);
    let text = |s: &str| Data::String(Text::Utf8(s.into()));
    assert_eq!(
        outcome.value,
        Some(Data::Array(vec![
            text("E"),
            text("o"),
            Data::Bool(true),
            Data::Bool(true),
            text("Error"),
        ]))
    );
}

#[test]
fn timers_run_in_due_order_and_are_waited_for_under_the_deadline() {
    let o = run("const order = [];
         setTimeout(() => order.push('b'), 15); setTimeout(() => order.push('a'), 5);
         await new Promise((r) => setTimeout(r, 30));
         return order.join()");
    assert_eq!(o.value, Some(Data::str("a,b")), "{:?}", o.error);
    let started = Instant::now();
    let mut req = RunRequest::new("await new Promise((r) => setTimeout(r, 60000))");
    req.limits.timeout_ms = 100;
    let o = execute(&req, &CancelToken::new());
    assert_eq!(o.error.map(|e| e.code), Some(ErrorCode::Timeout));
    assert!(started.elapsed().as_millis() < 1000);
}

#[test]
fn bigints_cross_as_words_both_ways() {
    let big = |negative: bool, words: &[u64]| Data::BigInt {
        negative,
        words: words.to_vec(),
    };
    let mut req = RunRequest::new(
        "return [a === -(2n ** 70n), z === 0n, m === 2n ** 64n - 1n, n === -(2n ** 64n), a, z, m, n, -1n, 0n, -(2n ** 128n) + 5n]",
    );
    req.data = vec![
        ("a".into(), big(true, &[0, 64])),
        ("z".into(), big(false, &[])),
        ("m".into(), big(false, &[u64::MAX])),
        ("n".into(), big(true, &[0, 1])),
    ];
    let o = execute(&req, &CancelToken::new());
    let mut expected = vec![Data::Bool(true); 4];
    expected.extend([
        big(true, &[0, 64]),
        big(false, &[]),
        big(false, &[u64::MAX]),
        big(true, &[0, 1]),
        big(true, &[1]),
        big(false, &[]),
        big(true, &[u64::MAX - 4, u64::MAX]),
    ]);
    assert_eq!(o.value, Some(Data::Array(expected)), "{o:?}");
}

#[test]
fn error_stacks_begin_with_the_name_and_message_read_lazily() {
    // Engine patch 0011: the first line is computed when the stack is first read, so a name
    // set by a subclass constructor shows.
    let o = run("class V extends Error { constructor(m) { super(m); this.name = 'V' } }
         const e = new V('bad input'); const s = e.stack; e.name = 'Other';
         return [s.split('\\n')[0], s === e.stack, /^ {4}at V \\(sandbox\\.js:1:\\d+\\)$/.test(s.split('\\n')[1])]");
    assert_eq!(
        o.value,
        Some(Data::Array(vec![
            Data::String(Text::Utf8("V: bad input".into())),
            Data::Bool(true),
            Data::Bool(true),
        ])),
        "{o:?}"
    );
}

#[test]
fn a_deterministic_run_repeats_exactly_and_its_timers_move_a_virtual_clock() {
    // Engine patch 0012: virtual clock and Math.random seed.
    let sample = |seed: u64| {
        let mut req = RunRequest::new(
            "const t0 = Date.now(); await new Promise((r) => setTimeout(r, 60000));
             return [t0, Date.now() - t0, performance.now(), Math.random(), crypto.randomUUID()]",
        );
        req.deterministic = Some(super::run::Deterministic {
            seed,
            now_ms: 1.7e12,
        });
        let started = Instant::now();
        let o = execute(&req, &CancelToken::new());
        assert!(
            started.elapsed().as_secs() < 5,
            "a virtual minute took real time"
        );
        o.value.expect("a value")
    };
    let first = sample(11);
    assert_eq!(first, sample(11));
    assert_ne!(first, sample(12));
    let Data::Array(items) = first else {
        panic!("an array")
    };
    assert_eq!(items[0], Data::Number(1.7e12));
    assert_eq!(items[1], Data::Number(60000.0));
    assert_eq!(items[2], Data::Number(60000.0));
}

#[test]
fn object_spread_and_rest_copy_the_characters_of_a_string() {
    // Engine patch 0013: CopyDataProperties converts a string source with ToObject.
    let o = run("const { 0: first, ...rest } = 'abc';
         return JSON.stringify([{ ...'hi' }, first, rest, { ...5, ...null, ...undefined, ...true }])");
    assert_eq!(
        o.value,
        Some(Data::str(r#"[{"0":"h","1":"i"},"a",{"1":"b","2":"c"},{}]"#)),
        "{o:?}"
    );
}

#[test]
fn calls_by_spread_take_more_than_65535_arguments() {
    // Engine patch 0014: the apply/spread bound is 2^20; the stack checks guard the rest.
    let o = run(
        "const a = Array.from({ length: 100000 }, (_, i) => i); const rows = [];
         rows.push(...a); return [Math.max(...a), rows.length, Reflect.apply(Math.min, null, a)]",
    );
    assert_eq!(
        o.value,
        Some(Data::Array(vec![
            Data::Number(99999.0),
            Data::Number(100000.0),
            Data::Number(0.0)
        ])),
        "{o:?}"
    );
    // Past the bound, a catchable RangeError.
    let mut req = RunRequest::new(
        "function f(...xs) { return xs.length }
         try { return f(...new Array(1100000).fill(0)) } catch (e) { return e.name }",
    );
    req.limits.memory_bytes = 256 << 20;
    let o = execute(&req, &CancelToken::new());
    assert_eq!(o.value, Some(Data::str("RangeError")), "{o:?}");
}

#[test]
fn every_context_of_a_runtime_has_dom_exception() {
    // Engine patch 0016: the second context of a runtime used to lack DOMException.
    let rt = rquickjs::Runtime::new().expect("runtime");
    let first = rquickjs::Context::full(&rt).expect("first context");
    let second = rquickjs::Context::full(&rt).expect("second context");
    for ctx in [&first, &second] {
        let seen: String = ctx.with(|ctx| {
            ctx.eval(
                "let caught; try { atob('*') } catch (e) { caught = e }
                 [typeof DOMException, caught instanceof DOMException, caught.name].join()",
            )
            .expect("eval")
        });
        assert_eq!(seen, "function,true,InvalidCharacterError");
    }
}

#[test]
fn built_in_callbacks_get_this_undefined() {
    // Engine patch 0017: queueMicrotask and the groupBy functions passed the global object.
    let o = run("const seen = [];
         queueMicrotask(function () { seen.push(this === undefined) });
         Object.groupBy([1], function () { seen.push(this === undefined); return 'a' });
         Map.groupBy([1], function () { seen.push(this === undefined); return 'a' });
         await null;
         return seen");
    assert_eq!(
        o.value,
        Some(Data::Array(vec![Data::Bool(true); 3])),
        "{o:?}"
    );
}

#[test]
fn a_stack_overflow_while_parsing_is_reported_as_such() {
    // Engine patch 0018: the tokenizer's stack-overflow error used to be replaced by whatever
    // syntax error the parser met next. Deep nesting in the source exhausts the parser's stack.
    let handle = std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(|| {
            let nested = format!(
                "return {}1{}",
                "(function(a){ return ".repeat(3000),
                "})(0)".repeat(3000)
            );
            let mut req = RunRequest::new(nested);
            req.limits.stack_bytes = 256 << 10;
            execute(&req, &CancelToken::new())
        })
        .expect("spawn");
    let o = handle.join().expect("the thread survives");
    let e = o.error.expect("an error");
    assert_eq!(e.name, "RangeError", "{e:?}");
    assert!(e.message.contains("call stack"), "{e:?}");
}

#[test]
fn number_keys_spread_over_a_maps_buckets() {
    // Engine patch 0023: integers and powers of two hashed to a few buckets of a Map or Set, so
    // each lookup walked a long chain: these 500,000 lookups took about 3 s (debug build) and
    // take about 0.1 s with the keys spread. The deadline leaves ample room for a slow machine.
    let src = "const keys = [];
        for (let e = -1074; e <= 1023; e++) keys.push(2 ** e);
        for (let i = 0; i < 4096; i++) keys.push(i);
        const m = new Map(), s = new Set();
        for (const k of keys) { m.set(k, k); s.add(-k) }
        let found = 0;
        for (let pass = 0; pass < 40; pass++)
          for (let i = 0; i < keys.length; i++) found += (m.get(keys[i]) === keys[i]) + s.has(-keys[i]);
        return found === 80 * keys.length";
    let mut req = RunRequest::new(src);
    req.limits.timeout_ms = 1_000;
    let o = execute(&req, &CancelToken::new());
    assert_eq!(o.value, Some(Data::Bool(true)), "{o:?}");
}

#[test]
fn running_out_of_memory_while_an_object_grows_is_an_error_not_a_crash() {
    // Engine patch 0024: when the memory limit failed the reallocation of a growing object's
    // shape, the out-of-memory error was thrown while the shape was out of the GC's list; a
    // collection started by that error crashed the process. Which limit hits that reallocation
    // depends on the heap, so the limits are swept.
    let src = "const o = {}; for (let i = 0; i < 20000; i++) o['k' + i] = i; return 1";
    for kib in (1024..=4096).step_by(16) {
        let mut req = RunRequest::new(src);
        req.limits.memory_bytes = kib << 10;
        let o = execute(&req, &CancelToken::new());
        assert!(
            o.ok || code(&o) == Some(ErrorCode::MemoryLimit),
            "{kib} KiB: {o:?}"
        );
    }
}

#[test]
fn new_super_is_a_syntax_error() {
    // Engine patch 0031: `new super()` was compiled, and failed when run with "InternalError:
    // stack underflow"; the grammar makes it a SyntaxError, reported before anything runs.
    let src = "class A {} class B extends A { constructor() { new super(); } } new B(); return 1";
    let o = execute(&RunRequest::new(src), &CancelToken::new());
    let e = o.error.expect("an error");
    assert_eq!(e.name, "SyntaxError", "{e:?}");
    // `super()` itself, and `new` of a super property, still compile and run.
    let ok = "class A {} A.prototype.K = function () { this.x = 1 };
        class B extends A { constructor() { super(); this.y = new super.K() } }
        return new B().y.x";
    let o = execute(&RunRequest::new(ok), &CancelToken::new());
    assert_eq!(o.value, Some(Data::Number(1.0)), "{o:?}");
}

fn with_steps(src: &str, steps: Option<u64>) -> RunOutcome {
    let mut req = RunRequest::new(src);
    req.limits.steps = steps;
    execute(&req, &CancelToken::new())
}

/// Patch 0019: a step budget stops the guest at the same point every time, and nothing the
/// guest does (catch, finally, async jobs, timers) gets past it.
#[test]
fn step_budget_stops_at_the_same_point_every_time() {
    let src = "for (let i = 0; ; i++) { if (i % 7 === 0) emit(i + ' ') }";
    let first = with_steps(src, Some(5_000));
    assert_eq!(code(&first), Some(ErrorCode::StepLimit), "{first:?}");
    assert!(first
        .error
        .as_ref()
        .is_some_and(|e| e.message.contains("5000 steps")));
    assert_eq!(first.stats.steps, 5_000);
    for _ in 0..3 {
        let again = with_steps(src, Some(5_000));
        assert_eq!(again.output, first.output);
        assert_eq!(code(&again), Some(ErrorCode::StepLimit));
    }
    // A bigger budget gets further along the same path.
    let more = with_steps(src, Some(10_000));
    assert!(more.output.len() > first.output.len() && more.output.starts_with(&first.output));
}

#[test]
fn step_budget_cannot_be_caught_or_outlived() {
    for src in [
        "try { for (;;) {} } catch (e) {} return 'escaped'",
        "try { for (;;) {} } finally { return 'escaped' }",
        "const f = () => f(); try { f() } catch { } for (;;) {}",
        "for (;;) await null",
        "await new Promise(() => { (function spin() { Promise.resolve().then(spin) })() })",
        "setTimeout(() => { for (;;) {} }, 0); await new Promise((r) => setTimeout(r, 10)); return 1",
        "Array.from({ length: 1e6 }, (_, i) => i); return 'done'",
        "function* g() { for (;;) yield 1 } for (const x of g()) {}",
    ] {
        let o = with_steps(src, Some(10_000));
        assert_eq!(code(&o), Some(ErrorCode::StepLimit), "{src}: {o:?}");
        assert_eq!(o.value, None, "{src}");
    }
}

#[test]
fn steps_are_counted_without_a_budget_and_a_budget_in_reach_changes_nothing() {
    let src = "let s = 0; for (let i = 0; i < 1000; i++) s += i; return s";
    let free = with_steps(src, None);
    assert!(free.ok, "{free:?}");
    // One step per iteration (the backward jump), plus a few calls around the guest's code.
    assert!(
        (1_000..1_010).contains(&free.stats.steps),
        "{}",
        free.stats.steps
    );
    let calls = with_steps(
        "const f = (x) => x; for (let i = 0; i < 1000; i++) f(i)",
        None,
    );
    assert!(
        (2_000..2_010).contains(&calls.stats.steps),
        "{}",
        calls.stats.steps
    );
    let budgeted = with_steps(src, Some(free.stats.steps));
    assert_eq!(budgeted.value, free.value, "{budgeted:?}");
    assert_eq!(budgeted.stats.steps, free.stats.steps);
    let short = with_steps(src, Some(free.stats.steps - 1));
    assert_eq!(code(&short), Some(ErrorCode::StepLimit), "{short:?}");
}
