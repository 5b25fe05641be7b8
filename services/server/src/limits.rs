//! Per-client quotas of a public server: how fast one client may create games and how
//! many WatchGame streams it may hold open. A client is its IP address (the peer of the
//! connection; behind a proxy, give each client its own connection or put the quotas
//! there). Over quota is `RESOURCE_EXHAUSTED` with a `google.rpc.RetryInfo` saying when to
//! try again, and an `ErrorInfo` (reason `quota_exceeded`, the quota's name).
//!
//! The transport's own bounds (connections, streams per connection, header and message
//! sizes, keepalive, deadlines) are set where the server is built (`lib.rs`); all are in
//! [`Limits`], with docs/service.md's "Limits and hostile clients" listing them.

use std::collections::HashMap;
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use governor::{Quota, RateLimiter, clock::Clock as _};
use serde::Deserialize;
use tonic::{Code, Status};
use tonic_types::{ErrorDetails, StatusExt};

use crate::status::DOMAIN;

/// Every bound of the transport and the per-client quotas, with their defaults (config
/// keys `limits.*`, environment `WEIQI__LIMITS__*`).
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct Limits {
    /// Open TCP connections; more are closed as they arrive.
    pub max_connections: usize,
    /// Concurrent calls (HTTP/2 streams) on one connection; more are refused by HTTP/2.
    pub max_streams_per_connection: u32,
    /// Calls a client gave up on (reset) before the server took them up, on one
    /// connection, before HTTP/2 closes it (`GOAWAY too_many_resets`): h2's guard against
    /// rapid-reset floods. h2's default, 20, closed every client's connection to a replica
    /// woken from a pause of a few seconds, watch streams and all, since calls that timed
    /// out meanwhile are all such resets.
    pub max_pending_reset_streams: usize,
    /// An idle connection is pinged this often; one that does not answer within
    /// `keepalive_timeout_ms` is closed (a phone that lost its network), with its streams.
    pub keepalive_interval_ms: u64,
    pub keepalive_timeout_ms: u64,
    /// Request headers (the bearer token among them), in bytes; larger headers are
    /// refused for that call only.
    pub max_header_bytes: u32,
    /// One request message, in bytes (a ProposeDeadStones of a full 25x25 board is 4 KB).
    pub max_message_bytes: usize,
    /// Every call but WatchGame's stream must be answered within this; a client's own
    /// `grpc-timeout` may be shorter.
    pub request_timeout_ms: u64,
    /// Games one client may create per minute, in bursts of up to `create_burst`; 0 for
    /// no limit (a load test's client).
    pub creates_per_minute: u32,
    pub create_burst: u32,
    /// WatchGame streams one client may hold open at once; 0 for no limit.
    pub watch_streams_per_client: u32,
    /// Score estimates (EstimateScore, each a few milliseconds of a core) one client may
    /// ask for per minute, in bursts of up to `estimate_burst`; 0 for no limit.
    pub estimates_per_minute: u32,
    pub estimate_burst: u32,
    /// Estimates computed at once by the whole server (0: one per core); more wait.
    pub concurrent_estimates: u32,
    /// ReviewGame calls one client may make per minute, in bursts of up to
    /// `review_burst` (a review is up to minutes of a core; the pool's own bounds are
    /// `review.*`); 0 for no limit.
    pub reviews_per_minute: u32,
    pub review_burst: u32,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_connections: 10_000,
            max_streams_per_connection: 256,
            max_pending_reset_streams: 4096,
            keepalive_interval_ms: 20_000,
            keepalive_timeout_ms: 10_000,
            max_header_bytes: 16 * 1024,
            max_message_bytes: 64 * 1024,
            request_timeout_ms: 30_000,
            creates_per_minute: 60,
            create_burst: 20,
            watch_streams_per_client: 200,
            estimates_per_minute: 30,
            estimate_burst: 10,
            concurrent_estimates: 0,
            reviews_per_minute: 10,
            review_burst: 5,
        }
    }
}

type Keyed = RateLimiter<
    IpAddr,
    governor::state::keyed::HashMapStateStore<IpAddr>,
    governor::clock::DefaultClock,
    governor::middleware::NoOpMiddleware<<governor::clock::DefaultClock as governor::clock::Clock>::Instant>,
>;

/// The per-client quotas.
pub struct Quotas {
    /// `None`: no limit.
    creates: Option<Keyed>,
    /// `None`: no limit.
    estimates: Option<Keyed>,
    /// `None`: no limit.
    reviews: Option<Keyed>,
    clock: governor::clock::DefaultClock,
    watches: Mutex<HashMap<IpAddr, u32>>,
    max_watches: u32,
}

impl Quotas {
    pub fn new(l: &Limits) -> Arc<Quotas> {
        let keyed = |per_minute: u32, burst: u32| {
            let rate = NonZeroU32::new(per_minute.max(1)).expect("nonzero");
            let burst = NonZeroU32::new(burst.max(1)).expect("nonzero");
            (per_minute > 0).then(|| RateLimiter::hashmap(Quota::per_minute(rate).allow_burst(burst)))
        };
        Arc::new(Quotas {
            creates: keyed(l.creates_per_minute, l.create_burst),
            estimates: keyed(l.estimates_per_minute, l.estimate_burst),
            reviews: keyed(l.reviews_per_minute, l.review_burst),
            clock: governor::clock::DefaultClock::default(),
            watches: Mutex::new(HashMap::new()),
            max_watches: l.watch_streams_per_client,
        })
    }

    /// One more game created by `client`, or RESOURCE_EXHAUSTED with when to retry.
    pub fn create(&self, client: Option<IpAddr>) -> Result<(), Status> {
        self.take(
            &self.creates,
            client,
            "creates_per_minute",
            "too many games created; retry later",
        )
    }

    /// One more score estimate for `client`, or RESOURCE_EXHAUSTED with when to retry.
    pub fn estimate(&self, client: Option<IpAddr>) -> Result<(), Status> {
        self.take(
            &self.estimates,
            client,
            "estimates_per_minute",
            "too many score estimates; retry later",
        )
    }

    /// One more ReviewGame call for `client`, or RESOURCE_EXHAUSTED with when to retry.
    pub fn review(&self, client: Option<IpAddr>) -> Result<(), Status> {
        self.take(
            &self.reviews,
            client,
            "reviews_per_minute",
            "too many game reviews asked for; retry later",
        )
    }

    fn take(&self, limiter: &Option<Keyed>, client: Option<IpAddr>, quota: &str, msg: &str) -> Result<(), Status> {
        let (Some(ip), Some(limiter)) = (client, limiter) else {
            return Ok(());
        };
        limiter.check_key(&ip).map_err(|not_until| {
            let wait = not_until.wait_time_from(self.clock.now());
            exhausted(quota, msg, wait)
        })?;
        // (Forgets clients whose buckets are full again, so the map stays small.)
        if limiter.len() > 100_000 {
            limiter.retain_recent();
        }
        Ok(())
    }

    /// A WatchGame stream for `client`, held until the permit is dropped.
    pub fn watch(self: &Arc<Self>, client: Option<IpAddr>) -> Result<WatchPermit, Status> {
        let Some(ip) = client.filter(|_| self.max_watches > 0) else {
            return Ok(WatchPermit { quotas: None, ip: None });
        };
        let mut w = self.watches.lock().expect("lock");
        let n = w.entry(ip).or_insert(0);
        if *n >= self.max_watches {
            return Err(exhausted(
                "watch_streams_per_client",
                "too many open WatchGame streams from this client; close one first",
                Duration::from_secs(1),
            ));
        }
        *n += 1;
        Ok(WatchPermit {
            quotas: Some(self.clone()),
            ip: Some(ip),
        })
    }
}

/// One open WatchGame stream counted against its client.
pub struct WatchPermit {
    quotas: Option<Arc<Quotas>>,
    ip: Option<IpAddr>,
}

impl Drop for WatchPermit {
    fn drop(&mut self) {
        if let (Some(q), Some(ip)) = (&self.quotas, self.ip) {
            let mut w = q.watches.lock().expect("lock");
            if let Some(n) = w.get_mut(&ip) {
                *n -= 1;
                if *n == 0 {
                    w.remove(&ip);
                }
            }
        }
    }
}

/// RESOURCE_EXHAUSTED with RetryInfo and ErrorInfo (reason `quota_exceeded`).
pub fn exhausted(quota: &str, msg: &str, retry_after: Duration) -> Status {
    let mut details = ErrorDetails::with_error_info(
        "quota_exceeded",
        DOMAIN,
        HashMap::from([("quota".to_string(), quota.to_string())]),
    );
    details.set_retry_info(Some(retry_after.max(Duration::from_millis(1))));
    Status::with_error_details(Code::ResourceExhausted, msg, details)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn creates_are_rate_limited_per_client() {
        let q = Quotas::new(&Limits {
            creates_per_minute: 1,
            create_burst: 3,
            ..Limits::default()
        });
        let (a, b) = (Some("10.0.0.1".parse().unwrap()), Some("10.0.0.2".parse().unwrap()));
        for _ in 0..3 {
            q.create(a).unwrap();
        }
        let err = q.create(a).unwrap_err();
        assert_eq!(err.code(), Code::ResourceExhausted);
        let retry = err.get_details_retry_info().unwrap().retry_delay.unwrap();
        assert!(
            retry > Duration::from_secs(1) && retry <= Duration::from_secs(60),
            "{retry:?}"
        );
        // Another client is not affected.
        q.create(b).unwrap();
    }

    #[test]
    fn estimates_have_their_own_quota() {
        let q = Quotas::new(&Limits {
            estimates_per_minute: 1,
            estimate_burst: 2,
            ..Limits::default()
        });
        let a = Some("10.0.0.1".parse().unwrap());
        q.estimate(a).unwrap();
        q.estimate(a).unwrap();
        let err = q.estimate(a).unwrap_err();
        assert_eq!(err.code(), Code::ResourceExhausted);
        let info = err.get_details_error_info().unwrap();
        assert_eq!(info.metadata["quota"], "estimates_per_minute");
        // Creating games is another budget.
        q.create(a).unwrap();
    }

    #[test]
    fn watch_permits_are_counted_and_returned() {
        let q = Quotas::new(&Limits {
            watch_streams_per_client: 2,
            ..Limits::default()
        });
        let a = Some("10.0.0.1".parse().unwrap());
        let p1 = q.watch(a).unwrap();
        let _p2 = q.watch(a).unwrap();
        let err = q.watch(a).err().unwrap();
        assert_eq!(err.code(), Code::ResourceExhausted);
        assert_eq!(err.get_details_error_info().unwrap().reason, "quota_exceeded");
        drop(p1);
        q.watch(a).unwrap();
    }
}
