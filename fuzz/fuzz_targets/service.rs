//! Arbitrary bytes as the service's requests, called as either seat or a spectator on a
//! game in play in the in-memory store (`weiqi_server::fuzzing`): no panic, a game changes
//! only on OK, and it stays the fold of its log.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    weiqi_server::fuzzing::drive(data);
});
