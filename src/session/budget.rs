//! A session's budget: limits on turns, wall time, operation calls, bytes written, tokens and
//! cost, and what has been used of each.

use serde::{Deserialize, Serialize};

use super::error::{SessionCode, SessionError};

/// What a budget limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BudgetKind {
    /// Turns started (a turn resumed after approval counts once).
    Turns,
    /// Milliseconds spent running turns.
    WallMs,
    /// Operation calls, `world.*` included.
    HostCalls,
    /// Bytes written to the world.
    BytesWritten,
    /// Tokens reported by operations or `consume()`.
    Tokens,
    /// Cost reported by operations or `consume()`.
    Cost,
}

impl BudgetKind {
    /// Every kind, in the order reports list them.
    pub const ALL: [BudgetKind; 6] = [
        BudgetKind::Turns,
        BudgetKind::WallMs,
        BudgetKind::HostCalls,
        BudgetKind::BytesWritten,
        BudgetKind::Tokens,
        BudgetKind::Cost,
    ];

    /// The name the JavaScript surface uses.
    pub fn as_str(self) -> &'static str {
        match self {
            BudgetKind::Turns => "turns",
            BudgetKind::WallMs => "wallMs",
            BudgetKind::HostCalls => "hostCalls",
            BudgetKind::BytesWritten => "bytesWritten",
            BudgetKind::Tokens => "tokens",
            BudgetKind::Cost => "cost",
        }
    }

    /// The kind named `name`.
    pub fn parse(name: &str) -> Option<Self> {
        BudgetKind::ALL.into_iter().find(|k| k.as_str() == name)
    }
}

/// The budget kind that ran out, with its limit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Exceeded {
    /// Which budget.
    pub kind: BudgetKind,
    /// Its limit.
    pub limit: f64,
}

impl Exceeded {
    /// As a session error.
    pub fn error(&self) -> SessionError {
        SessionError::new(
            SessionCode::BudgetExceeded,
            format!(
                "the session's {} budget ({}) is used up",
                self.kind.as_str(),
                self.limit
            ),
        )
    }
}

/// Limits (`None`: unlimited) and use, per kind, in [`BudgetKind::ALL`]'s order.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Budget {
    limits: [Option<f64>; 6],
    used: [f64; 6],
}

impl Budget {
    /// A budget with the given limits and nothing used. A limit must be a finite number ≥ 0.
    pub fn new(limits: &[(BudgetKind, f64)]) -> Result<Self, SessionError> {
        let mut budget = Budget::default();
        for &(kind, limit) in limits {
            budget.limits[kind as usize] = Some(limit);
        }
        budget.check()?;
        Ok(budget)
    }

    /// Checks that every limit and use is a finite number ≥ 0.
    pub(super) fn check(&self) -> Result<(), SessionError> {
        for kind in BudgetKind::ALL {
            let ok = |v: f64| v.is_finite() && v >= 0.0;
            if !self.limits[kind as usize].is_none_or(ok) || !ok(self.used[kind as usize]) {
                return Err(SessionError::new(
                    SessionCode::InvalidInput,
                    format!("budget.{}: expected a finite number ≥ 0", kind.as_str()),
                ));
            }
        }
        Ok(())
    }

    /// The limit of `kind`.
    pub fn limit(&self, kind: BudgetKind) -> Option<f64> {
        self.limits[kind as usize]
    }

    /// What has been used of `kind`.
    pub fn used(&self, kind: BudgetKind) -> f64 {
        self.used[kind as usize]
    }

    /// What is left of `kind` (`None`: unlimited); never negative.
    pub fn remaining(&self, kind: BudgetKind) -> Option<f64> {
        self.limit(kind).map(|l| (l - self.used(kind)).max(0.0))
    }

    /// The first kind whose use has passed its limit.
    pub fn exceeded(&self) -> Option<Exceeded> {
        BudgetKind::ALL.into_iter().find_map(|kind| {
            self.limit(kind)
                .filter(|&limit| self.used(kind) > limit)
                .map(|limit| Exceeded { kind, limit })
        })
    }

    /// Takes `amount` of `kind` if that stays within the limit; otherwise takes nothing and
    /// says which limit refused it. For what is known before it happens (a turn, a call).
    pub fn take(&mut self, kind: BudgetKind, amount: f64) -> Result<(), Exceeded> {
        let amount = if amount.is_finite() {
            amount.max(0.0)
        } else {
            0.0
        };
        if let Some(limit) = self.limit(kind) {
            if self.used(kind) + amount > limit {
                return Err(Exceeded { kind, limit });
            }
        }
        self.used[kind as usize] += amount;
        Ok(())
    }

    /// Records `amount` of `kind` already spent (wall time, tokens an operation reports), then
    /// says whether a limit is now passed.
    pub fn record(&mut self, kind: BudgetKind, amount: f64) -> Result<(), Exceeded> {
        if amount.is_finite() && amount > 0.0 {
            self.used[kind as usize] += amount;
        }
        match self.limit(kind) {
            Some(limit) if self.used(kind) > limit => Err(Exceeded { kind, limit }),
            _ => Ok(()),
        }
    }

    /// Puts back the use recorded in `earlier` (a failed `SESSION_CONFLICT` save).
    pub fn reset_use(&mut self, earlier: &Budget) {
        self.used = earlier.used;
    }
}
