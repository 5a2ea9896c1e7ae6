//! Run limits, their defaults and validation, and the shared deadline/cancel state.

use super::macros::listed_enum;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const DEFAULT_TIMEOUT_MS: u64 = 5_000;
pub const DEFAULT_MEMORY_BYTES: usize = 64 << 20;
/// Room for ordinary recursive code (about 12,000 frames of a small function); clamped to what
/// the executing thread has (see `Realm::enter`).
const DEFAULT_STACK_BYTES: usize = 8 << 20;
const DEFAULT_OUTPUT_BYTES: usize = 64 << 10;

const MAX_TIMEOUT_MS: u64 = 24 * 60 * 60 * 1000;
const MIN_MEMORY_BYTES: usize = 1 << 20;
const MAX_MEMORY_BYTES: usize = 4 << 30;
const MIN_STACK_BYTES: usize = 64 << 10;
/// Worker threads are spawned with this much stack beyond the guest's allowance.
pub(crate) const STACK_HEADROOM: usize = 2 << 20;
pub(crate) const MAX_STACK_BYTES: usize = 64 << 20;
const MAX_OUTPUT_BYTES: usize = 256 << 20;
pub(crate) const MAX_SOURCE_BYTES: usize = 1 << 20;
const DEFAULT_HOST_CALLS: u64 = 1_000_000;
const MAX_HOST_CALLS: u64 = 1_000_000_000;
/// 2^53: every budget a caller can write as a JavaScript number exactly.
const MAX_STEPS: u64 = 1 << 53;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub timeout_ms: u64,
    pub memory_bytes: usize,
    pub stack_bytes: usize,
    pub output_bytes: usize,
    /// Crossings into the host a run with live values may make.
    pub host_calls: u64,
    /// Interpreter steps (loop iterations and calls) the guest may take; `None`: no budget.
    pub steps: Option<u64>,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            timeout_ms: DEFAULT_TIMEOUT_MS,
            memory_bytes: DEFAULT_MEMORY_BYTES,
            stack_bytes: DEFAULT_STACK_BYTES,
            output_bytes: DEFAULT_OUTPUT_BYTES,
            host_calls: DEFAULT_HOST_CALLS,
            steps: None,
        }
    }
}

/// Optional overrides as supplied by a caller, before validation.
#[derive(Debug, Clone, Copy, Default)]
pub struct LimitOverrides {
    pub timeout_ms: Option<f64>,
    pub memory_bytes: Option<f64>,
    pub stack_bytes: Option<f64>,
    pub output_bytes: Option<f64>,
    pub host_calls: Option<f64>,
    pub steps: Option<f64>,
}

fn checked(name: &str, value: f64, min: f64, max: f64) -> Result<f64, String> {
    if !value.is_finite() || value.fract() != 0.0 {
        return Err(format!("limits.{name} must be a whole number, got {value}"));
    }
    if value < min || value > max {
        return Err(format!(
            "limits.{name} must be between {min} and {max}, got {value}"
        ));
    }
    Ok(value)
}

impl LimitOverrides {
    pub fn resolve(&self) -> Result<Limits, String> {
        let d = Limits::default();
        Ok(Limits {
            timeout_ms: match self.timeout_ms {
                Some(v) => checked("timeoutMs", v, 1.0, MAX_TIMEOUT_MS as f64)? as u64,
                None => d.timeout_ms,
            },
            memory_bytes: match self.memory_bytes {
                Some(v) => checked(
                    "memoryBytes",
                    v,
                    MIN_MEMORY_BYTES as f64,
                    MAX_MEMORY_BYTES as f64,
                )? as usize,
                None => d.memory_bytes,
            },
            stack_bytes: match self.stack_bytes {
                Some(v) => checked(
                    "stackBytes",
                    v,
                    MIN_STACK_BYTES as f64,
                    MAX_STACK_BYTES as f64,
                )? as usize,
                None => d.stack_bytes,
            },
            output_bytes: match self.output_bytes {
                Some(v) => checked("outputBytes", v, 0.0, MAX_OUTPUT_BYTES as f64)? as usize,
                None => d.output_bytes,
            },
            host_calls: match self.host_calls {
                Some(v) => checked("hostCalls", v, 1.0, MAX_HOST_CALLS as f64)? as u64,
                None => d.host_calls,
            },
            steps: match self.steps {
                Some(v) => Some(checked("steps", v, 1.0, MAX_STEPS as f64)? as u64),
                None => d.steps,
            },
        })
    }
}

listed_enum! {
    /// Why the interrupt handler stopped the guest.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    #[repr(u8)]
    pub enum StopReason {
        None = 0,
        Timeout = 1,
        Cancelled = 2,
        Output = 3,
        HostCalls = 4,
    }
}

/// Cancellation flag shared with the caller (AbortSignal) and the run.
#[derive(Debug, Default, Clone)]
pub struct CancelToken(Arc<AtomicBool>);

impl CancelToken {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst);
    }
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// Deadline, cancellation and the recorded stop reason for one run.
#[derive(Debug)]
pub struct Watchdog {
    pub deadline: Instant,
    pub started: Instant,
    pub cancel: CancelToken,
    reason: AtomicU8,
}

impl Watchdog {
    pub fn new(timeout: Duration, cancel: CancelToken) -> Arc<Self> {
        let now = Instant::now();
        Arc::new(Watchdog {
            deadline: now + timeout,
            started: now,
            cancel,
            reason: AtomicU8::new(StopReason::None as u8),
        })
    }

    /// Records a stop reason; the first one wins.
    pub fn stop(&self, reason: StopReason) {
        let _ = self.reason.compare_exchange(
            StopReason::None as u8,
            reason as u8,
            Ordering::SeqCst,
            Ordering::SeqCst,
        );
    }

    pub fn reason(&self) -> StopReason {
        StopReason::from_discriminant(self.reason.load(Ordering::SeqCst).into())
            .unwrap_or(StopReason::None)
    }

    /// Checks the clock and the cancel flag; true means the guest must stop now.
    pub fn should_stop(&self) -> bool {
        if self.reason() != StopReason::None {
            return true;
        }
        if self.cancel.is_cancelled() {
            self.stop(StopReason::Cancelled);
            return true;
        }
        if Instant::now() >= self.deadline {
            self.stop(StopReason::Timeout);
            return true;
        }
        false
    }

    pub fn elapsed_ms(&self) -> f64 {
        self.started.elapsed().as_secs_f64() * 1000.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_apply_when_nothing_is_given() {
        assert_eq!(
            LimitOverrides::default().resolve().unwrap(),
            Limits::default()
        );
    }

    #[test]
    fn rejects_negative_fractional_and_absurd_values() {
        let neg = LimitOverrides {
            timeout_ms: Some(-1.0),
            ..Default::default()
        };
        assert!(neg.resolve().unwrap_err().contains("timeoutMs"));
        let frac = LimitOverrides {
            memory_bytes: Some(1.5e6 + 0.5),
            ..Default::default()
        };
        assert!(frac.resolve().unwrap_err().contains("whole number"));
        let huge = LimitOverrides {
            stack_bytes: Some(1e12),
            ..Default::default()
        };
        assert!(huge.resolve().unwrap_err().contains("stackBytes"));
        let nan = LimitOverrides {
            output_bytes: Some(f64::NAN),
            ..Default::default()
        };
        assert!(nan.resolve().is_err());
    }

    #[test]
    fn first_stop_reason_wins() {
        let w = Watchdog::new(Duration::from_secs(10), CancelToken::new());
        assert!(!w.should_stop());
        w.stop(StopReason::Output);
        w.stop(StopReason::Timeout);
        assert_eq!(w.reason(), StopReason::Output);
        assert!(w.should_stop());
    }

    #[test]
    fn every_stop_reason_is_read_back() {
        for reason in StopReason::ALL {
            let w = Watchdog::new(Duration::from_secs(10), CancelToken::new());
            w.stop(reason);
            assert_eq!(w.reason(), reason);
        }
    }

    #[test]
    fn cancel_token_stops_the_watchdog() {
        let token = CancelToken::new();
        let w = Watchdog::new(Duration::from_secs(10), token.clone());
        token.cancel();
        assert!(w.should_stop());
        assert_eq!(w.reason(), StopReason::Cancelled);
    }
}
