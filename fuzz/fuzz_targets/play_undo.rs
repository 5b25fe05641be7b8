//! Arbitrary play/pass/undo sequences on small boards under every ko and suicide rule:
//! the engine never panics, stays consistent, and undo restores the previous state.
#![no_main]

use libfuzzer_sys::fuzz_target;
use weiqi_rules::{KoRule, Move, Point, Rules, State};

fuzz_target!(|data: &[u8]| {
    let Some((&head, ops)) = data.split_first() else { return };
    let size = 2 + head % 6;
    let mut rules = Rules::default();
    rules.ko = [KoRule::Positional, KoRule::Situational, KoRule::Simple][(head as usize / 6) % 3];
    rules.suicide_allowed = head & 0x80 != 0;
    let mut s = State::new(size, rules).expect("size in range");
    for &op in ops {
        match op {
            250..=255 => {
                let before = s.clone();
                if let Some(_) = s.undo() {
                    let mut redo = s.clone();
                    let (c, m) = *before.moves().last().expect("undone move");
                    redo.play_color(c, m).expect("the undone move is legal again");
                    assert!(redo == before);
                }
            }
            240..=249 => {
                let _ = s.play(Move::Pass);
            }
            _ => {
                let p = Point::new(op % 16, op / 16);
                let before = s.clone();
                if s.play(Move::Place(p)).is_err() {
                    assert!(s == before, "a refused move changes nothing");
                }
            }
        }
    }
    s.check_consistency().expect("consistent");
});
