use std::sync::{Arc, Mutex};

use crate::engine::marshal::Text;
use crate::engine::{execute, CancelToken, Data, RunOutcome, RunRequest};
use crate::exec::{lock_workspace, SharedWorkspace};
use crate::session::{
    fingerprint, lock_session, Budget, BudgetKind, Ledger, OperationPolicy, SessionState,
    SharedSession, Stop, TurnGate, TurnWorld,
};
use crate::workspace::{PathRulesSpec, Workspace};

const NOW: f64 = 1_700_000_000_000.0;

struct Turn {
    session: SharedSession,
    work: SharedWorkspace,
    origin: SharedWorkspace,
}

fn session(allowed: &[&str], budget: &[(BudgetKind, f64)]) -> SharedSession {
    let allowed: Vec<String> = allowed.iter().map(|s| s.to_string()).collect();
    let policy = OperationPolicy::new(Some(&allowed), &[]).unwrap();
    let mut ledger = Ledger::new(policy, Budget::new(budget).unwrap());
    let turn = TurnGate::begin(&mut ledger, 1, 100, Vec::new());
    Arc::new(Mutex::new(SessionState {
        ledger,
        turn: Some(turn),
    }))
}

fn world(files: &[(&str, &str)]) -> Workspace {
    let mut ws = Workspace::new();
    for (p, text) in files {
        ws.write_file(p, text.as_bytes(), true).unwrap();
    }
    ws
}

fn turn(session: SharedSession, base: &Workspace, write_patterns: Option<&[&str]>) -> Turn {
    let mut work = base.fork();
    if let Some(w) = write_patterns {
        work.narrow_path_rules(&PathRulesSpec {
            read_patterns: None,
            write_patterns: Some(w.iter().map(|s| s.to_string()).collect()),
            read_only: false,
        })
        .unwrap();
    }
    Turn {
        session,
        work: Arc::new(Mutex::new(work)),
        origin: Arc::new(Mutex::new(base.fork())),
    }
}

fn run(t: &Turn, source: &str) -> RunOutcome {
    let world = TurnWorld::new(t.session.clone(), t.work.clone(), t.origin.clone(), NOW);
    let mut req = RunRequest::new(source);
    req.extension = Some(world.extension());
    execute(&req, &CancelToken::new())
}

fn text(o: &RunOutcome) -> String {
    match &o.value {
        Some(Data::String(Text::Utf8(s))) => s.clone(),
        Some(Data::String(t)) => t.to_lossy(),
        other => panic!("expected a string, got {other:?} ({o:?})"),
    }
}

fn stop(s: &SharedSession) -> Option<Stop> {
    lock_session(s)
        .turn
        .as_ref()
        .and_then(|t| t.stop().cloned())
}

fn audited(s: &SharedSession) -> Vec<(String, String, Option<String>)> {
    lock_session(s)
        .ledger
        .audit
        .entries()
        .iter()
        .map(|e| {
            (
                e.record.operation.clone(),
                e.record.args.clone(),
                e.record.error.clone(),
            )
        })
        .collect()
}

#[test]
fn reads_writes_lists_searches_and_fingerprints_the_working_copy() {
    let base = world(&[
        ("src/a.js", "export const a = 1;\n"),
        ("README.md", "# demo\n"),
    ]);
    let t = turn(session(&["world.*"], &[]), &base, None);
    let o = run(
        &t,
        r#"const text = world.read('src/a.js');
        const bytes = world.read('README.md', { encoding: null });
        const wrote = world.write('out/b.txt', 'héllo');
        world.write('out/bin', new Uint8Array([0, 1, 2]));
        world.mkdir('made/deep');
        world.delete('README.md');
        const hits = world.search('const', { context: 1 });
        return JSON.stringify({ text, bytes: [bytes instanceof Uint8Array, bytes.length], wrote,
          all: world.list(), js: world.list('**/*.js'), hits, fp: world.fingerprint('src/**'),
          frozen: Object.isFrozen(world) && Object.isFrozen(world.read), bin: Array.from(world.read('out/bin', { encoding: null })) });"#,
    );
    assert!(o.ok, "{o:?}");
    let v: serde_json::Value = serde_json::from_str(&text(&o)).unwrap();
    assert_eq!(v["text"], "export const a = 1;\n");
    assert_eq!(v["bytes"], serde_json::json!([true, 7]));
    assert_eq!(v["wrote"], 6);
    assert_eq!(
        v["all"],
        serde_json::json!(["out/b.txt", "out/bin", "src/a.js"])
    );
    assert_eq!(v["js"], serde_json::json!(["src/a.js"]));
    assert_eq!(v["hits"]["matches"][0]["path"], "src/a.js");
    assert_eq!(v["hits"]["matches"][0]["line"], 1);
    // out/bin is binary and README.md deleted: two text files.
    assert_eq!(v["hits"]["filesSearched"], 2);
    assert_eq!(v["frozen"], true);
    assert_eq!(v["bin"], serde_json::json!([0, 1, 2]));
    let work = lock_workspace(&t.work);
    assert_eq!(v["fp"], fingerprint(&work, "src/**").unwrap());
    assert_eq!(work.read_file("out/b.txt").unwrap(), "héllo".as_bytes());
    assert!(work.stat("made/deep").is_ok());
    assert!(work.stat("README.md").is_err());
    drop(work);
    // The world itself is untouched: the calls went to the working copy.
    assert!(lock_workspace(&t.origin).stat("README.md").is_ok());
    let log = audited(&t.session);
    let ops: Vec<&str> = log.iter().map(|(op, _, _)| op.as_str()).collect();
    assert_eq!(
        ops,
        [
            "world.read",
            "world.read",
            "world.write",
            "world.write",
            "world.mkdir",
            "world.delete",
            "world.search",
            "world.list",
            "world.list",
            "world.fingerprint",
            "world.read"
        ]
    );
    assert_eq!(log[1].1, r#"["README.md",{"encoding":null}]"#);
    assert_eq!(log[3].1, r#"["out/bin","<3 bytes>"]"#);
    assert_eq!(log[7].1, r#"["**/*"]"#);
    let used = lock_session(&t.session)
        .ledger
        .budget
        .used(BudgetKind::BytesWritten);
    assert_eq!(used, 9.0);
}

#[test]
fn wrong_arguments_are_catchable_errors_with_todays_messages() {
    let base = world(&[("a.txt", "a")]);
    let t = turn(session(&["world.*"], &[]), &base, None);
    let o = run(
        &t,
        r#"const seen = [];
        const attempt = (f) => { try { f(); seen.push('no error') } catch (e) { seen.push(e.name + ': ' + e.message) } };
        attempt(() => world.read(1));
        attempt(() => world.write('x', 5));
        attempt(() => world.write('x', { toString() { return 'y' } }));
        attempt(() => world.list(3));
        attempt(() => world.read('missing.txt'));
        attempt(() => world.search('a', { nope: 1 }));
        attempt(() => world.delete('a.txt', { recursive: 'yes' }));
        return JSON.stringify(seen);"#,
    );
    assert!(o.ok, "{o:?}");
    let seen: Vec<String> = serde_json::from_str(&text(&o)).unwrap();
    assert_eq!(seen[0], "TypeError: the path must be a string");
    assert_eq!(
        seen[1],
        "TypeError: world.write(path, data): data must be a string or a Uint8Array"
    );
    assert_eq!(
        seen[2],
        "TypeError: world.write: the arguments must be data (no functions)"
    );
    assert_eq!(
        seen[3],
        "WorldError: INVALID_INPUT: pattern must be a string, got a number"
    );
    assert!(seen[4].starts_with("WorldError: NOT_FOUND: "), "{seen:?}");
    assert_eq!(
        seen[5],
        "WorldError: INVALID_INPUT: unknown options key 'nope'; expected one of: path, context, maxResults, maxBytes"
    );
    assert_eq!(
        seen[6],
        "WorldError: INVALID_INPUT: options.recursive must be a boolean, got a string"
    );
    assert_eq!(stop(&t.session), None);
    // The call holding a function never ran and is not audited; the others are, with their error.
    let log = audited(&t.session);
    assert_eq!(log.len(), 6);
    assert_eq!(log[0].2.as_deref(), Some("the path must be a string"));
    assert!(lock_workspace(&t.work).stat("x").is_err());
}

#[test]
fn stat_reports_the_turns_time_for_what_the_turn_changed() {
    let base = world(&[("kept.txt", "k"), ("changed.txt", "c")]);
    let kept_mtime = base.stat("kept.txt").unwrap().mtime;
    let t = turn(session(&["world.*"], &[]), &base, None);
    let o = run(
        &t,
        "world.write('changed.txt', 'C'); world.write('new.txt', 'n'); return JSON.stringify([world.stat('kept.txt'), world.stat('changed.txt'), world.stat('new.txt'), world.stat('')]);",
    );
    assert!(o.ok, "{o:?}");
    let v: serde_json::Value = serde_json::from_str(&text(&o)).unwrap();
    assert_eq!(
        v[0],
        serde_json::json!({ "size": 1, "kind": "file", "mtime": kept_mtime })
    );
    assert_eq!(
        v[1],
        serde_json::json!({ "size": 1, "kind": "file", "mtime": NOW as u64 })
    );
    assert_eq!(v[2]["mtime"], NOW as u64);
    assert_eq!(v[3]["kind"], "dir");
}

#[test]
fn a_path_rule_refusal_stops_the_run_even_when_caught() {
    let base = world(&[("src/a.txt", "a"), ("etc/conf", "c")]);
    let t = turn(session(&["world.*"], &[]), &base, Some(&["src/**"]));
    let o = run(
        &t,
        "world.write('src/first', '1'); try { world.write('etc/conf', 'x') } catch {} finally { world.write('src/finally', 'f') } world.write('src/after', '2'); return 'continued';",
    );
    assert!(!o.ok, "{o:?}");
    match stop(&t.session) {
        Some(Stop::Policy { rule, message }) => {
            assert_eq!(rule, "worldRules");
            assert!(message.starts_with("world.write: "), "{message}");
        }
        other => panic!("expected a policy stop, got {other:?}"),
    }
    let work = lock_workspace(&t.work);
    assert!(work.stat("src/first").is_ok());
    assert_eq!(work.read_file("etc/conf").unwrap(), b"c");
    assert!(work.stat("src/finally").is_err() && work.stat("src/after").is_err());
}

#[test]
fn an_operation_the_policy_denies_stops_the_run_and_is_audited() {
    let base = world(&[("a.txt", "a")]);
    let t = turn(session(&["world.read"], &[]), &base, None);
    let o = run(
        &t,
        "try { world.write('a.txt', 'b') } catch {} return world.read('a.txt');",
    );
    assert!(!o.ok, "{o:?}");
    assert!(matches!(stop(&t.session), Some(Stop::Policy { .. })));
    assert_eq!(lock_workspace(&t.work).read_file("a.txt").unwrap(), b"a");
    let log = audited(&t.session);
    assert_eq!(log.len(), 1);
    assert_eq!(log[0].0, "world.write");
    assert!(log[0].2.is_some());
}

#[test]
fn bytes_written_are_charged_before_the_write() {
    let base = world(&[]);
    let s = session(&["world.*"], &[(BudgetKind::BytesWritten, 5.0)]);
    let t = turn(s, &base, None);
    let o = run(
        &t,
        "world.write('a', '12345'); world.write('b', '123456'); return 'no';",
    );
    assert!(!o.ok);
    match stop(&t.session) {
        Some(Stop::Budget { kind, .. }) => assert_eq!(kind, BudgetKind::BytesWritten),
        other => panic!("expected a budget stop, got {other:?}"),
    }
    let work = lock_workspace(&t.work);
    assert_eq!(work.read_file("a").unwrap(), b"12345");
    assert!(work.stat("b").is_err(), "the refused write must not land");
}

#[test]
fn a_rerun_replays_without_charging_again_and_a_different_one_diverges() {
    let base = world(&[("a.txt", "a")]);
    let s = session(&["world.*"], &[(BudgetKind::HostCalls, 10.0)]);
    let code = "world.write('b.txt', 'b'); return JSON.stringify([world.read('a.txt'), world.stat('b.txt').mtime]);";
    let first = run(&turn(s.clone(), &base, None), code);
    assert!(first.ok, "{first:?}");
    let reopen = |s: &SharedSession| {
        let mut state = lock_session(s);
        let SessionState { ledger, turn } = &mut *state;
        if let Some(mut t) = turn.take() {
            t.close(ledger);
        }
        *turn = Some(TurnGate::begin(ledger, 1, 100, Vec::new()));
    };
    reopen(&s);
    let again = run(&turn(s.clone(), &base, None), code);
    assert_eq!(text(&again), text(&first));
    let state = lock_session(&s);
    // Three calls, charged and audited once although the turn ran twice.
    assert_eq!(state.ledger.budget.used(BudgetKind::HostCalls), 3.0);
    assert_eq!(state.ledger.audit.entries().len(), 3);
    drop(state);
    reopen(&s);
    let other = run(
        &turn(s.clone(), &base, None),
        "world.write('b.txt', 'changed'); return 'x';",
    );
    assert!(!other.ok);
    match stop(&s) {
        Some(Stop::Diverged { message }) => {
            assert!(
                message.contains("world.write with other arguments"),
                "{message}"
            )
        }
        other => panic!("expected divergence, got {other:?}"),
    }
}

#[test]
fn a_halted_world_refuses_every_call() {
    let base = world(&[("a.txt", "a")]);
    let t = turn(session(&["world.*"], &[]), &base, None);
    let w = TurnWorld::new(t.session.clone(), t.work.clone(), t.origin.clone(), NOW);
    w.halt();
    let mut req = RunRequest::new("try { world.read('a.txt') } catch {} return 'continued';");
    req.extension = Some(w.extension());
    let o = execute(&req, &CancelToken::new());
    assert!(!o.ok);
    assert!(audited(&t.session).is_empty());
}
