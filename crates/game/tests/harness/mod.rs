//! The referee tests' harness: a game driven by commands at given times, with its log.
#![allow(dead_code)]

use Actor::{Guest, Host};
use weiqi_game::*;
use weiqi_rules::{Point, Preset};

pub const S: Ms = 1000;

pub fn p(gtp: &str, size: u8) -> Point {
    Point::from_gtp(gtp, size).unwrap()
}

pub struct T {
    pub g: Game,
    pub log: Vec<Event>,
}

impl T {
    pub fn new(settings: Settings) -> T {
        T::with_commitment(settings, None)
    }
    pub fn with_commitment(settings: Settings, c: Option<String>) -> T {
        let mut t = T {
            g: Game::new(),
            log: Vec::new(),
        };
        t.ok(
            Actor::Host,
            Command::Create {
                host: None,
                settings,
                nigiri_commitment: c,
            },
            0,
        );
        t
    }
    pub fn run(&mut self, by: Actor, cmd: Command, now: Ms) -> Result<Vec<Event>, Rejection> {
        // The server decides in place: it must decide the same, leave the game as it was
        // on a refusal, and otherwise end where applying the events leads.
        let mut in_place = self.g.clone();
        let r = self.g.decide(by, &cmd, now);
        assert_eq!(in_place.decide_in_place(by, &cmd, now), r, "decided alike in place");
        if let Ok(events) = &r {
            for e in events {
                self.g.apply(e).unwrap();
                self.log.push(e.clone());
            }
            // The fold of the whole log equals the game.
            assert_eq!(Game::from_events(&self.log).unwrap(), self.g);
        }
        assert_eq!(in_place, self.g, "a refusal changes nothing; events lead where applied");
        r
    }
    pub fn ok(&mut self, by: Actor, cmd: Command, now: Ms) -> Vec<Event> {
        self.run(by, cmd.clone(), now)
            .unwrap_or_else(|e| panic!("{cmd:?} at {now}: {e}"))
    }
    pub fn err(&mut self, by: Actor, cmd: Command, now: Ms) -> Rejection {
        let before = self.g.clone();
        let e = self
            .run(by, cmd.clone(), now)
            .expect_err(&format!("{cmd:?} should be refused"));
        assert_eq!(self.g, before, "a refusal changes nothing");
        e
    }
    pub fn play(&mut self, by: Actor, gtp: &str, now: Ms) -> Vec<Event> {
        let size = self.g.settings().unwrap().size;
        self.ok(
            by,
            Command::Play {
                point: p(gtp, size),
                lag_ms: 0,
            },
            now,
        )
    }
    pub fn kinds(events: &[Event]) -> Vec<String> {
        events
            .iter()
            .map(|e| {
                serde_json::to_value(&e.kind).unwrap()["type"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect()
    }
}

/// The guest joins (anonymous, no nigiri) at time 0.
pub fn join(t: &mut T) {
    join_at(t, 0);
}

/// The guest joins (anonymous, no nigiri) at `at`; returns the events.
pub fn join_at(t: &mut T, at: Ms) -> Vec<Event> {
    t.ok(
        Guest,
        Command::Join {
            player: None,
            nigiri_guess: None,
            entropy: 0,
        },
        at,
    )
}

pub fn casual(size: u8) -> Settings {
    let mut s = Settings::casual(size);
    s.lag = LagComp::OFF;
    s.rules = Preset::Chinese.rules().with_komi(0.5);
    s
}

pub fn ko_setup(mode: RefereeMode) -> T {
    let mut s = casual(5);
    s.mode = mode;
    let mut t = T::new(s);
    join(&mut t);
    // A ko at B4/C4 (GTP on 5x5): Black captures at C4... build it move by move.
    for (i, (by, v)) in [
        (Host, "B5"),
        (Guest, "C5"),
        (Host, "A4"),
        (Guest, "D4"),
        (Host, "B3"),
        (Guest, "C3"),
        (Host, "C4"),
        (Guest, "B4"),
    ]
    .iter()
    .enumerate()
    {
        t.play(*by, v, 10 + i as Ms);
    }
    // White's B4 captured C4: Black may not retake at once.
    t
}
