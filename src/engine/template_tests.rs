//! Runs derived from the thread's template realm: every channel between two runs that share it
//! is closed. Each test runs on a thread of its own, so it starts without a template.

use super::errors::ErrorCode;
use super::ffi;
use super::limits::CancelToken;
use super::marshal::Data;
use super::realm::lockdown::unfrozen_reachable;
use super::run::{execute, RunOutcome, RunRequest};
use super::template;

/// Runs `f` on a new thread of a worker's stack size: a thread with no template yet.
pub(super) fn on_fresh_thread<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(super::workers::WORKER_STACK_BYTES)
        .spawn(f)
        .expect("spawn")
        .join()
        .expect("the thread survives")
}

fn run(source: &str) -> RunOutcome {
    execute(&RunRequest::new(source), &CancelToken::new())
}

fn value(outcome: &RunOutcome) -> Data {
    assert!(outcome.ok, "{:?}", outcome.error);
    outcome.value.clone().expect("a value")
}

fn text(outcome: &RunOutcome) -> String {
    match value(outcome) {
        Data::String(s) => s.to_lossy(),
        other => panic!("not a string: {other:?}"),
    }
}

#[test]
fn standard_runs_derive_from_one_template_per_thread() {
    on_fresh_thread(|| {
        assert!(!template::is_built());
        assert!(run("return 1").ok);
        assert!(template::is_built());
        // A small run measures only its own heap, not the template's intrinsics.
        let outcome = run("return [1, 2, 3].map((x) => x * 2)");
        assert!(outcome.ok);
        assert!(
            outcome.stats.heap_bytes < 64 << 10,
            "{}",
            outcome.stats.heap_bytes
        );
    });
}

#[test]
fn globals_written_by_one_run_are_absent_in_the_next() {
    on_fresh_thread(|| {
        let mut first =
            RunRequest::new("globalThis.leak = 1; var v = 2; let l = 3; self.s = 4; 'x'");
        first.mode = super::run::Mode::Script;
        assert!(execute(&first, &CancelToken::new()).ok);
        let second = run(
            "return [typeof leak, typeof v, typeof l, typeof s, globalThis.globalThis === globalThis, \
             self === globalThis, global === globalThis].join()",
        );
        assert_eq!(
            text(&second),
            "undefined,undefined,undefined,undefined,true,true,true"
        );
    });
}

#[test]
fn every_object_a_run_can_reach_is_frozen_including_lazily_made_ones() {
    on_fresh_thread(|| {
        // Intl's implementation, and the formatters toLocaleString makes on first use.
        assert!(run("return [(1234.5).toLocaleString(), new Intl.NumberFormat('de').format(2), 'a'.localeCompare('b')]").ok);
        let realm = template::derive().expect("a derived realm");
        let unfrozen = realm.context.with(|ctx| unfrozen_reachable(&ctx)).unwrap();
        assert_eq!(unfrozen, 0);
        template::retire(realm, true);
        let outcome = run("const fmt = new Intl.NumberFormat('en'); \
             const o = fmt.resolvedOptions(); const before = o.locale; o.locale = 'changed'; \
             return [fmt.resolvedOptions().locale === before, Object.isFrozen(Intl.NumberFormat.prototype), \
                     Object.isFrozen(Object.getPrototypeOf(fmt.format))].join()");
        assert_eq!(text(&outcome), "true,true,true");
    });
}

#[test]
fn math_random_is_seeded_afresh_for_every_run() {
    on_fresh_thread(|| {
        let draw = "return Array.from({ length: 4 }, () => Math.random()).join()";
        let a = text(&run(draw));
        let b = text(&run(draw));
        assert_ne!(a, b);
    });
}

#[test]
fn the_clock_origin_is_the_runs_own() {
    on_fresh_thread(|| {
        assert!(run("const end = Date.now() + 120; while (Date.now() < end) {} return 1").ok);
        let later = value(&run("return performance.now()"));
        let Data::Number(ms) = later else {
            panic!("{later:?}")
        };
        assert!(
            ms < 100.0,
            "performance.now() counted from an earlier run: {ms}"
        );
    });
}

#[test]
fn timers_and_jobs_of_one_run_never_reach_the_next() {
    on_fresh_thread(|| {
        // Left pending: an interval, a timeout, a microtask chain that outlives the result.
        let first = run(
            "setInterval(() => emit('interval'), 1); setTimeout(() => emit('timeout'), 5); \
             Promise.resolve().then(() => Promise.resolve()).then(() => emit('job')); return 1",
        );
        assert!(first.ok);
        let second = run("await new Promise((r) => setTimeout(r, 30)); \
             return setTimeout(() => {}, 1)");
        assert_eq!(second.output, "");
        // Timer ids restart (the wait above took 1): nothing of the first run's timers is left.
        assert_eq!(value(&second), Data::Number(2.0));
    });
}

#[test]
fn console_state_is_the_runs_own() {
    on_fresh_thread(|| {
        assert!(run("console.count('a'); console.count('a'); console.group('g'); console.time('t'); return 1").ok);
        let second = run("console.count('a'); console.log('flat'); console.timeEnd('t'); return 1");
        let lines: Vec<&str> = second.logs.iter().map(|l| l.message.as_str()).collect();
        // The count restarts, no group indents the line, and the first run's timer is unknown.
        assert_eq!(lines, ["a: 1", "flat"]);
    });
}

#[test]
fn unhandled_rejections_are_reported_by_their_own_run_only() {
    on_fresh_thread(|| {
        let first = run("Promise.reject(new Error('first')); return 1");
        assert!(first.logs.iter().any(|l| l.message.contains("first")));
        let second = run("return 2");
        assert!(second.logs.is_empty(), "{:?}", second.logs);
    });
}

#[test]
fn the_memory_limit_counts_the_runs_heap_and_a_hit_discards_the_template() {
    on_fresh_thread(|| {
        assert!(run("return 1").ok);
        let mut big = RunRequest::new("const a = []; for (;;) a.push(new Array(1000).fill(1))");
        big.limits.memory_bytes = 4 << 20;
        let outcome = execute(&big, &CancelToken::new());
        assert_eq!(outcome.error.map(|e| e.code), Some(ErrorCode::MemoryLimit));
        assert!(!template::is_built());
        // A run just under a tight limit still fits: the template is not counted.
        let mut small = RunRequest::new("return new Array(20000).fill(1).length");
        small.limits.memory_bytes = 512 << 10;
        assert_eq!(
            value(&execute(&small, &CancelToken::new())),
            Data::Number(20000.0)
        );
    });
}

#[test]
fn a_stopped_run_discards_the_template_and_the_next_run_is_clean() {
    on_fresh_thread(|| {
        let mut slow =
            RunRequest::new("Promise.resolve().then(() => { for (;;) {} }); for (;;) {}");
        slow.limits.timeout_ms = 50;
        let outcome = execute(&slow, &CancelToken::new());
        assert_eq!(outcome.error.map(|e| e.code), Some(ErrorCode::Timeout));
        assert!(!template::is_built());
        assert_eq!(value(&run("return 40 + 2")), Data::Number(42.0));
        assert!(template::is_built());
    });
}

#[test]
fn a_nested_run_on_the_same_thread_takes_a_realm_of_its_own() {
    on_fresh_thread(|| {
        let held = template::derive().expect("a derived realm");
        assert!(template::derive().is_none());
        let nested = run("return 7");
        assert_eq!(value(&nested), Data::Number(7.0));
        template::retire(held, true);
        assert!(template::derive().is_some_and(|r| {
            template::retire(r, true);
            true
        }));
    });
}

#[test]
fn symbols_from_the_registry_carry_nothing_between_runs() {
    on_fresh_thread(|| {
        assert!(run("const s = Symbol.for('shared'); try { s.x = 1 } catch {} return 1").ok);
        let second = run(
            "const s = Symbol.for('shared'); return [Symbol.keyFor(s), s.x === undefined].join()",
        );
        assert_eq!(text(&second), "shared,true");
    });
}

#[test]
fn queued_jobs_keep_their_context_alive_and_can_be_discarded() {
    use rquickjs::{Context, Object, Persistent, Runtime};
    let rt = Runtime::new().expect("runtime");
    let first = Context::full(&rt).expect("context");
    let global = first.with(|ctx| {
        ctx.eval::<(), _>("Promise.resolve().then(() => { globalThis.ran = 'yes' })")
            .expect("queued");
        Persistent::save(&ctx, ctx.globals())
    });
    // Freed with its job still queued: the job holds the context (patch 0020), so running it
    // later touches live memory and does its work.
    drop(first);
    assert!(rt.execute_pending_job().expect("the job runs"));
    let second = Context::full(&rt).expect("context");
    let ran = second.with(|ctx| {
        let g: Object = global.restore(&ctx).expect("the first global");
        g.get::<_, String>("ran").expect("set by the job")
    });
    assert_eq!(ran, "yes");
    // Discarding drops exactly that context's jobs.
    let other = Context::full(&rt).expect("context");
    other.with(|ctx| {
        ctx.eval::<(), _>("Promise.resolve().then(() => 1); queueMicrotask(() => 2)")
            .expect("queued");
    });
    second.with(|ctx| {
        ctx.eval::<(), _>("Promise.resolve().then(() => 3)")
            .expect("queued")
    });
    assert_eq!(other.with(|ctx| ffi::discard_jobs(&ctx)), 2);
    assert!(rt.execute_pending_job().expect("the other job runs"));
    assert!(!rt.is_job_pending());
}

#[test]
fn helpers_made_in_the_template_work_from_every_run() {
    on_fresh_thread(|| {
        assert!(run("return 1").ok);
        // Timers computed with the template's clock would fire early by the time since it was
        // built, which the runs before decide.
        assert!(run("const end = Date.now() + 60; while (Date.now() < end) {} return 1").ok);
        let waited = value(&run(
            "const t0 = Date.now(); await new Promise((r) => setTimeout(r, 50)); return Date.now() - t0",
        ));
        assert!(
            matches!(waited, Data::Number(ms) if ms >= 45.0),
            "{waited:?}"
        );
        // A Set the Intl helpers made in the template still finds its keys from a run.
        let locale = run("return new Intl.NumberFormat('de-DE').resolvedOptions().locale");
        assert_eq!(text(&locale), "de-DE");
    });
}

#[test]
fn finalization_callbacks_of_a_finished_run_never_run_in_a_later_one() {
    on_fresh_thread(|| {
        // The target is registered while the result is copied out (a getter), held only by a
        // promise job: dropping the run's jobs frees it, which queues the run's callback after
        // the jobs being dropped, for the next run's job loop.
        let first = run(
            "globalThis.reg = new FinalizationRegistry(console.log); \
             let armed = false; \
             return { get x() { \
               if (!armed) { armed = true; let u = {}; reg.register(u, 'from the first run'); Promise.resolve().then(() => u); } \
               return 1 } }",
        );
        assert!(first.ok, "{:?}", first.error);
        let quiet = || {
            for _ in 0..3 {
                let later = run("await null; return 2");
                let lines: Vec<&str> = later.logs.iter().map(|l| l.message.as_str()).collect();
                assert!(lines.is_empty(), "{lines:?}");
            }
        };
        quiet();
        // Or held by a pending timer, which the timers' reset frees.
        let second = run(
            "globalThis.reg = new FinalizationRegistry(console.log); \
             { const t = {}; reg.register(t, 'from the second run'); setTimeout(() => {}, 1e9, t); } return 1",
        );
        assert!(second.ok, "{:?}", second.error);
        quiet();
    });
}

#[test]
fn a_run_whose_registry_is_garbage_with_its_context_does_not_crash_the_collection() {
    on_fresh_thread(|| {
        // Context, global, registry and target form one cycle that a collection between runs
        // frees; the registry must not queue a job that revives the context being freed.
        let outcome = run("const t = {}; t.self = t; \
             const r = new FinalizationRegistry(console.log); r.self = r; r.register(t, 'x'); \
             const junk = {}; junk.self = junk; junk.s = 'x'.repeat(3 << 20); \
             return 1");
        assert!(outcome.ok, "{:?}", outcome.error);
        assert_eq!(value(&run("return 3")), Data::Number(3.0));
    });
}

#[test]
fn a_small_memory_limit_does_not_reach_the_next_runs_set_up() {
    on_fresh_thread(|| {
        // Garbage in a cycle up to the first run's own limit, left for the next run.
        let mut tight =
            RunRequest::new("const o = {}; o.self = o; o.s = 'x'.repeat(1000000); return 1");
        tight.limits.memory_bytes = 1 << 20;
        assert!(execute(&tight, &CancelToken::new()).ok);
        assert_eq!(value(&run("return [1, 2, 3].length")), Data::Number(3.0));
        assert!(template::is_built());
    });
}

#[test]
fn a_source_run_again_is_compiled_once_per_thread() {
    on_fresh_thread(|| {
        let compiles = || template::COMPILES.with(|n| n.get());
        assert_eq!(text(&run("return typeof globalThis.x")), "undefined");
        let after_first = compiles();
        assert_eq!(after_first, 1);
        for _ in 0..5 {
            assert_eq!(text(&run("return typeof globalThis.x")), "undefined");
        }
        assert_eq!(
            compiles(),
            after_first,
            "the same source is not compiled again"
        );
        // Another source, filename or mode is another script.
        assert!(run("return 2").ok);
        let mut named = RunRequest::new("return typeof globalThis.x");
        named.filename = "other.js".into();
        assert!(execute(&named, &CancelToken::new()).ok);
        let mut script = RunRequest::new("return typeof globalThis.x");
        script.mode = super::run::Mode::Script;
        assert!(
            !execute(&script, &CancelToken::new()).ok,
            "return is not allowed in a script"
        );
        assert_eq!(compiles(), after_first + 3);
        // A source that does not compile is not kept: it is compiled (and refused) every time.
        for _ in 0..2 {
            assert_eq!(
                run("return (").error.expect("a syntax error").name,
                "SyntaxError"
            );
        }
        assert_eq!(compiles(), after_first + 5);
    });
}

#[test]
fn a_persistent_realm_cell_run_again_is_compiled_once_and_apart_from_scripts() {
    on_fresh_thread(|| {
        let compiles = || template::COMPILES.with(|n| n.get());
        let key = std::sync::Arc::new(b"a key of sixteen bytes or more".to_vec());
        let cell = |source: &str, sealed: Option<Vec<u8>>| {
            let mut req = RunRequest::new(source);
            req.mode = super::run::Mode::Repl;
            req.state = Some(super::run::PersistState {
                sealed: sealed.map(std::sync::Arc::new),
                key: key.clone(),
                transactional: false,
            });
            execute(&req, &CancelToken::new())
        };
        let first = cell("let n = 0; await null; n", None);
        assert!(first.ok, "{first:?}");
        let mut state = first.state.expect("a state");
        let before = compiles();
        for i in 1..=4 {
            let next = cell("n += 1; await null; n", Some(state));
            assert_eq!(next.value, Some(Data::Number(f64::from(i))), "{next:?}");
            state = next.state.expect("a state");
        }
        assert_eq!(compiles(), before + 1, "the same cell is compiled once");
        // The same text as a plain script is another compilation: no top-level await there.
        let mut script = RunRequest::new("n += 1; await null; n");
        script.mode = super::run::Mode::Script;
        assert!(!execute(&script, &CancelToken::new()).ok);
    });
}

#[test]
fn compiled_scripts_stay_within_their_budget_and_keep_the_template() {
    on_fresh_thread(|| {
        for i in 0..400 {
            let source = format!(
                "const t{i} = [{}]; return t{i}.length",
                (0..200)
                    .map(|n| n.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            );
            assert!(run(&source).ok);
        }
        let (entries, heap) = template::compiled_stats().expect("a template");
        assert!(entries <= 64, "{entries}");
        assert!(heap <= (1 << 20) + (64 << 10), "{heap}");
        assert_eq!(
            template::BUILDS.with(|b| b.get()),
            1,
            "the template was never discarded"
        );
    });
}

#[test]
fn a_run_leaves_no_garbage_behind_through_its_global_object() {
    on_fresh_thread(|| {
        assert!(run("return 0").ok);
        let start = template::heap_left_behind().expect("a template");
        for _ in 0..50 {
            assert!(run("globalThis.me = globalThis; self.again = self; return 0").ok);
            let mut script = RunRequest::new("var self2 = this; let lex = { g: globalThis }; 1");
            script.mode = super::run::Mode::Script;
            assert!(execute(&script, &CancelToken::new()).ok);
        }
        // Without emptying the global object every run's global (which refers to itself) and
        // context would wait for a collection: thousands of bytes each.
        assert_eq!(template::heap_left_behind(), Some(start));
    });
}

#[test]
fn a_derived_realm_shares_the_template_globals_shape_until_it_declares_a_global() {
    on_fresh_thread(|| {
        let (_, derived) = template::measure().expect("a template");
        // The global object's bindings are copied (16 bytes each); its shape, a hundred and
        // more properties with their hash table, is shared (patch 0026): about 2 KiB less.
        assert!(derived < 4600, "a derived realm takes {derived} bytes");
        // Measuring keeps the template, and many runs later a realm costs the same.
        assert!(template::is_built());
        for i in 0..3000 {
            assert!(run(&format!("return {i}")).ok);
        }
        assert_eq!(template::measure().map(|m| m.1), Some(derived));
        // Declaring globals gives the run a shape of its own; the template's stays as it was.
        let mut declare = RunRequest::new("var declared = 1; globalThis.added = 2; 1");
        declare.mode = super::run::Mode::Script;
        let declared = execute(&declare, &CancelToken::new());
        assert!(declared.ok, "{:?}", declared.error);
        assert_eq!(
            text(&run(
                "return [typeof declared, typeof added, typeof setTimeout].join()"
            )),
            "undefined,undefined,function"
        );
    });
}

/// Everything a deterministic run's clock and randomness give without waiting, as one string.
const DETERMINISTIC_SAMPLE: &str = "JSON.stringify([Date.now(), new Date().toISOString(), \
     performance.now(), performance.timeOrigin, Math.random(), Math.random(), \
     crypto.randomUUID(), Array.from(crypto.getRandomValues(new Uint8Array(24))), Math.random()])";

fn deterministic_run(source: &str, seed: u64) -> RunOutcome {
    let mut req = RunRequest::new(source);
    req.mode = super::run::Mode::Script;
    req.deterministic = Some(super::run::Deterministic {
        seed,
        now_ms: 1.7e12,
    });
    execute(&req, &CancelToken::new())
}

/// The sample in a realm built from scratch for a deterministic run (what every deterministic
/// run got before they were derived from the template).
fn sample_in_a_built_realm(seed: u64) -> String {
    use super::realm::{Realm, RealmSpec};
    let mut spec = RealmSpec::standard();
    spec.deterministic = Some(super::run::Deterministic {
        seed,
        now_ms: 1.7e12,
    });
    let realm = Realm::build(spec).expect("a realm");
    realm
        .context
        .with(|ctx| ctx.eval::<String, _>(DETERMINISTIC_SAMPLE))
        .expect("the sample")
}

#[test]
fn deterministic_runs_derive_from_the_template_and_give_what_a_built_realm_gives() {
    on_fresh_thread(|| {
        let first = deterministic_run(DETERMINISTIC_SAMPLE, 5);
        // A derived context's run counts only its own heap; a built realm's, its intrinsics.
        assert!(
            first.stats.heap_bytes < 64 << 10,
            "{}",
            first.stats.heap_bytes
        );
        let derived = text(&first);
        assert!(template::is_built());
        assert_eq!(derived, sample_in_a_built_realm(5));
        assert!(derived.starts_with("[1700000000000,\"2023-11-14T22:13:20.000Z\",0,1700000000000,"));
        // Again, and with another seed: the same values for the same seed, others for another.
        assert_eq!(text(&deterministic_run(DETERMINISTIC_SAMPLE, 5)), derived);
        let other = text(&deterministic_run(DETERMINISTIC_SAMPLE, 6));
        assert_ne!(other, derived);
        assert_eq!(other, sample_in_a_built_realm(6));
        assert_eq!(
            template::BUILDS.with(|b| b.get()),
            1,
            "every run derived from one template"
        );
    });
}

#[test]
fn a_deterministic_run_leaves_nothing_to_a_normal_one_and_the_reverse() {
    on_fresh_thread(|| {
        let normal = "const u = [crypto.randomUUID(), crypto.randomUUID()]; \
             JSON.stringify([Date.now(), performance.timeOrigin, Math.random(), u[0], u[1]])";
        let plain = |source: &str| {
            let mut req = RunRequest::new(source);
            req.mode = super::run::Mode::Script;
            let parsed: (f64, f64, f64, String, String) =
                serde_json::from_str(&text(&execute(&req, &CancelToken::new()))).expect("json");
            parsed
        };
        let first = text(&deterministic_run(DETERMINISTIC_SAMPLE, 9));
        // A normal run after it: the real clock, and randomness of its own, not the seed's.
        let after = plain(normal);
        let real_now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("a clock")
            .as_millis() as f64;
        assert!((after.0 - real_now).abs() < 60_000.0, "{after:?}");
        assert_ne!(
            after.1, 1.7e12,
            "the time origin is the virtual clock's: {after:?}"
        );
        assert!(!first.contains(&after.2.to_string()), "{after:?} {first}");
        assert!(!first.contains(&after.3), "{after:?} {first}");
        assert_ne!(after.3, after.4);
        let again = plain(normal);
        assert_ne!(again.2, after.2);
        assert_ne!(again.3, after.3);
        // A deterministic run after normal ones (which drew from the system): the same values
        // as the first, its timers on the virtual clock.
        assert_eq!(text(&deterministic_run(DETERMINISTIC_SAMPLE, 9)), first);
        let timed = deterministic_run(
            "(async () => { await new Promise((r) => setTimeout(r, 5000)); \
              return [Date.now(), performance.now()].join() })()",
            9,
        );
        assert_eq!(text(&timed), "1700000005000,5000");
        let after_timers = plain(normal);
        assert!((after_timers.0 - real_now).abs() < 60_000.0);
        assert_eq!(template::BUILDS.with(|b| b.get()), 1);
    });
}

/// Adds a `tool` global with a method and a nested object, from the guest's side of the realm.
struct ToolExtension;

impl super::run::RealmExtension for ToolExtension {
    fn install(&self, ctx: &rquickjs::Ctx<'_>) -> rquickjs::Result<()> {
        let tool: rquickjs::Object = ctx.eval(
            "(() => { class Tool { twice(n) { return 2 * n } } \
               const t = new Tool(); t.settings = { level: 1, list: [1, 2] }; return t })()",
        )?;
        ctx.globals().set("tool", tool)
    }

    fn derivable(&self) -> bool {
        true
    }
}

#[test]
fn a_derivable_extension_is_installed_on_a_derived_context_and_frozen() {
    on_fresh_thread(|| {
        assert!(run("return 1").ok);
        let mut req = RunRequest::new(
            "const tries = [() => { tool.x = 1 }, () => { tool.settings.level = 2 }, \
               () => { tool.settings.list.push(3) }, () => { Object.getPrototypeOf(tool).twice = null }, \
               () => { tool = 1 }, () => { Object.getPrototypeOf(tool).constructor.prototype.y = 1 }]; \
             const refused = tries.map((f) => { try { f(); return false } catch (e) { return e instanceof TypeError } }); \
             return [tool.twice(21), tool.settings.level, tool.settings.list.length, refused.join(), \
               Object.isFrozen(Object.getPrototypeOf(tool)), typeof setTimeout].join('|')",
        );
        req.deterministic = Some(super::run::Deterministic {
            seed: 1,
            now_ms: 0.0,
        });
        req.extension = Some(super::run::Extension(std::sync::Arc::new(ToolExtension)));
        for _ in 0..3 {
            let outcome = execute(&req, &CancelToken::new());
            assert_eq!(
                text(&outcome),
                "42|1|2|true,true,true,true,true,true|true|function"
            );
            // A derived context's run counts only its own heap; a built realm's, its intrinsics.
            assert!(
                outcome.stats.heap_bytes < 256 << 10,
                "{}",
                outcome.stats.heap_bytes
            );
        }
        assert_eq!(
            template::BUILDS.with(|b| b.get()),
            1,
            "the runs derived from the template"
        );
        // Nothing of it reaches the next run, nor is the template any less frozen.
        assert_eq!(text(&run("return typeof tool")), "undefined");
        let realm = template::derive().expect("a derived realm");
        let unfrozen = realm.context.with(|ctx| unfrozen_reachable(&ctx)).unwrap();
        assert_eq!(unfrozen, 0);
        template::retire(realm, true);
    });
}
