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

#[test]
fn classes_instances_and_super_round_trip() {
    round_trip(
        "class Point { constructor(x, y) { this.x = x; this.y = y } norm() { return this.x + this.y } \
           static origin() { return new Point(0, 0) } } \
         class Point3 extends Point { constructor(x, y, z) { super(x, y); this.z = z } \
           norm() { return super.norm() + this.z } } \
         const p = new Point(1, 2); const q = new Point3(1, 2, 3);",
        &[
            ("Object.getPrototypeOf(p) === Point.prototype", "true"),
            ("p instanceof Point", "true"),
            ("p.norm()", "3"),
            ("q.norm()", "6"),
            ("q instanceof Point", "true"),
            ("new Point3(1, 1, 1).norm()", "3"),
            ("Point.origin().norm()", "0"),
            ("Point.name + Point.length", "Point2"),
            ("try { Point() } catch (e) { e instanceof TypeError }", "true"),
            ("Object.getPrototypeOf(Point3) === Point", "true"),
        ],
    );
}

#[test]
fn functions_of_every_kind_round_trip_with_their_own_properties() {
    round_trip(
        "function plain(a, b) { return a + b } plain.tag = 'mine'; \
         function* gen() { yield 1; yield 2 } \
         async function later() { return 5 } \
         const arrow = (x) => x * 2; \
         function Ctor() { this.v = 1 } Ctor.prototype.get = function () { return this.v }; \
         const obj = { m() { return 'm' }, get g() { return 'g' } };",
        &[
            ("plain(1, 2) + plain.tag", "3mine"),
            ("[...gen()].join()", "1,2"),
            ("later() instanceof Promise", "true"),
            ("arrow(4)", "8"),
            ("new Ctor().get()", "1"),
            ("obj.m() + obj.g", "mg"),
            ("plain.name + plain.length", "plain2"),
            ("typeof function(){}.prototype", "object"),
            ("Object.getPrototypeOf(gen) === Object.getPrototypeOf(function*(){})", "true"),
        ],
    );
}

#[test]
fn a_function_never_used_as_a_constructor_gets_its_prototype_lazily() {
    round_trip(
        "function F() {}",
        &[
            ("F.prototype.constructor === F", "true"),
            ("new F() instanceof F", "true"),
        ],
    );
}

#[test]
fn property_attributes_accessors_and_frozen_state_survive() {
    round_trip(
        "const o = {}; Object.defineProperty(o, 'hidden', { value: 1, enumerable: false, writable: true, configurable: true }); \
         let reads = 0; const acc = { get v() { reads++; return 42 }, set v(x) { this._v = x } }; \
         const cfg = Object.freeze({ a: 1, nested: { b: 2 } }); const sealed = Object.seal({ s: 1 }); \
         const closed = Object.preventExtensions({ c: 1 }); const arr = [1, 2]; Object.freeze(arr);",
        &[
            ("Object.keys(o).length + ':' + o.hidden", "0:1"),
            ("Object.getOwnPropertyDescriptor(o, 'hidden').enumerable", "false"),
            ("reads", "0"),
            ("acc.v", "42"),
            ("reads", "1"),
            ("acc.v = 3; acc._v", "3"),
            ("Object.isFrozen(cfg)", "true"),
            ("Object.isFrozen(cfg.nested)", "false"),
            ("Object.isSealed(sealed) && !Object.isFrozen(sealed)", "true"),
            ("Object.isExtensible(closed)", "false"),
            ("Object.isFrozen(arr)", "true"),
        ],
    );
}

#[test]
fn a_getter_does_not_run_while_writing() {
    on_fresh_thread(|| {
        let bytes = in_derived(|ctx| {
            eval(
                ctx,
                "let runs = 0; const a = [1, 2]; Object.defineProperty(a, 0, { get() { runs++; return 9 } }); \
                 const o = { get x() { runs++; return 1 } };",
            )
            .expect("eval");
            let bytes = write_realm_state(ctx, &[], &SnapshotLimits::default()).expect("write");
            assert_eq!(show(ctx, "runs"), "0");
            bytes
        });
        let got = checks_after_read(&bytes, &["runs", "a[0]", "runs", "o.x + a[1]", "runs"]);
        assert_eq!(got, ["0", "9", "1", "3", "2"]);
    });
}

#[test]
fn arrays_keep_holes_extra_properties_and_length() {
    round_trip(
        "const holes = [1, , 3]; const sparse = []; sparse.length = 2 ** 24; sparse[5] = 'x'; \
         const extra = [1, 2]; extra.label = 'l'; const fixed = [1]; \
         Object.defineProperty(fixed, 'length', { writable: false });",
        &[
            ("holes.length + ':' + (1 in holes) + ':' + holes[2]", "3:false:3"),
            ("sparse.length + ':' + sparse[5] + ':' + Object.keys(sparse).length", "16777216:x:1"),
            ("extra.label + extra.length", "l2"),
            ("Array.isArray(extra)", "true"),
            ("try { fixed.push(2) } catch (e) { e instanceof TypeError }", "true"),
        ],
    );
}

#[test]
fn errors_dates_regexps_and_boxed_values_round_trip() {
    round_trip(
        "const e = new TypeError('bad thing'); e.code = 'E1'; const plainError = new Error('x'); \
         const when = new Date(86400000); when.note = 'n'; \
         const re = /a+/g; re.lastIndex = 2; const pair = [re, re]; \
         const boxed = [Object(1), Object('s'), Object(true), Object(10n)];",
        &[
            ("e instanceof TypeError && e instanceof Error", "true"),
            ("e.message + ':' + e.code + ':' + e.name", "bad thing:E1:TypeError"),
            ("e.stack.startsWith('TypeError: bad thing')", "true"),
            ("e.stack.includes('<repl>')", "true"),
            ("plainError.message", "x"),
            ("when.getTime() + when.note", "86400000n"),
            ("re.lastIndex + ':' + re.test('aaaa') + ':' + re.lastIndex", "2:true:4"),
            ("pair[0] === pair[1] && pair[0] === re", "true"),
            ("boxed.map((b) => typeof b + b.valueOf()).join()", "object1,objects,objecttrue,object10"),
        ],
    );
}

#[test]
fn maps_sets_buffers_and_typed_arrays_round_trip() {
    round_trip(
        "const key = { k: 1 }; const m = new Map([[key, 'obj'], ['s', key]]); \
         for (let i = 0; i < 100; i++) m.set(i, i * i); const s = new Set([1, key]); \
         const buf = new ArrayBuffer(8); const u8 = new Uint8Array(buf); u8[0] = 7; \
         const f64 = new Float64Array(buf); const big = new BigInt64Array([5n]);",
        &[
            ("m.size + ':' + m.get(key) + ':' + (m.get('s') === key) + ':' + m.get(99)", "102:obj:true:9801"),
            ("s.has(key) && s.has(1)", "true"),
            ("u8.buffer === buf && f64.buffer === buf", "true"),
            ("u8[0] = 9; new Uint8Array(buf)[0]", "9"),
            ("big[0]", "5"),
            ("m instanceof Map", "true"),
        ],
    );
}

#[test]
fn symbols_keep_their_identity() {
    round_trip(
        "const s = Symbol('k'); const o = { [s]: 1, t: s }; const reg = Symbol.for('app'); \
         const wk = Symbol.iterator; const both = [s, s];",
        &[
            ("o[o.t]", "1"),
            ("o.t === s && both[0] === both[1] && both[0] === s", "true"),
            ("reg === Symbol.for('app')", "true"),
            ("wk === Symbol.iterator", "true"),
            ("s.description", "k"),
        ],
    );
}

#[test]
fn private_fields_and_methods_round_trip() {
    round_trip(
        "class Account { #balance = 0; #log() { return 'ok' } deposit(n) { this.#balance += n; return this.#log() } \
           get balance() { return this.#balance } static has(o) { return #balance in o } } \
         const acct = new Account(); acct.deposit(5);",
        &[
            ("acct.balance", "5"),
            ("acct.deposit(2) + acct.balance", "ok7"),
            ("Account.has(acct)", "true"),
            ("Account.has({})", "false"),
            ("new Account().balance", "0"),
        ],
    );
}

#[test]
fn globals_deleted_or_replaced_are_replayed_and_template_globals_are_not_copied() {
    on_fresh_thread(|| {
        let bytes = in_derived(|ctx| {
            // `global` and `self` are the template's configurable globals.
            eval(ctx, "delete globalThis.global; globalThis.self = 'mine';").expect("eval");
            write_realm_state(ctx, &[], &SnapshotLimits::default()).expect("write")
        });
        let empty = in_derived(|ctx| write_realm_state(ctx, &[], &SnapshotLimits::default()).expect("write"));
        // An untouched realm writes no binding: the template's globals are not copied.
        assert!(empty.len() < 16, "{} bytes: {empty:?}", empty.len());
        let got = checks_after_read(&bytes, &["typeof global", "self", "typeof JSON.parse"]);
        assert_eq!(got, ["undefined", "mine", "function"]);
    });
}

#[test]
fn skipped_globals_are_not_written() {
    on_fresh_thread(|| {
        let bytes = in_derived(|ctx| {
            eval(ctx, "globalThis.hostThing = Promise.resolve(1); globalThis.kept = 1;").expect("eval");
            write_realm_state(ctx, &["hostThing"], &SnapshotLimits::default()).expect("write")
        });
        let got = checks_after_read(&bytes, &["typeof hostThing", "kept"]);
        assert_eq!(got, ["undefined", "1"]);
    });
}
