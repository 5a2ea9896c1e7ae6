//! Process-wide settings of the engine: how many worker threads run `run()` calls, and how many
//! realms are kept prepared. Checked here once, whoever asks.

use super::errors::{ErrorCode, ErrorInfo};
use super::{realm_pool, workers};

/// Most realms the pool may keep prepared.
pub const MAX_POOL_SIZE: usize = 64;

/// Requested settings; absent ones stay as they are. Numbers as the caller gave them (a
/// fraction or a negative number is refused here, not truncated on the way).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SettingsRequest {
    pub workers: Option<f64>,
    pub pool_size: Option<f64>,
}

/// The settings in force.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    pub workers: usize,
    pub pool_size: usize,
}

/// A whole number in `min..=max`, or a RangeError naming the setting.
fn whole(value: f64, name: &str, min: usize, max: usize) -> Result<usize, ErrorInfo> {
    if value.fract() == 0.0 && value >= min as f64 && value <= max as f64 {
        Ok(value as usize)
    } else {
        Err(ErrorInfo::new(
            ErrorCode::InvalidInput,
            "RangeError",
            format!("{name} must be an integer between {min} and {max}"),
        ))
    }
}

/// Checks every requested setting, then applies them all (nothing is applied if one is bad).
pub fn configure(request: SettingsRequest) -> Result<Settings, ErrorInfo> {
    let workers = request
        .workers
        .map(|n| whole(n, "workers", 1, workers::MAX_WORKERS))
        .transpose()?;
    let pool_size = request
        .pool_size
        .map(|n| whole(n, "poolSize", 0, MAX_POOL_SIZE))
        .transpose()?;
    if let Some(n) = workers {
        let pool = workers::global()
            .ok_or_else(|| ErrorInfo::internal("the worker threads could not be started"))?;
        pool.resize(n)
            .map_err(|e| ErrorInfo::internal(format!("could not start worker threads: {e}")))?;
    }
    if let Some(n) = pool_size {
        realm_pool::set_pool_size(n);
    }
    Ok(current())
}

/// The settings in force now.
pub fn current() -> Settings {
    Settings {
        workers: workers::global().map(|p| p.workers()).unwrap_or(0),
        pool_size: realm_pool::pool_stats().wanted,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fractions_negatives_and_out_of_range_values_are_refused_by_name() {
        for (request, name) in [
            (
                SettingsRequest {
                    workers: Some(1.5),
                    pool_size: None,
                },
                "workers",
            ),
            (
                SettingsRequest {
                    workers: Some(-1.0),
                    pool_size: None,
                },
                "workers",
            ),
            (
                SettingsRequest {
                    workers: Some(0.0),
                    pool_size: None,
                },
                "workers",
            ),
            (
                SettingsRequest {
                    workers: Some(f64::NAN),
                    pool_size: None,
                },
                "workers",
            ),
            (
                SettingsRequest {
                    workers: None,
                    pool_size: Some(65.0),
                },
                "poolSize",
            ),
            (
                SettingsRequest {
                    workers: None,
                    pool_size: Some(-1.0),
                },
                "poolSize",
            ),
        ] {
            let e = configure(request).expect_err("refused");
            assert_eq!(e.code, ErrorCode::InvalidInput);
            assert_eq!(e.name, "RangeError");
            assert!(e.message.starts_with(name), "{}", e.message);
        }
    }

    #[test]
    fn a_bad_setting_applies_nothing() {
        let before = current();
        let r = configure(SettingsRequest {
            workers: Some(before.workers as f64 + 1.0),
            pool_size: Some(1000.0),
        });
        assert!(r.is_err());
        assert_eq!(current().workers, before.workers, "workers unchanged");
    }
}
