//! How patient the client is: tries, back-off with jitter, rate-limit waits.

use std::time::Duration;

use cell_stats::SplitMix64;

/// How patient the client is.
#[derive(Clone, Debug)]
pub struct RetryPolicy {
    /// Tries per request.
    pub tries: u32,
    /// First back-off; doubles each time, with jitter.
    pub base: Duration,
    /// Longest wait a rate limit may impose before we give up.
    pub max_wait: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            tries: 5,
            base: Duration::from_millis(500),
            max_wait: Duration::from_mins(15),
        }
    }
}

impl RetryPolicy {
    /// The wait after try number `tries` (from 1): the base doubled each time, times 0.75 to
    /// 1.25 so that clients started together do not retry together.
    pub(crate) fn backoff(&self, tries: u32, jitter: &mut SplitMix64) -> Duration {
        self.base
            .saturating_mul(1 << (tries.max(1) - 1).min(10))
            .mul_f64(0.75 + jitter.below(500) as f64 / 1000.0)
    }
}

/// How long a 403/429 asks us to wait, if it is a rate limit at all.
pub fn rate_limit_wait(
    retry_after: Option<&str>,
    remaining: Option<&str>,
    reset: Option<&str>,
) -> Option<Duration> {
    if let Some(secs) = retry_after.and_then(|s| s.trim().parse::<u64>().ok()) {
        return Some(Duration::from_secs(secs));
    }
    if remaining.map(str::trim) == Some("0") {
        let reset = reset?.trim().parse::<i64>().ok()?;
        let wait = (reset - cell_schema::time::now_secs()).max(0) + 1;
        return Some(Duration::from_secs(u64::try_from(wait).unwrap_or(1)));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_limits() {
        assert_eq!(
            rate_limit_wait(Some("3"), None, None),
            Some(Duration::from_secs(3))
        );
        assert_eq!(rate_limit_wait(None, Some("5"), Some("0")), None);
        let reset = (cell_schema::time::now_secs() + 10).to_string();
        let w = rate_limit_wait(None, Some("0"), Some(&reset)).unwrap();
        assert!(
            w >= Duration::from_secs(9) && w <= Duration::from_secs(12),
            "{w:?}"
        );
        assert_eq!(rate_limit_wait(None, None, None), None);
    }

    #[test]
    fn backoff_doubles_within_its_jitter() {
        let policy = RetryPolicy {
            base: Duration::from_millis(100),
            ..RetryPolicy::default()
        };
        let mut jitter = SplitMix64::new(7);
        for tries in 1..=4 {
            let nominal = 100.0 * f64::from(1u32 << (tries - 1));
            let ms = policy.backoff(tries, &mut jitter).as_secs_f64() * 1000.0;
            assert!(ms >= nominal * 0.75 && ms < nominal * 1.25, "{tries}: {ms}");
        }
    }
}
