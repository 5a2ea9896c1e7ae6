//! The whole numbers the workspace API accepts, and the defaults it uses when a caller leaves
//! one out. Each limit lives here, next to the check that enforces it, so every caller (the
//! JavaScript binding, sessions) applies the same rule with the same message.

use super::error::{WsError, WsResult};

/// Largest whole number the API takes: ids, line numbers and counts stay exact as
/// JavaScript numbers.
pub const MAX_EXACT: u64 = (1 << 53) - 1;

/// An inclusive range of whole numbers an argument may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    /// Smallest value accepted.
    pub min: u64,
    /// Largest value accepted.
    pub max: u64,
}

impl Bounds {
    /// `min..=max`.
    pub const fn new(min: u64, max: u64) -> Self {
        Bounds { min, max }
    }

    /// `min..=`[`MAX_EXACT`].
    pub const fn at_least(min: u64) -> Self {
        Bounds::new(min, MAX_EXACT)
    }

    /// `n` as a whole number in range; `INVALID_INPUT` naming the argument `name` otherwise.
    pub fn check(self, name: &str, n: f64) -> WsResult<u64> {
        if !n.is_finite() || n.fract() != 0.0 {
            return Err(WsError::invalid_input(format!(
                "{name} must be a whole number, got {n}"
            )));
        }
        if n < self.min as f64 || n > self.max as f64 {
            return Err(WsError::invalid_input(format!(
                "{name} must be between {} and {}, got {n}",
                self.min, self.max
            )));
        }
        Ok(n as u64)
    }
}

/// Any id, line number or count.
pub const ANY: Bounds = Bounds::at_least(0);
/// How many entries `undo` and `redo` step over.
pub const STEPS: Bounds = Bounds::at_least(1);
/// Entries `history` lists when not told.
pub const DEFAULT_HISTORY: u64 = 20;
/// Lines of context around each search hit.
pub const SEARCH_CONTEXT: Bounds = Bounds::new(0, 100);
/// Hits one search returns.
pub const SEARCH_RESULTS: Bounds = Bounds::new(1, 10_000);
/// Hits a search returns when not told.
pub const DEFAULT_SEARCH_RESULTS: u64 = 100;
/// Bytes one search answer may hold (hits and context together, each string charged its
/// length plus a little for the JavaScript string it becomes).
pub const SEARCH_BYTES: Bounds = Bounds::new(1024, 8 << 20);
/// Bytes a search answer holds when not told: 1 MiB.
pub const DEFAULT_SEARCH_BYTES: u64 = 1 << 20;

/// `n` as a `usize`, saturating on targets where it does not fit.
pub fn to_usize(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workspace::error::WsCode;

    fn refused(b: Bounds, n: f64) -> String {
        match b.check("options.n", n) {
            Ok(v) => panic!("{n} should be refused, got {v}"),
            Err(e) => {
                assert_eq!(e.code, WsCode::InvalidInput);
                e.message
            }
        }
    }

    #[test]
    fn whole_numbers_in_range_pass() -> WsResult<()> {
        assert_eq!(SEARCH_CONTEXT.check("c", 0.0)?, 0);
        assert_eq!(SEARCH_CONTEXT.check("c", 100.0)?, 100);
        assert_eq!(ANY.check("n", MAX_EXACT as f64)?, MAX_EXACT);
        assert_eq!(STEPS.check("n", 1.0)?, 1);
        Ok(())
    }

    #[test]
    fn messages_name_the_argument_and_the_range() {
        assert_eq!(
            refused(SEARCH_CONTEXT, -1.0),
            "options.n must be between 0 and 100, got -1"
        );
        assert_eq!(
            refused(STEPS, 0.0),
            "options.n must be between 1 and 9007199254740991, got 0"
        );
        assert_eq!(
            refused(ANY, 1.5),
            "options.n must be a whole number, got 1.5"
        );
        assert_eq!(
            refused(ANY, f64::INFINITY),
            "options.n must be a whole number, got inf"
        );
        assert!(refused(ANY, f64::NAN).contains("whole number"));
        assert!(refused(ANY, 2f64.powi(60)).contains("between 0 and"));
    }
}
