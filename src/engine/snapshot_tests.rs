//! Realm state written from one context derived from the thread's template and read into a
//! fresh one, on the same thread and on another (whose template has other pointers but the same
//! well-known indices). Each test runs on a thread of its own.

use super::limits::{CancelToken, Watchdog};
use super::snapshot::{
    read_realm_state, template_fingerprint, write_realm_state, SnapshotError, SnapshotErrorKind,
    SnapshotLimits,
};
use super::template;
use rquickjs::context::EvalOptions;
use rquickjs::{Ctx, Value};

use super::template_tests::on_fresh_thread;

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
                .map(|e| {
                    format!(
                        "{}: {}",
                        e.get::<_, String>("name").unwrap_or_default(),
                        e.message().unwrap_or_default()
                    )
                })
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
            panic!("the program fails: {e:?} {:?}", show(ctx, "0"));
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
            (
                "[counter.next(), counter.next(), counter.peek()].join()",
                "1,2,2",
            ),
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
            eval(
                ctx,
                "let late = 1; const g = () => { return typeof inner }; let inner = 2;",
            )
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
fn the_fingerprint_does_not_depend_on_what_runs_did_before() {
    let used = on_fresh_thread(|| {
        in_derived(|ctx| {
            eval(
                ctx,
                "[(1234.5).toLocaleString(), new Intl.NumberFormat('de').format(2), 'a'.localeCompare('b'), \
                 new Date(0).toLocaleString(), [1, 2].toLocaleString()].join()",
            )
            .expect("eval");
        });
        in_derived(template_fingerprint)
    });
    let fresh = on_fresh_thread(|| in_derived(template_fingerprint));
    assert_eq!(used, fresh);
}

#[test]
fn template_fingerprints_match_across_threads() {
    let here = on_fresh_thread(|| in_derived(template_fingerprint));
    let there = on_fresh_thread(|| in_derived(template_fingerprint));
    assert_eq!(here, there);
    assert_ne!(here, [0u8; 32]);
}

/// Ten bindings, a closure pair and a Map of 100 entries (the persistent realm benchmark).
const BENCH_PROGRAM: &str = "let n = 1; const seen = new Map();\n\
    function inc(k) { seen.set(k, ++n); return n }\n\
    const name = 'quickrealm', list = [1, 2, 3], cfg = { depth: 2, tags: ['a', 'b'] };\n\
    const when = new Date(0), big = 2n ** 70n, re = /ab+c/gi;\n\
    const counter = (() => { let c = 0; return { next: () => ++c, peek: () => c } })();\n\
    for (let i = 0; i < 100; i++) seen.set('key' + i, { i, sq: i * i });\n\
    cfg.self = cfg; inc('a');\n";

/// Size and times of the benchmark program's state (not a timed test: it only prints them).
/// `cargo test --lib engine::snapshot_tests::measure -- --ignored --nocapture`
#[test]
#[ignore]
fn measure_the_benchmark_state() {
    on_fresh_thread(|| {
        const ROUNDS: u32 = 500;
        let (bytes, write_time) = in_derived(|ctx| {
            eval(ctx, BENCH_PROGRAM).expect("eval");
            let limits = SnapshotLimits::default();
            let start = std::time::Instant::now();
            let mut bytes = Vec::new();
            for _ in 0..ROUNDS {
                bytes = write_realm_state(ctx, &[], &limits).expect("write");
            }
            (bytes, start.elapsed() / ROUNDS)
        });
        let mut read_only = std::time::Duration::ZERO;
        let start = std::time::Instant::now();
        for _ in 0..ROUNDS {
            in_derived(|ctx| {
                let t = std::time::Instant::now();
                read_realm_state(ctx, &bytes, &SnapshotLimits::default()).expect("read");
                read_only += t.elapsed();
                eval(ctx, "inc('b')").expect("first eval");
            });
        }
        let restore_time = start.elapsed() / ROUNDS;
        eprintln!(
            "state: {} bytes; write {:?}; derive + read + first eval {:?} (read alone {:?})",
            bytes.len(),
            write_time,
            restore_time,
            read_only / ROUNDS
        );
    });
}

#[test]
fn the_spike_benchmark_program_round_trips_and_stays_small() {
    on_fresh_thread(|| {
        let bytes = state_of(BENCH_PROGRAM);
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
fn class_fields_static_members_and_object_literal_super_round_trip() {
    round_trip(
        "class A { x = 1; static y = 2; static { A.z = 3 } [Symbol.for('tag')]() { return 't' } } \
         const base = { hi() { return 'hi' } }; \
         const obj = { __proto__: base, hi() { return super.hi() + '!' } }; \
         const bare = Object.create(null); bare.k = 1;",
        &[
            ("new A().x + A.y + A.z", "6"),
            ("new A()[Symbol.for('tag')]()", "t"),
            ("obj.hi()", "hi!"),
            (
                "Object.getPrototypeOf(bare) === null && bare.k === 1",
                "true",
            ),
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
            (
                "Object.getPrototypeOf(gen) === Object.getPrototypeOf(function*(){})",
                "true",
            ),
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
            (
                "holes.length + ':' + (1 in holes) + ':' + holes[2]",
                "3:false:3",
            ),
            (
                "sparse.length + ':' + sparse[5] + ':' + Object.keys(sparse).length",
                "16777216:x:1",
            ),
            ("extra.label + extra.length", "l2"),
            ("Array.isArray(extra)", "true"),
            (
                "try { fixed.push(2) } catch (e) { e instanceof TypeError }",
                "true",
            ),
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
            (
                "e.message + ':' + e.code + ':' + e.name",
                "bad thing:E1:TypeError",
            ),
            ("e.stack.startsWith('TypeError: bad thing')", "true"),
            ("e.stack.includes('<repl>')", "true"),
            ("plainError.message", "x"),
            ("when.getTime() + when.note", "86400000n"),
            (
                "re.lastIndex + ':' + re.test('aaaa') + ':' + re.lastIndex",
                "2:true:4",
            ),
            ("pair[0] === pair[1] && pair[0] === re", "true"),
            (
                "boxed.map((b) => typeof b + b.valueOf()).join()",
                "object1,objects,objecttrue,object10",
            ),
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
            (
                "m.size + ':' + m.get(key) + ':' + (m.get('s') === key) + ':' + m.get(99)",
                "102:obj:true:9801",
            ),
            ("s.has(key) && s.has(1)", "true"),
            ("u8.buffer === buf && f64.buffer === buf", "true"),
            ("u8[0] = 9; new Uint8Array(buf)[0]", "9"),
            ("big[0]", "5"),
            ("m instanceof Map", "true"),
        ],
    );
}

#[test]
fn objects_built_alike_come_back_alike_and_independent() {
    // Objects of one shape are written as the shape's number and their values; these check
    // that every kind of look-alike still reads back as itself.
    round_trip(
        "const rows = []; for (let i = 0; i < 50; i++) rows.push({ i, even: i % 2 === 0, \
         child: { i } }); \
         const nested = { a: 1, b: null }; nested.b = { a: 2, b: nested }; \
         const frozen = Object.freeze({ i: 1, even: true, child: null }); \
         const sealedKeys = Object.defineProperty({ i: 1, even: true }, 'child', \
         { value: 3, enumerable: false }); \
         const withGetter = { i: 1, even: true, get child() { return 'got' } }; \
         const holed = { i: 1, gone: 2, even: true, child: 4 }; delete holed.gone; \
         const proto = { kind: 'proto' }; const kids = [1, 2].map((i) => Object.assign( \
         Object.create(proto), { i }));",
        &[
            ("rows.length + ':' + rows[49].i + ':' + rows[48].even + ':' + rows[7].child.i", "50:49:true:7"),
            ("rows[3].i = 'changed'; rows[4].i + ':' + rows[3].i", "4:changed"),
            ("rows[5].extra = 1; Object.keys(rows[6]).join() + ';' + Object.keys(rows[5]).join()",
             "i,even,child;i,even,child,extra"),
            ("nested.b.b === nested && nested.b.a", "2"),
            ("Object.isFrozen(frozen) + ':' + Object.isFrozen(rows[0])", "true:false"),
            ("Object.keys(sealedKeys).join() + ':' + sealedKeys.child", "i,even:3"),
            ("withGetter.child + ':' + typeof Object.getOwnPropertyDescriptor(withGetter, 'child').get",
             "got:function"),
            ("Object.keys(holed).join() + ':' + holed.child", "i,even,child:4"),
            ("kids[1].i + kids[1].kind + ':' + (Object.getPrototypeOf(kids[0]) === proto)", "2proto:true"),
            ("proto.kind = 'changed'; kids[0].kind", "changed"),
        ],
    );
}

#[test]
fn objects_built_alike_name_their_shape_instead_of_their_keys() {
    on_fresh_thread(|| {
        let rows = "const rows = []; for (let i = 0; i < 200; i++) rows.push({ i, even: true });";
        let alike = state_of(rows).len();
        // The same objects each with keys of their own spelling: no shape to share.
        let unlike = state_of(
            "const rows = []; for (let i = 0; i < 200; i++) rows.push({ ['i' + i]: i, even: true });",
        )
        .len();
        // In full, an object takes at least 14 bytes (class, prototype, two keys with their
        // attributes and values); by its shape's number, about 8.
        assert!(
            alike < 200 * 10,
            "{alike} bytes for 200 objects of one shape"
        );
        assert!(alike * 2 < unlike, "{alike} bytes alike, {unlike} unlike");
    });
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
        let empty = in_derived(|ctx| {
            write_realm_state(ctx, &[], &SnapshotLimits::default()).expect("write")
        });
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
            eval(
                ctx,
                "globalThis.hostThing = Promise.resolve(1); globalThis.kept = 1;",
            )
            .expect("eval");
            write_realm_state(ctx, &["hostThing"], &SnapshotLimits::default()).expect("write")
        });
        let got = checks_after_read(&bytes, &["typeof hostThing", "kept"]);
        assert_eq!(got, ["undefined", "1"]);
    });
}

fn refusal(program: &str) -> SnapshotError {
    let program = program.to_string();
    on_fresh_thread(
        move || match write(&program, &[], &SnapshotLimits::default()) {
            Ok(_) => panic!("written: {program}"),
            Err(e) => e,
        },
    )
}

#[test]
fn values_that_are_not_state_are_refused_naming_the_binding_and_the_path() {
    let cases: &[(&str, &str)] = &[
        (
            "const db = new Proxy({}, {});",
            "binding `db` holds a Proxy, which is not state",
        ),
        (
            "const cfg = { conn: new Proxy({}, {}) };",
            "binding `cfg` (cfg.conn) holds a Proxy, which is not state",
        ),
        (
            "const p = Promise.resolve(1);",
            "binding `p` holds a Promise, which is not state",
        ),
        (
            "const w = new WeakMap();",
            "binding `w` holds a WeakMap, which is not state",
        ),
        (
            "const ws = [new WeakSet()];",
            "binding `ws` (ws[0]) holds a WeakSet, which is not state",
        ),
        (
            "const r = new WeakRef({});",
            "binding `r` holds a WeakRef, which is not state",
        ),
        (
            "const fr = new FinalizationRegistry(() => {});",
            "binding `fr` holds a FinalizationRegistry, which is not state",
        ),
        (
            "const b = function () {}.bind(null);",
            "binding `b` holds a bound function, which is not state",
        ),
        (
            "const it = { list: [1].values() };",
            "binding `it` (it.list) holds an iterator, which is not state",
        ),
        (
            "function* g() { yield 1 } const gen = g();",
            "binding `gen` holds a generator object, which is not state",
        ),
        (
            "const res = { r: Promise.withResolvers().resolve };",
            "binding `res` (res.r) holds a host function, which is not state",
        ),
        (
            "const dv = new DataView(new ArrayBuffer(1));",
            "binding `dv` holds a DataView, which is not state",
        ),
        (
            "var deep = { a: [0, { b: new Proxy({}, {}) }] };",
            "binding `deep` (deep.a[1].b) holds a Proxy, which is not state",
        ),
        (
            "const m = new Map([['k', { conn: new Proxy({}, {}) }]]);",
            "binding `m` (m.<entry>.conn) holds a Proxy, which is not state",
        ),
        (
            "const viaProto = Object.create(new Proxy({}, {}));",
            "binding `viaProto` (viaProto.<prototype>) holds a Proxy, which is not state",
        ),
    ];
    for (program, message) in cases {
        let e = refusal(program);
        assert_eq!(e.kind, SnapshotErrorKind::Refused, "{program}");
        assert_eq!(e.message, *message, "{program}");
    }
}

#[test]
fn a_closure_of_a_suspended_generator_is_refused() {
    let e = refusal(
        "function* g() { let x = 1; yield () => x; } \
         const holder = { f: (() => { const it = g(); globalThis.keep = it; return it.next().value })() };",
    );
    assert_eq!(e.kind, SnapshotErrorKind::Refused);
    assert!(
        e.message.starts_with("binding `holder` (holder.f.<closure variable x>) holds a closure of a suspended generator"),
        "{}",
        e.message
    );
}

#[test]
fn a_closure_over_a_value_that_is_not_state_names_the_variable() {
    let e = refusal("const get = (() => { const conn = new Proxy({}, {}); return () => conn })();");
    assert_eq!(
        e.message,
        "binding `get` (get.<closure variable conn>) holds a Proxy, which is not state"
    );
}

/// A state of one binding `d` holding `depth` nested objects `{0: ...}`, as only a key holder
/// could make it: the written state of `let d = null` with the nesting spliced in, in this
/// build's tags.
fn deep_state(depth: usize) -> Vec<u8> {
    const NULL: u8 = 1;
    const OBJECT_FULL: u8 = 24;
    const CLASS_OBJECT: u8 = 1;
    let written = state_of("let d = null;");
    // ... binding flags, NULL, no global
    assert_eq!(&written[written.len() - 2..], &[NULL, 0]);
    let mut b = written[..written.len() - 2].to_vec();
    for _ in 0..depth {
        // class, prototype first: null, extensible, one property `0` (a tagged integer atom),
        // its flags, then its value: the next level
        b.extend([OBJECT_FULL, CLASS_OBJECT, 1, NULL, 1, 1, 1, 0x07]);
    }
    b.extend([NULL, 0]);
    with_checksum(b)
}

fn limits(max_bytes: usize, max_depth: u32, max_nodes: u32) -> SnapshotLimits {
    SnapshotLimits {
        max_bytes,
        max_depth,
        max_nodes,
    }
}

#[test]
fn a_deep_structure_hits_the_depth_cap_not_the_stack() {
    on_fresh_thread(|| {
        let realm = template::derive().expect("a derived realm");
        // A million objects take more than a run's default heap.
        realm.meter.set_limit(usize::MAX);
        let e = realm.context.with(|ctx| {
            eval(&ctx, "let d = {}; for (let i = 0; i < 1e6; i++) d = { d };").expect("eval");
            write_realm_state(&ctx, &[], &SnapshotLimits::default())
        });
        template::retire(realm, true);
        let e = e.expect_err("too deep");
        assert_eq!(e.kind, SnapshotErrorKind::Limit, "{}", e.message);
        // Bytes nesting a million objects, as only a key holder could make them.
        let deep = deep_state(1_000_000);
        let e = in_derived(|ctx| read_realm_state(ctx, &deep, &SnapshotLimits::default()))
            .expect_err("too deep to read");
        assert_eq!(e.kind, SnapshotErrorKind::Limit, "{}", e.message);
        // Written with a generous cap, read with a small one.
        let bytes = write(
            "let d = {}; for (let i = 0; i < 500; i++) d = { d };",
            &[],
            &SnapshotLimits::default(),
        )
        .expect("written");
        let e = in_derived(|ctx| read_realm_state(ctx, &bytes, &limits(1 << 20, 100, 1 << 20)))
            .expect_err("too deep to read");
        assert_eq!(e.kind, SnapshotErrorKind::Limit);
        assert!(e.message.contains("depth"), "{}", e.message);
    });
}

#[test]
fn node_and_size_caps_apply_in_both_directions() {
    on_fresh_thread(|| {
        let many = "const objects = Array.from({ length: 1000 }, (_, i) => ({ i }));";
        let e = write(many, &[], &limits(1 << 20, 100, 200)).expect_err("too many nodes");
        assert_eq!(e.kind, SnapshotErrorKind::Limit);
        assert!(e.message.contains("node"), "{}", e.message);
        let bytes = write(many, &[], &SnapshotLimits::default()).expect("written");
        let e = in_derived(|ctx| read_realm_state(ctx, &bytes, &limits(1 << 20, 100, 200)))
            .expect_err("too many nodes to read");
        assert_eq!(e.kind, SnapshotErrorKind::Limit);

        let big = "const text = 'x'.repeat(100000); const more = [text + 'y'];";
        let e = write(big, &[], &limits(10_000, 100, 1000)).expect_err("too big");
        assert_eq!(e.kind, SnapshotErrorKind::Limit);
        assert!(e.message.contains("size"), "{}", e.message);
        let bytes = write(big, &[], &SnapshotLimits::default()).expect("written");
        let e = in_derived(|ctx| read_realm_state(ctx, &bytes, &limits(10_000, 100, 1000)))
            .expect_err("too big to read");
        assert_eq!(e.kind, SnapshotErrorKind::Limit);
    });
}

#[test]
fn a_huge_sparse_array_stays_small() {
    on_fresh_thread(|| {
        let bytes = state_of("const sparse = []; sparse.length = 2 ** 24;");
        assert!(bytes.len() < 100, "{} bytes", bytes.len());
    });
}

/// Evaluates `program` in a derived context, then cancels its run (the next interrupt poll
/// stops what runs) and calls `f`.
fn in_cancelled<T>(program: &str, f: impl FnOnce(&Ctx<'_>) -> T) -> T {
    let realm = template::derive().expect("a derived realm");
    let out = realm.context.with(|ctx| {
        eval(&ctx, program).expect("eval");
        let token = CancelToken::new();
        token.cancel();
        *realm.slot.watchdog.borrow_mut() =
            Watchdog::new(std::time::Duration::from_secs(3600), token);
        f(&ctx)
    });
    template::retire(realm, false);
    out
}

#[test]
fn the_interrupt_handler_stops_a_long_write_and_a_long_read() {
    on_fresh_thread(|| {
        let program = "const objects = Array.from({ length: 50000 }, (_, i) => ({ i }));";
        let e = in_cancelled(program, |ctx| {
            write_realm_state(ctx, &[], &SnapshotLimits::default())
        })
        .expect_err("interrupted");
        assert_eq!(e.kind, SnapshotErrorKind::Interrupted, "{}", e.message);
        let bytes = state_of(program);
        let e = in_cancelled("", |ctx| {
            read_realm_state(ctx, &bytes, &SnapshotLimits::default())
        })
        .expect_err("interrupted");
        assert_eq!(e.kind, SnapshotErrorKind::Interrupted, "{}", e.message);
    });
}

#[test]
fn reading_needs_a_fresh_derived_context() {
    on_fresh_thread(|| {
        let bytes = state_of("let a = 1;");
        let e = in_derived(|ctx| {
            eval(ctx, "let b = 2;").expect("eval");
            read_realm_state(ctx, &bytes, &SnapshotLimits::default())
        })
        .expect_err("not fresh");
        assert_eq!(e.kind, SnapshotErrorKind::Refused);
    });
}

/// The engine's stream checksum (`bc_csum`), so that altered bytes reach the parser.
fn stream_checksum(p: &[u8]) -> u32 {
    let mut h: u32 = 0;
    let mut i = 0;
    while i + 4 < p.len() {
        h = h.wrapping_add(u32::from_le_bytes([p[i], p[i + 1], p[i + 2], p[i + 3]]));
        h = h.wrapping_mul(0x9e37_0001);
        i += 4;
    }
    let (mut a, mut b, mut c) = (0u32, 0u32, 0u32);
    let rest = p.len() - i;
    if rest >= 3 {
        c = u32::from(p[i + 2]);
    }
    if rest >= 2 {
        b = u32::from(p[i + 1]);
    }
    if rest >= 1 {
        a = u32::from(p[i]);
    }
    h = h.wrapping_add(a | (b << 8) | (c << 16));
    h.wrapping_mul(0x9e37_0001)
}

fn with_checksum(mut bytes: Vec<u8>) -> Vec<u8> {
    if bytes.len() >= 5 {
        let h = stream_checksum(&bytes[5..]);
        bytes[1..5].copy_from_slice(&h.to_le_bytes());
    }
    bytes
}

#[test]
fn altered_or_truncated_data_is_malformed_never_a_crash() {
    on_fresh_thread(|| {
        let bytes = state_of(
            "const o = { a: 1, s: 'str', arr: [1, , 3], m: new Map([[1, { x: 2 }]]), \
             d: new Date(0), big: 10n, set: new Set(['k']), u8: new Uint8Array([1, 2]) }; \
             o.self = o; let n = -0.5; const sym = Symbol('q'); const boxed = Object('b');",
        );
        let mut failures = 0;
        let mut variants: Vec<Vec<u8>> = Vec::new();
        for len in 0..bytes.len() {
            variants.push(bytes[..len].to_vec());
            // Truncated with a checksum of what is left: the parser sees the end.
            variants.push(with_checksum(bytes[..len].to_vec()));
        }
        for i in 0..bytes.len() {
            for flip in [0x01u8, 0x80, 0xff] {
                let mut v = bytes.clone();
                v[i] ^= flip;
                variants.push(v.clone());
                if i >= 5 {
                    variants.push(with_checksum(v));
                }
            }
        }
        for v in &variants {
            let outcome = in_derived(|ctx| {
                let r = read_realm_state(ctx, v, &SnapshotLimits::default());
                let _ = ctx.catch();
                r
            });
            if let Err(e) = outcome {
                failures += 1;
                assert!(
                    matches!(
                        e.kind,
                        SnapshotErrorKind::Malformed | SnapshotErrorKind::Limit
                    ),
                    "{e:?}"
                );
            }
        }
        assert!(failures > bytes.len(), "{failures} of {}", variants.len());
    });
}

// The stock object format (JS_WriteObject / JS_ReadObject), which realm state builds on: the
// four fixes it needed, each of which a test below fails without.

/// `value` through the stock writer and reader with references allowed; `Err` with the
/// message when either refuses.
fn stock_round_trip<'js>(ctx: &Ctx<'js>, value: &Value<'js>) -> Result<Value<'js>, String> {
    let raw = ctx.as_raw().as_ptr();
    let mut size: rquickjs::qjs::size_t = 0;
    // SAFETY: a live context entered on this thread and a value of it; the buffer the writer
    // returns is read within its size and freed with js_free.
    unsafe {
        let buf = rquickjs::qjs::JS_WriteObject(
            raw,
            &mut size,
            value.as_raw(),
            rquickjs::qjs::JS_WRITE_OBJ_REFERENCE as _,
        );
        if buf.is_null() {
            let e = ctx.catch();
            return Err(format!("write: {e:?}"));
        }
        let out = rquickjs::qjs::JS_ReadObject(
            raw,
            buf,
            size as _,
            rquickjs::qjs::JS_READ_OBJ_REFERENCE as _,
        );
        rquickjs::qjs::js_free(raw, buf.cast());
        if rquickjs::qjs::JS_IsException(out) {
            let e = ctx.catch();
            return Err(e
                .as_exception()
                .and_then(|e| e.message())
                .unwrap_or_else(|| format!("{e:?}")));
        }
        Ok(Value::from_raw(ctx.clone(), out))
    }
}

fn in_plain_context<T>(f: impl FnOnce(&rquickjs::Runtime, &Ctx<'_>) -> T) -> T {
    let rt = rquickjs::Runtime::new().expect("runtime");
    let context = rquickjs::Context::full(&rt).expect("context");
    context.with(|ctx| f(&rt, &ctx))
}

/// Evaluates `setup`, passes `value` through the stock format, and gives `check` (a function
/// of the copy) as text.
fn stock_check(setup: &str, check: &str) -> String {
    in_plain_context(|_, ctx| {
        let value: Value = eval(ctx, setup).expect("setup");
        match stock_round_trip(ctx, &value) {
            Ok(copy) => {
                let f = eval(ctx, check)
                    .expect("check")
                    .into_function()
                    .expect("a function");
                let out: Value = f.call((copy,)).expect("check runs");
                show_value(ctx, out)
            }
            Err(e) => format!("refused: {e}"),
        }
    })
}

fn show_value<'js>(ctx: &Ctx<'js>, v: Value<'js>) -> String {
    let f: rquickjs::Function = ctx.globals().get("String").expect("String");
    f.call::<_, String>((v,)).expect("a string")
}

#[test]
fn stock_format_reads_a_regexp_referenced_twice() {
    // Patch 0033: the reader numbers a RegExp as the writer did.
    assert_eq!(
        stock_check(
            "const re = /a/g; const x = {}; [re, re, x, x]",
            "(c) => c[0] === c[1] && c[2] === c[3] && c[0].test('a')"
        ),
        "true"
    );
}

#[test]
fn stock_format_keeps_the_identity_of_a_local_symbol() {
    // Patch 0034: every occurrence of a local symbol reads back as one symbol.
    assert_eq!(
        stock_check(
            "const s = Symbol('k'); ({ [s]: 1, t: s, u: s })",
            "(c) => c[c.t] === 1 && c.t === c.u"
        ),
        "true"
    );
}

#[test]
fn stock_format_writes_a_map_with_a_deleted_record_an_iterator_holds() {
    // Patch 0035: a record deleted while an iterator stands on it is not written.
    assert_eq!(
        stock_check(
            "const m = new Map([[1, 'a'], [2, 'b'], [3, 'c']]); globalThis.it = m.keys(); it.next(); \
             m.delete(1); [m, 'after']",
            "(c) => c[0].size + ':' + [...c[0].keys()].join() + ':' + c[1]",
        ),
        "2:2,3:after"
    );
}

#[test]
fn stock_format_never_returns_a_truncated_buffer_when_memory_runs_out() {
    // Patch 0036: the writer checks its buffer for out-of-memory.
    in_plain_context(|_, ctx| {
        let value: Value = eval(
            ctx,
            "Array.from({ length: 2000 }, (_, i) => 'item number ' + i)",
        )
        .expect("setup");
        let expected = show_value(ctx, value.clone());
        let mut refused = 0;
        let mut written = 0;
        // Each limit leaves a little more room for the writer's buffer than the last.
        for extra in (0..200_000usize).step_by(4096) {
            let raw = ctx.as_raw().as_ptr();
            let mut size: rquickjs::qjs::size_t = 0;
            // SAFETY: the runtime of this live context, entered on this thread; the limit is
            // lifted again right after the write; the buffer is used as in `stock_round_trip`.
            let buf = unsafe {
                let rt = rquickjs::qjs::JS_GetRuntime(raw);
                rquickjs::qjs::JS_RunGC(rt);
                let mut usage = std::mem::zeroed::<rquickjs::qjs::JSMemoryUsage>();
                rquickjs::qjs::JS_ComputeMemoryUsage(rt, &mut usage);
                rquickjs::qjs::JS_SetMemoryLimit(
                    rt,
                    usage.malloc_size as rquickjs::qjs::size_t + extra as rquickjs::qjs::size_t,
                );
                let buf = rquickjs::qjs::JS_WriteObject(raw, &mut size, value.as_raw(), 0);
                rquickjs::qjs::JS_SetMemoryLimit(rt, 0);
                buf
            };
            if buf.is_null() {
                let _ = ctx.catch();
                refused += 1;
                continue;
            }
            written += 1;
            // SAFETY: a buffer of `size` bytes from the writer, freed once.
            let copy = unsafe {
                let out = rquickjs::qjs::JS_ReadObject(raw, buf, size as _, 0);
                rquickjs::qjs::js_free(raw, buf.cast());
                Value::from_raw(ctx.clone(), out)
            };
            assert!(
                !copy.is_exception(),
                "a buffer that does not read back (limit +{extra})"
            );
            assert_eq!(show_value(ctx, copy), expected, "limit +{extra}");
        }
        assert!(
            refused > 0 && written > 0,
            "{refused} refused, {written} written"
        );
    });
}

#[test]
fn a_read_state_stays_in_its_realm() {
    on_fresh_thread(|| {
        let bytes = state_of("let n = 1; var v = 2; const o = { k: 1 };");
        let got = checks_after_read(&bytes, &["o.k = 5; Object.prototype.polluted = 1; n + v"]);
        assert!(got[0].starts_with("throws: TypeError"), "{got:?}");
        let next = in_derived(|ctx| {
            show(
                ctx,
                "[typeof n, typeof v, typeof o, typeof Object.prototype.polluted].join()",
            )
        });
        assert_eq!(next, "undefined,undefined,undefined,undefined");
    });
}
