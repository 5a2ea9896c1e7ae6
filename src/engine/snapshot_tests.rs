//! Realm state written from one context derived from the thread's template and read into a
//! fresh one, on the same thread and on another (whose template has other pointers but the same
//! well-known indices). Each test runs on a thread of its own.

use super::snapshot::{
    read_realm_state, template_fingerprint, write_realm_state, SnapshotError, SnapshotErrorKind,
    SnapshotLimits,
};
use super::template;
use rquickjs::context::EvalOptions;
use rquickjs::{Ctx, Value};

fn on_fresh_thread<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(super::workers::WORKER_STACK_BYTES)
        .spawn(f)
        .expect("spawn")
        .join()
        .expect("the thread survives")
}

fn eval<'js>(ctx: &Ctx<'js>, source: &str) -> rquickjs::Result<Value<'js>> {
    let mut options = EvalOptions::default();
    options.global = true;
    options.strict = true;
    options.filename = Some("<repl>".to_string());
    ctx.eval_with_options(source, options)
}

/// The value of `source` as text (`String(value)`), or the error it threw as "throws: ...".
fn show(ctx: &Ctx<'_>, source: &str) -> String {
    match eval(ctx, source) {
        Ok(v) => {
            let s: rquickjs::Result<rquickjs::String> = rquickjs::String::from_value(
                ctx.globals()
                    .get::<_, rquickjs::Function>("String")
                    .and_then(|f| f.call::<_, Value>((v,)))
                    .expect("String()"),
            );
            s.and_then(|s| s.to_string()).expect("a string")
        }
        Err(rquickjs::Error::Exception) => {
            let e = ctx.catch();
            let text = e
                .as_exception()
                .map(|e| format!("{}: {}", e.get::<_, String>("name").unwrap_or_default(), e.message().unwrap_or_default()))
                .unwrap_or_else(|| format!("{e:?}"));
            format!("throws: {text}")
        }
        Err(e) => format!("error: {e}"),
    }
}

/// Runs `f` in a fresh context derived from this thread's template.
fn in_derived<T>(f: impl FnOnce(&Ctx<'_>) -> T) -> T {
    let realm = template::derive().expect("a derived realm");
    let out = realm.context.with(|ctx| f(&ctx));
    template::retire(realm, true);
    out
}

fn write(program: &str, skip: &[&str], limits: &SnapshotLimits) -> Result<Vec<u8>, SnapshotError> {
    in_derived(|ctx| {
        if let Err(e) = eval(ctx, program) {
            panic!("the program fails: {e:?} {:?}", show(ctx, "0") );
        }
        write_realm_state(ctx, skip, limits)
    })
}

fn state_of(program: &str) -> Vec<u8> {
    match write(program, &[], &SnapshotLimits::default()) {
        Ok(bytes) => bytes,
        Err(e) => panic!("write failed: {e:?}"),
    }
}

/// Reads `bytes` into a fresh derived context and evaluates each check there.
fn checks_after_read(bytes: &[u8], checks: &[&str]) -> Vec<String> {
    in_derived(|ctx| {
        read_realm_state(ctx, bytes, &SnapshotLimits::default()).expect("read");
        checks.iter().map(|c| show(ctx, c)).collect()
    })
}

/// Writes the state `program` leaves, reads it on this thread and on another, and evaluates
/// `checks` after each read; both must give `expected`.
fn round_trip(program: &str, checks: &[(&str, &str)]) {
    let program = program.to_string();
    let checks: Vec<(String, String)> = checks
        .iter()
        .map(|(c, e)| (c.to_string(), e.to_string()))
        .collect();
    on_fresh_thread(move || {
        let bytes = state_of(&program);
        let sources: Vec<&str> = checks.iter().map(|(c, _)| c.as_str()).collect();
        let here = checks_after_read(&bytes, &sources);
        for ((c, e), got) in checks.iter().zip(&here) {
            assert_eq!(got, e, "check `{c}` on the writer's thread");
        }
        let sources: Vec<String> = sources.iter().map(|s| s.to_string()).collect();
        let elsewhere = on_fresh_thread(move || {
            let sources: Vec<&str> = sources.iter().map(|s| s.as_str()).collect();
            checks_after_read(&bytes, &sources)
        });
        for ((c, e), got) in checks.iter().zip(&elsewhere) {
            assert_eq!(got, e, "check `{c}` on another thread");
        }
    });
}

#[test]
fn plain_data_and_global_lexicals_round_trip() {
    round_trip(
        "let n = 1; const name = 'quickrealm'; const list = [1, 2, 3]; var v = 'var'; \
         function f() { return n + 1 } globalThis.implicit = 7;",
        &[
            ("n", "1"),
            ("name", "quickrealm"),
            ("list.join()", "1,2,3"),
            ("v", "var"),
            ("f()", "2"),
            ("implicit", "7"),
            ("n = 5; f()", "6"),
        ],
    );
}

#[test]
fn closures_share_their_cells() {
    round_trip(
        "const counter = (() => { let c = 0; return { next: () => ++c, peek: () => c } })(); \
         const f = () => f;",
        &[
            ("[counter.next(), counter.next(), counter.peek()].join()", "1,2,2"),
            ("f() === f", "true"),
        ],
    );
}

#[test]
fn bindings_keep_their_kind() {
    round_trip(
        "let l = 1; const c = 2; var v = 3; function fn() {}",
        &[
            ("l = 10; l", "10"),
            ("c = 3", "throws: TypeError: 'c' is read-only"),
            ("c", "2"),
            ("Object.hasOwn(globalThis, 'v')", "true"),
            ("Object.hasOwn(globalThis, 'fn')", "true"),
            ("Object.hasOwn(globalThis, 'l')", "false"),
            ("typeof fn", "function"),
        ],
    );
}

#[test]
fn a_binding_left_in_its_tdz_still_throws() {
    on_fresh_thread(|| {
        let bytes = in_derived(|ctx| {
            // The initializer throws: `t` stays uninitialized.
            assert!(eval(ctx, "const t = (() => { throw 1 })();").is_err());
            let _ = ctx.catch();
            eval(ctx, "let late = 1; const g = () => { return typeof inner }; let inner = 2;")
                .expect("eval");
            write_realm_state(ctx, &[], &SnapshotLimits::default()).expect("write")
        });
        let got = checks_after_read(&bytes, &["t", "late"]);
        assert_eq!(got[0], "throws: ReferenceError: t is not initialized");
        assert_eq!(got[1], "1");
    });
}

#[test]
fn a_captured_variable_in_its_tdz_stays_so() {
    round_trip(
        "const early = (() => { const f = () => x; try { f() } catch {} ; return f; let x = 1; })();",
        &[("early()", "throws: ReferenceError: x is not initialized")],
    );
}

#[test]
fn shared_objects_and_cycles_across_bindings_stay_identical() {
    round_trip(
        "const a = { v: 1 }; const b = a; const cfg = { depth: 2 }; cfg.self = cfg; \
         const pair = [a, a];",
        &[
            ("a === b", "true"),
            ("cfg.self === cfg", "true"),
            ("pair[0] === a && pair[1] === a", "true"),
            ("b.v = 5; a.v", "5"),
        ],
    );
}

#[test]
fn well_known_objects_are_references_not_copies() {
    round_trip(
        "const M = Math; const g = globalThis; const js = JSON.stringify; \
         const protos = [Object.prototype, Array.prototype, Map.prototype];",
        &[
            ("M === Math", "true"),
            ("g === globalThis", "true"),
            ("js === JSON.stringify", "true"),
            ("protos[0] === Object.prototype && protos[1] === Array.prototype && protos[2] === Map.prototype", "true"),
            ("Object.isFrozen(Math)", "true"),
        ],
    );
}

#[test]
fn template_fingerprints_match_across_threads() {
    let here = on_fresh_thread(|| in_derived(|ctx| template_fingerprint(ctx)));
    let there = on_fresh_thread(|| in_derived(|ctx| template_fingerprint(ctx)));
    assert_eq!(here, there);
    assert_ne!(here, [0u8; 32]);
}

#[test]
fn the_spike_benchmark_program_round_trips_and_stays_small() {
    const PROGRAM: &str = "let n = 1; const seen = new Map();\n\
        function inc(k) { seen.set(k, ++n); return n }\n\
        const name = 'quickrealm', list = [1, 2, 3], cfg = { depth: 2, tags: ['a', 'b'] };\n\
        const when = new Date(0), big = 2n ** 70n, re = /ab+c/gi;\n\
        const counter = (() => { let c = 0; return { next: () => ++c, peek: () => c } })();\n\
        for (let i = 0; i < 100; i++) seen.set('key' + i, { i, sq: i * i });\n\
        cfg.self = cfg; inc('a');\n";
    on_fresh_thread(|| {
        let bytes = state_of(PROGRAM);
        assert!(bytes.len() <= 4096, "{} bytes", bytes.len());
        let got = checks_after_read(
            &bytes,
            &[
                "inc('b')",
                "seen.get('b')",
                "seen.size",
                "seen.get('key42').sq",
                "[counter.next(), counter.next(), counter.peek()].join()",
                "cfg.self === cfg",
                "big === 2n ** 70n",
                "re.flags + re.source",
                "when.getTime()",
            ],
        );
        assert_eq!(
            got,
            ["3", "3", "102", "1764", "1,2,2", "true", "true", "giab+c", "0"]
        );
    });
}
