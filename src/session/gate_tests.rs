use super::*;
use crate::session::{Budget, OperationPolicy};

fn ledger(allowed: Option<&[&str]>, budget: &[(BudgetKind, f64)]) -> Ledger {
    let allowed: Option<Vec<String>> = allowed.map(|a| a.iter().map(|s| s.to_string()).collect());
    let policy = OperationPolicy::new(allowed.as_deref(), &[]).unwrap();
    Ledger::new(policy, Budget::new(budget).unwrap())
}

fn op<'a>(name: &'a str, args: &'a str) -> Call<'a> {
    Call::new(CallKind::Operation, name, args)
}

fn run_id(a: Admission) -> u64 {
    match a {
        Admission::Run { call_id, .. } => call_id,
        other => panic!("expected run, got {other:?}"),
    }
}

#[test]
fn every_rule_kind_refuses_and_is_audited() {
    let mut l = ledger(Some(&["llm.*", "world.*", "fetch"]), &[]);
    l.rules = CallRules {
        allow_complete: true,
        max_tokens_per_call: Some(100.0),
        allow_exec: false,
        allow_network: false,
        network_operations: ["fetch".to_string()].into(),
    };
    let cases = [
        ("other", "[]", "allowedOperations"),
        (
            "llm.complete",
            r#"[{"max_tokens":500}]"#,
            "llmRules.maxTokensPerCall",
        ),
        ("fetch", "[]", "executionRules.allowNetworkCalls"),
    ];
    for (name, args, rule) in cases {
        let mut g = TurnGate::begin(&mut l, 1, 10, vec![]);
        match g.admit(&mut l, &op(name, args)) {
            Admission::Stop(Stop::Policy { rule: r, .. }) => assert_eq!(r, rule),
            other => panic!("{name}: {other:?}"),
        }
        // Stopped: nothing more is admitted.
        assert!(matches!(
            g.admit(&mut l, &op("llm.complete", "[]")),
            Admission::Stop(_)
        ));
    }
    let mut g = TurnGate::begin(&mut l, 1, 10, vec![]);
    let exec = Call::new(CallKind::World, "world.exec", r#"["a.js"]"#);
    assert!(matches!(
        g.admit(&mut l, &exec),
        Admission::Stop(Stop::Policy { rule, .. }) if rule == "executionRules.allowExec"
    ));
    assert_eq!(l.audit.entries().len(), 4);
    assert!(l.audit.entries()[1]
        .record
        .error
        .as_deref()
        .unwrap()
        .contains("asked for 500 tokens"));
    // Within the limit it runs.
    let mut g = TurnGate::begin(&mut l, 2, 10, vec![]);
    run_id(g.admit(&mut l, &op("llm.complete", r#"[{"maxTokens":50}]"#)));
}

#[test]
fn call_cap_and_budget_charge() {
    let mut l = ledger(
        None,
        &[
            (BudgetKind::HostCalls, 2.0),
            (BudgetKind::BytesWritten, 10.0),
        ],
    );
    let mut g = TurnGate::begin(&mut l, 1, 1, vec![]);
    run_id(g.admit(&mut l, &op("a", "[]")));
    assert!(matches!(
        g.admit(&mut l, &op("a", "[]")),
        Admission::Stop(Stop::CallLimit { .. })
    ));
    let mut g = TurnGate::begin(&mut l, 2, 10, vec![]);
    let mut write = Call::new(CallKind::World, "world.write", r#"["a","b"]"#);
    write.bytes = 11.0;
    assert!(matches!(
        g.admit(&mut l, &write),
        Admission::Stop(Stop::Budget {
            kind: BudgetKind::BytesWritten,
            ..
        })
    ));
    assert_eq!(l.budget.used(BudgetKind::HostCalls), 2.0);
    assert_eq!(g.remaining(BudgetKind::HostCalls), Some(0.0));
}

#[test]
fn a_rerun_replays_operations_reexecutes_world_calls_and_notices_divergence() {
    let mut l = ledger(None, &[(BudgetKind::HostCalls, 10.0)]);
    let mut g = TurnGate::begin(&mut l, 1, 10, vec![]);
    let read = Call::new(CallKind::World, "world.read", r#"["a"]"#);
    let id = run_id(g.admit(&mut l, &read));
    assert_eq!(
        g.settle(
            &mut l,
            id,
            Outcome {
                result: Some("\"x\"".into()),
                ..Outcome::default()
            }
        ),
        None
    );
    let id = run_id(g.admit(&mut l, &op("tickets.search", r#"["q"]"#)));
    let journal = Some(r#"{"value":[1],"usage":{"tokens":3}}"#.to_string());
    g.settle(
        &mut l,
        id,
        Outcome {
            journal,
            tokens: Some(3.0),
            ..Outcome::default()
        },
    );
    assert_eq!(l.audit.entries().len(), 2);
    // The same turn again, counted from its first start: the world call runs, uncharged; the
    // operation answers from the journal; the guest sees the same figures.
    let at_start = [None, None, Some(10.0), None, None, None];
    let mut g = TurnGate::resume(&mut l, 1, 10, vec![], at_start);
    assert!(matches!(
        g.admit(&mut l, &read),
        Admission::Run { fresh: false, .. }
    ));
    match g.admit(&mut l, &op("tickets.search", r#"["q"]"#)) {
        Admission::Replay { value, error: None } => assert!(value.unwrap().contains("[1]")),
        other => panic!("{other:?}"),
    }
    assert_eq!(l.budget.used(BudgetKind::HostCalls), 2.0);
    assert_eq!(g.remaining(BudgetKind::HostCalls), Some(8.0));
    // One rule for both kinds.
    let mut g = TurnGate::begin(&mut l, 1, 10, vec![]);
    let other = Call::new(CallKind::World, "world.read", r#"["b"]"#);
    match g.admit(&mut l, &other) {
        Admission::Stop(Stop::Diverged { message }) => {
            assert!(message.contains("with other arguments"))
        }
        o => panic!("{o:?}"),
    }
    let mut g = TurnGate::begin(&mut l, 1, 10, vec![]);
    run_id(g.admit(&mut l, &read));
    match g.admit(&mut l, &op("llm.complete", "[]")) {
        Admission::Stop(Stop::Diverged { message }) => {
            assert!(message.contains("called llm.complete where it had called tickets.search"))
        }
        o => panic!("{o:?}"),
    }
}

#[test]
fn approvals_wait_ask_and_carry_out_decided_requests() {
    let mut l = ledger(None, &[]);
    let mut g = TurnGate::begin(&mut l, 3, 10, vec![]);
    let mut call = op("deploy", "[1]");
    call.approval = Approval::Ask;
    assert_eq!(g.admit(&mut l, &call), Admission::Ask);
    call.approval = Approval::Always;
    assert_eq!(
        g.admit(&mut l, &call),
        Admission::Stop(Stop::Approval {
            request_id: "3.0".into()
        })
    );
    let decided = vec![Decided {
        id: "3.0".into(),
        operation: "deploy".into(),
        args: "[1]".into(),
    }];
    let mut g = TurnGate::begin(&mut l, 3, 10, decided.clone());
    assert!(
        matches!(g.admit(&mut l, &call), Admission::Run { request: Some(r), .. } if r == "3.0")
    );
    let mut g = TurnGate::begin(&mut l, 3, 10, decided);
    assert!(matches!(
        g.admit(&mut l, &op("deploy", "[2]")),
        Admission::Stop(Stop::Diverged { .. })
    ));
}

#[test]
fn proto_keys_are_refused_as_a_catchable_journalled_error() {
    let mut l = ledger(None, &[]);
    let mut g = TurnGate::begin(&mut l, 1, 10, vec![]);
    match g.admit(&mut l, &op("x", r#"[1,{"a":{"__proto__":{}}}]"#)) {
        Admission::Replay {
            value: None,
            error: Some(e),
        } => assert!(e.contains("args[1].a holds a __proto__ key")),
        o => panic!("{o:?}"),
    }
    assert_eq!(l.journal.entries().len(), 1);
}

#[test]
fn settle_charges_usage_and_stops_past_a_limit() {
    let mut l = ledger(None, &[(BudgetKind::Tokens, 5.0)]);
    let mut g = TurnGate::begin(&mut l, 1, 10, vec![]);
    let id = run_id(g.admit(&mut l, &op("llm.complete", "[]")));
    let stop = g.settle(
        &mut l,
        id,
        Outcome {
            journal: Some("{}".into()),
            tokens: Some(6.0),
            ..Outcome::default()
        },
    );
    assert!(matches!(
        stop,
        Some(Stop::Budget {
            kind: BudgetKind::Tokens,
            ..
        })
    ));
    assert_eq!(l.audit.entries()[0].record.tokens_used, Some(6.0));
}

#[test]
fn a_seeded_journal_answers_a_rerun_and_operations_keep_their_place() {
    let mut l = ledger(None, &[]);
    let mut g = TurnGate::begin(&mut l, 1, 10, vec![]);
    let first = g.admit(&mut l, &op("charge", "[1]"));
    let Admission::Run {
        call_id,
        seq: Some(0),
        ..
    } = first
    else {
        panic!("expected the first operation at place 0, got {first:?}");
    };
    g.settle(
        &mut l,
        call_id,
        Outcome {
            journal: Some(r#"{"value":"paid","usage":{}}"#.into()),
            ..Outcome::default()
        },
    );
    assert!(matches!(
        g.admit(&mut l, &op("ship", "[]")),
        Admission::Run { seq: Some(1), .. }
    ));
    // A crash lost the ledger; the durable copy of the journal seeds a fresh one.
    let recorded = l.journal.entries()[..1].to_vec();
    let mut fresh = ledger(None, &[]);
    let mut g = TurnGate::begin(&mut fresh, 1, 10, vec![]);
    fresh.journal.seed(recorded);
    assert!(matches!(
        g.admit(&mut fresh, &op("charge", "[1]")),
        Admission::Replay { value: Some(v), .. } if v.contains("paid")
    ));
    assert!(matches!(
        g.admit(&mut fresh, &op("ship", "[]")),
        Admission::Run { seq: Some(1), .. }
    ));
}
