//! The audit log: one entry per operation a turn attempted, refused ones included, each
//! carrying the SHA-256 hash of the one before, so an edited, reordered or cut log is detected.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::error::{SessionCode, SessionError};

/// Largest `args` or `result` text kept in an entry, in bytes; longer ones are cut with a
/// marker saying how much was left out.
pub const ARG_LIMIT: usize = 4096;

/// What the caller reports about one operation.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditRecord {
    /// Milliseconds since the Unix epoch when the operation started.
    pub timestamp: f64,
    /// The turn it belongs to.
    pub turn_number: u32,
    /// The operation's name (`world.write`, `llm.complete`).
    pub operation: String,
    /// Its arguments, as JSON text.
    pub args: String,
    /// Its result, as JSON text, when it succeeded.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub result: Option<String>,
    /// Why it failed or was refused.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub error: Option<String>,
    /// How long it took.
    pub duration_ms: f64,
    /// Tokens it reported.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub tokens_used: Option<f64>,
}

/// A record in the log, with its place in the chain.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditEntry {
    /// Position in the log, from 1.
    pub seq: u64,
    /// What happened.
    #[serde(flatten)]
    pub record: AuditRecord,
    /// The hash of the entry before (64 zeros for the first).
    pub prev_hash: String,
    /// SHA-256 of `prev_hash`, the position and the record.
    pub hash: String,
}

/// Totals over a log, with seed 002's names.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AuditStats {
    /// Entries.
    pub total_operations: u64,
    /// Entries per operation name.
    pub operation_counts: BTreeMap<String, u64>,
    /// Tokens reported.
    pub total_tokens: f64,
}

/// An append-only, hash-chained list of [`AuditEntry`].
#[derive(Debug, Clone, Default)]
pub struct AuditLog {
    entries: Vec<AuditEntry>,
}

const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

fn cut(text: String) -> String {
    if text.len() <= ARG_LIMIT {
        return text;
    }
    let mut end = ARG_LIMIT;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…[cut: {} more bytes]", &text[..end], text.len() - end)
}

fn hash_of(prev: &str, seq: u64, record: &AuditRecord) -> String {
    let body = serde_json::to_string(record).unwrap_or_default();
    let mut h = Sha256::new();
    h.update(prev.as_bytes());
    h.update(b"\n");
    h.update(seq.to_string().as_bytes());
    h.update(b"\n");
    h.update(body.as_bytes());
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let digest = h.finalize();
    let mut out = String::with_capacity(digest.len() * 2);
    for b in digest {
        out.push(HEX[usize::from(b >> 4)] as char);
        out.push(HEX[usize::from(b & 15)] as char);
    }
    out
}

fn tampered(message: String) -> SessionError {
    SessionError::new(SessionCode::AuditTampered, message)
}

/// Checks that `entries` form an unbroken chain from the start.
fn check_chain(entries: &[AuditEntry]) -> Result<(), SessionError> {
    let mut prev = GENESIS.to_string();
    for (i, e) in entries.iter().enumerate() {
        let seq = i as u64 + 1;
        if e.seq != seq {
            return Err(tampered(format!("audit entry {seq} is numbered {}", e.seq)));
        }
        if e.prev_hash != prev {
            return Err(tampered(format!(
                "audit entry {seq} does not follow entry {}",
                seq - 1
            )));
        }
        if hash_of(&prev, seq, &e.record) != e.hash {
            return Err(tampered(format!(
                "audit entry {seq} was changed after it was written"
            )));
        }
        prev = e.hash.clone();
    }
    Ok(())
}

impl AuditLog {
    /// A log rebuilt from saved entries whose last hash must be `head` (empty for an empty
    /// log): a changed, reordered, added or removed entry is refused with `AUDIT_TAMPERED`.
    pub fn from_entries(entries: Vec<AuditEntry>, head: &str) -> Result<Self, SessionError> {
        check_chain(&entries)?;
        let last = entries.last().map_or("", |e| e.hash.as_str());
        if last != head {
            return Err(tampered(format!(
                "the audit log ends at entry {} but the session recorded a different last entry",
                entries.len()
            )));
        }
        Ok(AuditLog { entries })
    }

    /// Appends a record (its `args` and `result` cut to [`ARG_LIMIT`]) and returns the entry.
    pub fn append(&mut self, mut record: AuditRecord) -> &AuditEntry {
        record.args = cut(record.args);
        record.result = record.result.map(cut);
        record.error = record.error.map(cut);
        let seq = self.entries.len() as u64 + 1;
        let prev_hash = self.head_or_genesis().to_string();
        let hash = hash_of(&prev_hash, seq, &record);
        self.entries.push(AuditEntry {
            seq,
            record,
            prev_hash,
            hash,
        });
        let last = self.entries.len() - 1;
        &self.entries[last]
    }

    fn head_or_genesis(&self) -> &str {
        self.entries.last().map_or(GENESIS, |e| e.hash.as_str())
    }

    /// The hash of the last entry (empty for an empty log).
    pub fn head(&self) -> &str {
        self.entries.last().map_or("", |e| e.hash.as_str())
    }

    /// Every entry, oldest first.
    pub fn entries(&self) -> &[AuditEntry] {
        &self.entries
    }

    /// Drops the entries after the first `len` (a turn whose result could not be stored).
    pub fn truncate(&mut self, len: usize) {
        self.entries.truncate(len);
    }

    /// The entries of one turn.
    pub fn for_turn(&self, turn: u32) -> Vec<&AuditEntry> {
        self.entries
            .iter()
            .filter(|e| e.record.turn_number == turn)
            .collect()
    }

    /// The entries of one operation.
    pub fn for_operation(&self, op: &str) -> Vec<&AuditEntry> {
        self.entries
            .iter()
            .filter(|e| e.record.operation == op)
            .collect()
    }

    /// Totals.
    pub fn stats(&self) -> AuditStats {
        let mut stats = AuditStats::default();
        for e in &self.entries {
            stats.total_operations += 1;
            *stats
                .operation_counts
                .entry(e.record.operation.clone())
                .or_default() += 1;
            stats.total_tokens += e.record.tokens_used.unwrap_or(0.0);
        }
        stats
    }

    /// The log as JSON lines, one entry per line, oldest first.
    pub fn export(&self) -> String {
        let mut out = String::new();
        for e in &self.entries {
            out.push_str(&serde_json::to_string(e).unwrap_or_default());
            out.push('\n');
        }
        out
    }

    /// Checks this log's chain.
    pub fn verify(&self) -> Result<(), SessionError> {
        check_chain(&self.entries)
    }

    /// Checks an [`AuditLog::export`]'s chain and returns its entry count. An export alone
    /// cannot show that entries were cut from its end; compare its last hash with a head kept
    /// elsewhere (the session's own log does).
    pub fn verify_export(text: &str) -> Result<usize, SessionError> {
        let mut entries = Vec::new();
        for (i, line) in text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
        {
            let entry: AuditEntry = serde_json::from_str(line)
                .map_err(|e| tampered(format!("line {} is not an audit entry: {e}", i + 1)))?;
            entries.push(entry);
        }
        check_chain(&entries)?;
        Ok(entries.len())
    }
}
