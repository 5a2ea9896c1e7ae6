use super::*;

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

fn record(turn: u32, op: &str, args: &str) -> AuditRecord {
    AuditRecord {
        timestamp: 1_700_000_000_000.0,
        turn_number: turn,
        operation: op.into(),
        args: args.into(),
        result: Some("true".into()),
        error: None,
        duration_ms: 0.5,
        tokens_used: None,
    }
}

#[test]
fn deny_wins_over_allow_and_names_the_rule() {
    let p = OperationPolicy::new(
        Some(&names(&["world.*", "llm.complete"])),
        &names(&["world.exec"]),
    )
    .expect("policy");
    assert!(p.allows("world.read"));
    assert!(p.allows("llm.complete"));
    let refused = p.check("world.exec").expect_err("denied");
    assert_eq!(refused.rule, "world.exec");
    assert!(refused.message.contains("denied"), "{}", refused.message);
    let refused = p.check("shell").expect_err("not allowed");
    assert_eq!(refused.rule, "allowedOperations");
    assert!(!p.allows("llm.completeX"));
}

#[test]
fn only_star_is_a_wildcard_in_operation_rules() {
    let p = OperationPolicy::new(Some(&names(&["fact?", "a[b]", "x.*.y"])), &[]).expect("policy");
    assert!(p.allows("fact?"));
    assert!(!p.allows("facts"), "'?' is literal");
    assert!(p.allows("a[b]"));
    assert!(!p.allows("ab"));
    assert!(p.allows("x.one.y") && p.allows("x.a.b.y"));
    let open = OperationPolicy::new(None, &names(&["danger.*"])).expect("policy");
    assert!(open.allows("anything") && !open.allows("danger.zone"));
    assert!(OperationPolicy::new(Some(&names(&[""])), &[]).is_err());
}

#[test]
fn budget_take_refuses_without_spending_and_record_reports_overruns() {
    let mut b =
        Budget::new(&[(BudgetKind::HostCalls, 2.0), (BudgetKind::Tokens, 100.0)]).expect("budget");
    assert!(b.take(BudgetKind::HostCalls, 1.0).is_ok());
    assert!(b.take(BudgetKind::HostCalls, 1.0).is_ok());
    let e = b.take(BudgetKind::HostCalls, 1.0).expect_err("third call");
    assert_eq!(e.kind, BudgetKind::HostCalls);
    assert_eq!(b.used(BudgetKind::HostCalls), 2.0);
    assert_eq!(b.remaining(BudgetKind::HostCalls), Some(0.0));
    assert!(b.record(BudgetKind::Tokens, 60.0).is_ok());
    assert_eq!(
        b.record(BudgetKind::Tokens, 60.0).map_err(|e| e.kind),
        Err(BudgetKind::Tokens)
    );
    assert_eq!(b.used(BudgetKind::Tokens), 120.0);
    assert_eq!(b.remaining(BudgetKind::Tokens), Some(0.0));
    assert_eq!(b.exceeded().map(|e| e.kind), Some(BudgetKind::Tokens));
    assert_eq!(b.remaining(BudgetKind::Cost), None);
    assert!(Budget::new(&[(BudgetKind::Cost, f64::NAN)]).is_err());
    assert!(Budget::new(&[(BudgetKind::Cost, -1.0)]).is_err());
}

#[test]
fn audit_chain_detects_edits_reordering_and_a_cut_tail() {
    let mut log = AuditLog::default();
    log.append(record(1, "world.read", "[\"a\"]"));
    log.append(record(1, "llm.complete", "[\"hi\"]"));
    log.append(record(2, "world.write", "[\"b\",\"x\"]"));
    assert!(log.verify().is_ok());
    let head = log.head().to_string();
    assert!(AuditLog::from_entries(log.entries().to_vec(), &head).is_ok());

    let mut edited = log.entries().to_vec();
    edited[1].record.args = "[\"bye\"]".into();
    let e = AuditLog::from_entries(edited, &head).expect_err("edited");
    assert_eq!(e.code, SessionCode::AuditTampered);

    let mut swapped = log.entries().to_vec();
    swapped.swap(0, 1);
    assert!(AuditLog::from_entries(swapped, &head).is_err());

    let cut = log.entries()[..2].to_vec();
    assert!(check_export(&cut).is_ok(), "a cut export still chains");
    assert!(
        AuditLog::from_entries(cut, &head).is_err(),
        "but not up to the recorded head"
    );

    let text = log.export();
    assert_eq!(AuditLog::verify_export(&text), Ok(3));
    let forged = text.replace("world.write", "world.read");
    assert!(AuditLog::verify_export(&forged).is_err());
}

fn check_export(entries: &[AuditEntry]) -> Result<usize, SessionError> {
    let text: String = entries
        .iter()
        .map(|e| serde_json::to_string(e).unwrap_or_default() + "\n")
        .collect();
    AuditLog::verify_export(&text)
}

#[test]
fn audit_cuts_long_arguments_at_a_char_boundary_with_a_marker() {
    let mut log = AuditLog::default();
    let long = "é".repeat(ARG_LIMIT);
    let entry = log.append(record(1, "world.write", &long));
    assert!(entry.record.args.len() < ARG_LIMIT + 40);
    assert!(entry.record.args.contains("…[cut: "), "marker");
    assert!(log.verify().is_ok());
}

#[test]
fn audit_queries_and_stats() {
    let mut log = AuditLog::default();
    log.append(record(1, "world.read", "[]"));
    let mut r = record(2, "llm.complete", "[]");
    r.tokens_used = Some(42.0);
    log.append(r);
    log.append(record(2, "world.read", "[]"));
    assert_eq!(log.for_turn(2).len(), 2);
    assert_eq!(log.for_operation("world.read").len(), 2);
    let stats = log.stats();
    assert_eq!(stats.total_operations, 3);
    assert_eq!(stats.operation_counts.get("world.read"), Some(&2));
    assert_eq!(stats.total_tokens, 42.0);
}

#[test]
fn journal_answers_a_rerun_and_notices_divergence() {
    let mut j = Journal::default();
    assert_eq!(j.next("a", "[1]"), Replay::Live);
    j.record(JournalEntry {
        operation: "a".into(),
        args: "[1]".into(),
        value: Some("2".into()),
        error: None,
    });
    j.rewind();
    match j.next("a", "[1]") {
        Replay::Recorded(e) => assert_eq!(e.value.as_deref(), Some("2")),
        other => panic!("expected a recorded answer, got {other:?}"),
    }
    assert_eq!(j.next("b", "[]"), Replay::Live);
    j.rewind();
    assert!(matches!(j.next("a", "[9]"), Replay::Diverged { .. }));
}

#[test]
fn a_saved_ledger_restores_and_refuses_a_tampered_log() {
    let policy = OperationPolicy::new(None, &[]).expect("policy");
    let mut ledger = Ledger::new(
        policy.clone(),
        Budget::new(&[(BudgetKind::Turns, 3.0)]).expect("budget"),
    );
    assert!(ledger.budget.take(BudgetKind::Turns, 1.0).is_ok());
    ledger.audit.append(record(1, "world.read", "[]"));
    let mut odd = record(1, "llm.complete", "[]");
    odd.duration_ms = 0.1 + 0.2;
    odd.timestamp = 1_764_000_000_123.456_7;
    odd.tokens_used = Some(1.0 / 3.0);
    ledger.audit.append(odd);
    ledger.journal.record(JournalEntry {
        operation: "x".into(),
        args: "[]".into(),
        value: None,
        error: Some("no".into()),
    });
    let saved = ledger.save();
    let back = Ledger::restore(policy.clone(), &saved).expect("restore");
    assert_eq!(back.budget.used(BudgetKind::Turns), 1.0);
    assert_eq!(
        back.audit.entries().len(),
        2,
        "fractional numbers survive with their hashes"
    );
    assert_eq!(back.journal.entries().len(), 1);
    let tampered = saved.replace("world.read", "world.list");
    let e = Ledger::restore(policy, &tampered).expect_err("tampered");
    assert_eq!(e.code, SessionCode::AuditTampered);
}
