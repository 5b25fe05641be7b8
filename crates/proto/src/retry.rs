//! The published retry policy (`deploy/grpc/service-config.json`, the gRPC service config
//! that clients on grpc-go, grpc-java, grpc-core and grpc-js apply as it is) for this
//! project's own clients on tonic, which does not read service configs: the same file,
//! read at compile time, so the two cannot drift.

use std::time::Duration;

use tonic::Code;

/// The service config as shipped.
pub const SERVICE_CONFIG: &str = include_str!("../../../deploy/grpc/service-config.json");

/// When a failed call is tried again, and how long to wait before each try.
#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    /// Tries in all, the first included.
    pub max_attempts: u32,
    pub initial_backoff: Duration,
    pub max_backoff: Duration,
    pub multiplier: f64,
    pub retryable: Vec<Code>,
}

impl RetryPolicy {
    /// The policy of [`SERVICE_CONFIG`] (the same for every method).
    pub fn published() -> RetryPolicy {
        parse(SERVICE_CONFIG).expect("deploy/grpc/service-config.json is a valid service config")
    }

    pub fn retryable(&self, code: Code) -> bool {
        self.retryable.contains(&code)
    }

    /// The wait before try `attempt + 1` (`attempt` counts from 1), as gRPC computes it
    /// without the jitter: `initial * multiplier^(attempt - 1)`, at most `max_backoff`.
    pub fn backoff(&self, attempt: u32) -> Duration {
        let factor = self.multiplier.powi(attempt.saturating_sub(1).min(64) as i32);
        self.initial_backoff.mul_f64(factor).min(self.max_backoff)
    }
}

/// The first method config's retry policy of a service config (JSON).
fn parse(json: &str) -> Option<RetryPolicy> {
    let config: serde_json::Value = serde_json::from_str(json).ok()?;
    let p = &config["methodConfig"][0]["retryPolicy"];
    let secs = |v: &serde_json::Value| -> Option<Duration> {
        Duration::try_from_secs_f64(v.as_str()?.strip_suffix('s')?.parse().ok()?).ok()
    };
    let code = |name: &str| -> Option<Code> {
        Some(match name {
            "CANCELLED" => Code::Cancelled,
            "UNKNOWN" => Code::Unknown,
            "DEADLINE_EXCEEDED" => Code::DeadlineExceeded,
            "RESOURCE_EXHAUSTED" => Code::ResourceExhausted,
            "ABORTED" => Code::Aborted,
            "INTERNAL" => Code::Internal,
            "UNAVAILABLE" => Code::Unavailable,
            _ => return None,
        })
    };
    Some(RetryPolicy {
        max_attempts: p["maxAttempts"].as_u64()?.try_into().ok()?,
        initial_backoff: secs(&p["initialBackoff"])?,
        max_backoff: secs(&p["maxBackoff"])?,
        multiplier: p["backoffMultiplier"].as_f64()?,
        retryable: p["retryableStatusCodes"]
            .as_array()?
            .iter()
            .map(|c| code(c.as_str()?))
            .collect::<Option<_>>()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_published_policy_is_read_as_written() {
        let p = RetryPolicy::published();
        assert_eq!(p.max_attempts, 5);
        assert_eq!(p.retryable, [Code::Unavailable]);
        let waits: Vec<u128> = (1..=5).map(|a| p.backoff(a).as_millis()).collect();
        assert_eq!(waits, [500, 1000, 2000, 4000, 4000]);
        assert!(p.retryable(Code::Unavailable) && !p.retryable(Code::Internal));
    }

    #[test]
    fn a_config_it_cannot_read_is_none() {
        assert_eq!(parse("{}"), None);
        assert_eq!(parse(&SERVICE_CONFIG.replace("\"0.5s\"", "\"soon\"")), None);
        assert_eq!(parse(&SERVICE_CONFIG.replace("UNAVAILABLE", "SOMETIMES")), None);
    }
}
