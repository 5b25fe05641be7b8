//! Any bytes through the SGF reader and the replay: errors are fine, panics are not, and
//! whatever parses must survive a write/read round trip.
#![no_main]

use libfuzzer_sys::fuzz_target;
use weiqi_rules::Rules;
use weiqi_rules::sgf::GameRecord;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(rec) = GameRecord::parse(&text) {
        let again = GameRecord::parse(&rec.to_sgf()).expect("our own output parses");
        assert_eq!(again.moves.len(), rec.moves.len());
        if let Ok(rep) = rec.replay(Rules::default()) {
            rep.state.check_consistency().expect("consistent after replay");
            let _ = rep.state.area_score(&[]);
        }
    }
});
