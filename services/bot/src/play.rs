//! One game, driven from the server's event stream: the server is the authority, so every
//! decision starts from its state (and its SGF for the moves), never from the bot's memory.
//!
//! The stream is watched from the last sequence number seen; when it breaks (the server
//! went away), the driver reconnects with backoff and resumes from there.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tonic::Code;
use tonic_types::StatusExt;
use weiqi_proto::v1 as pb;
use weiqi_rules::{Color, DeadEstimate, Point};

use super::engine::{Answer, Position, clock_of};
use super::{Ctx, Engines, log};

/// A seat the bot holds.
#[derive(Debug, Clone)]
pub struct Seat {
    pub game_id: String,
    pub token: String,
    pub host: bool,
}

/// How a driven game ended for the bot.
#[derive(Debug, Clone)]
pub struct Finished {
    pub game_id: String,
    /// SGF result text ("B+3.5", "W+R"), empty when cancelled before it started.
    pub result: String,
    pub color: Option<Color>,
    pub moves: u32,
}

/// What the driver remembers between events (all of it can be rebuilt from the server).
#[derive(Default)]
struct Memory {
    /// The move number the bot already answered, so that later events at the same move
    /// (clock updates, announcements) do not make it move twice.
    answered: Option<u32>,
    /// The dead list the bot proposed in this scoring phase.
    proposed: Option<Vec<Point>>,
    disputes: u32,
    restarts: u32,
    transcript: Vec<String>,
}

pub async fn drive(ctx: Arc<Ctx>, seat: Seat, mut engines: Engines) -> Finished {
    let mut mem = Memory::default();
    let mut since = 0u64;
    let mut backoff = Duration::from_millis(100);
    let mut drain_deadline: Option<Instant> = None;
    let finished = 'game: loop {
        let mut client = ctx.client.clone();
        // What the game is now: replayed events older than this are only read, not acted on.
        let now_seq = match client
            .get_game(pb::GetGameRequest {
                game_id: seat.game_id.clone(),
            })
            .await
        {
            Ok(r) => r.into_inner().state.map_or(0, |s| s.seq),
            Err(e) => {
                log("server_unreachable", &seat.game_id, e.message());
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(5));
                continue;
            }
        };
        // With the seat's token, so that the bot counts as present while it waits for its
        // opponent (and its stream reaches the replica that holds the game).
        let stream = client
            .watch_game(super::routed(
                pb::WatchGameRequest {
                    game_id: seat.game_id.clone(),
                    since_seq: since,
                },
                (&seat.token, &seat.game_id),
            ))
            .await;
        let mut stream = match stream {
            Ok(s) => s.into_inner(),
            Err(e) => {
                log("watch_failed", &seat.game_id, e.message());
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(5));
                continue;
            }
        };
        backoff = Duration::from_millis(100);
        loop {
            let draining = *ctx.draining.borrow();
            if draining && drain_deadline.is_none() {
                drain_deadline = Some(Instant::now() + ctx.drain);
            }
            let tick = tokio::time::sleep(Duration::from_millis(500));
            let msg = tokio::select! {
                m = stream.message() => m,
                _ = tick => {
                    // Past the drain deadline a game in play is resigned.
                    if drain_deadline.is_some_and(|d| Instant::now() > d) {
                        let _ = call(&ctx, &seat, "resign", None).await;
                    }
                    continue;
                }
            };
            let (mut event, mut state) = match msg {
                Ok(Some(pb::WatchGameResponse {
                    event: Some(e),
                    state: Some(s),
                })) => (e, s),
                Ok(Some(_)) => continue,
                Ok(None) | Err(_) => {
                    log("stream_ended", &seat.game_id, "reconnecting");
                    break;
                }
            };
            // One command's events arrive together (a pass, then the scoring it opens):
            // act only on the state after the last one already here (past items without an
            // event, a seat's presence, which change nothing the bot acts on).
            while let Ok(Ok(Some(item))) = tokio::time::timeout(Duration::ZERO, stream.message()).await {
                if let pb::WatchGameResponse {
                    event: Some(e),
                    state: Some(s),
                } = item
                {
                    (event, state) = (e, s);
                }
            }
            since = since.max(event.seq);
            if event.seq < now_seq {
                continue;
            }
            if let Some(done) = act(&ctx, &seat, &state, &mut mem, &mut engines, draining).await {
                break 'game done;
            }
        }
        tokio::time::sleep(backoff).await;
    };
    mem.transcript.extend(engines.take_transcript());
    if let Some(dir) = &ctx.transcripts {
        let path = dir.join(format!("{}.gtp", seat.game_id));
        if let Err(e) = std::fs::write(&path, mem.transcript.join("\n") + "\n") {
            log("transcript_failed", &seat.game_id, &format!("{}: {e}", path.display()));
        }
    }
    finished
}

fn my_color(seat: &Seat, state: &pb::GameState) -> Option<Color> {
    let host_black = match pb::Seat::try_from(state.black_seat) {
        Ok(pb::Seat::Host) => true,
        Ok(pb::Seat::Guest) => false,
        _ => return None,
    };
    Some(if host_black == seat.host {
        Color::Black
    } else {
        Color::White
    })
}

fn color_of(c: Color) -> i32 {
    match c {
        Color::Black => pb::Color::Black as i32,
        Color::White => pb::Color::White as i32,
    }
}

/// Does what the state asks of the bot; `Some` when the game is over for it.
async fn act(
    ctx: &Arc<Ctx>,
    seat: &Seat,
    state: &pb::GameState,
    mem: &mut Memory,
    engines: &mut Engines,
    draining: bool,
) -> Option<Finished> {
    let phase = pb::Phase::try_from(state.phase).unwrap_or(pb::Phase::Unspecified);
    let me = my_color(seat, state);
    let done = |result: String| Finished {
        game_id: seat.game_id.clone(),
        result,
        color: me,
        moves: state.move_number,
    };
    match phase {
        pb::Phase::Finished => {
            // A cancelled open game has no result to count.
            let text = match &state.result {
                Some(r) if r.reason != pb::EndReason::Cancelled as i32 => r.text.clone(),
                _ => String::new(),
            };
            log("game_finished", &seat.game_id, &text);
            return Some(done(text));
        }
        pb::Phase::WaitingForOpponent if draining => {
            let _ = call(ctx, seat, "cancel", None).await;
        }
        pb::Phase::Playing => {
            let me = me?;
            // Undo and draw offers: a bot declines both (gtp2ogs does too).
            if state.pending_undo_from == color_of(me.opponent()) {
                let _ = call(ctx, seat, "decline_undo", None).await;
            }
            if state.pending_draw_from == color_of(me.opponent()) {
                let _ = call(ctx, seat, "decline_draw", None).await;
            }
            mem.proposed = None;
            if state.to_move == color_of(me) && mem.answered != Some(state.move_number) {
                move_once(ctx, seat, state, me, mem, engines).await;
            }
        }
        pb::Phase::Scoring => {
            let me = me?;
            score(ctx, seat, state, me, mem, engines).await;
        }
        _ => {}
    }
    None
}

/// The server's record of the game as an engine needs it.
async fn position(ctx: &Ctx, seat: &Seat) -> Result<Position, String> {
    let sgf = ctx
        .client
        .clone()
        .export_sgf(pb::ExportSgfRequest {
            game_id: seat.game_id.clone(),
        })
        .await
        .map_err(|e| e.message().to_string())?
        .into_inner()
        .sgf;
    Position::from_sgf(&seat.game_id, &sgf)
}

/// Asks the engine for a move and sends it, restarting the engine (and replaying the game
/// into it) when it fails, up to the limit, then resigning.
async fn move_once(
    ctx: &Arc<Ctx>,
    seat: &Seat,
    state: &pb::GameState,
    me: Color,
    mem: &mut Memory,
    engines: &mut Engines,
) {
    let settings = state.settings.clone().unwrap_or_default();
    let clock = if me == Color::Black {
        &state.black_clock
    } else {
        &state.white_clock
    };
    let clock = clock_of(settings.time_control.as_ref(), clock.as_ref(), ctx.lag_margin);
    let asked = Instant::now();
    let answer = loop {
        let pos = match position(ctx, seat).await {
            Ok(p) => p,
            Err(e) => {
                log("position_unavailable", &seat.game_id, &e);
                return; // the next event (or reconnect) tries again
            }
        };
        let tc = settings.time_control;
        let result = engines
            .with(move |e| {
                let r = e.sync(&pos, tc.as_ref()).and_then(|()| e.genmove(me, pos.size, clock));
                if r.is_err() {
                    // A fresh process next time, with the game replayed into it.
                    e.restart();
                }
                r
            })
            .await;
        match result {
            Ok(a) => break a,
            Err(why) => {
                mem.restarts += 1;
                log("engine_failed", &seat.game_id, &why.to_string());
                if mem.restarts > ctx.max_restarts {
                    log("resigning", &seat.game_id, "the engine failed too often");
                    break Answer::Resign;
                }
            }
        }
    };
    // A move that comes after the clock ran out is never sent: the server flags the game.
    if let Some(deadline) = clock.and_then(|k| k.deadline)
        && asked.elapsed() > deadline
    {
        log("move_too_late", &seat.game_id, "not sent");
        mem.answered = Some(state.move_number);
        return;
    }
    let sent = match answer {
        Answer::Play(p) => call(ctx, seat, "play", Some((state.move_number, Some(p)))).await,
        Answer::Pass => call(ctx, seat, "pass", Some((state.move_number, None))).await,
        Answer::Resign => call(ctx, seat, "resign", None).await,
    };
    match sent {
        Ok(()) => mem.answered = Some(state.move_number),
        Err(status) if status.code() == Code::InvalidArgument || status.code() == Code::FailedPrecondition => {
            // Refused by the rules (the engine's rules may differ, e.g. superko) or stale:
            // the next state decides; a refused move is replaced by a pass.
            log("move_refused", &seat.game_id, status.message());
            if status.code() == Code::InvalidArgument {
                let _ = call(ctx, seat, "pass", Some((state.move_number, None))).await;
                mem.answered = Some(state.move_number);
            }
        }
        Err(status) => log("move_not_sent", &seat.game_id, status.message()),
    }
}

/// Scoring (C6): accept the proposal in force when it equals the engine's dead list,
/// propose that list once otherwise, and dispute when the opponent insists on another
/// (after two disputes, accept the one in force rather than play on forever).
async fn score(ctx: &Arc<Ctx>, seat: &Seat, state: &pb::GameState, me: Color, mem: &mut Memory, engines: &mut Engines) {
    let accepted = if me == Color::Black {
        state.black_accepted
    } else {
        state.white_accepted
    };
    let pos = match position(ctx, seat).await {
        Ok(p) => p,
        Err(e) => return log("position_unavailable", &seat.game_id, &e),
    };
    let mine = match &mem.proposed {
        Some(list) => list.clone(),
        None => dead_list(&pos, engines).await,
    };
    let mut in_force: Vec<Point> = state
        .dead_stones
        .iter()
        .map(|p| Point::new(p.x as u8, p.y as u8))
        .collect();
    in_force.sort_by_key(|p| (p.y, p.x));
    if in_force == mine || mem.disputes >= 2 {
        if !accepted {
            let _ = call(ctx, seat, "accept", None).await;
        }
    } else if mem.proposed.is_none() {
        let stones = mine.clone();
        mem.proposed = Some(mine);
        let _ = call_with_stones(ctx, seat, stones).await;
    } else if !accepted || in_force != *mem.proposed.as_ref().expect("checked") {
        mem.disputes += 1;
        mem.proposed = None;
        let _ = call(ctx, seat, "dispute", None).await;
    }
}

/// The engine's dead stones at the end, or the project's estimate when it cannot say.
async fn dead_list(pos: &Position, engines: &mut Engines) -> Vec<Point> {
    let p = pos.clone();
    let from_engine = engines
        .with(move |e| {
            let r = e.sync(&p, None).map(|()| e.dead_stones(p.size));
            if r.is_err() {
                e.restart();
            }
            r
        })
        .await;
    if let Ok(Some(list)) = from_engine {
        return list;
    }
    let rules = weiqi_rules::Rules::default();
    let start = if pos.handicap_stones.is_empty() {
        weiqi_rules::State::new(pos.size, rules).ok()
    } else {
        weiqi_rules::State::with_free_handicap(pos.size, &pos.handicap_stones, rules).ok()
    };
    let Some(mut state) = start else { return Vec::new() };
    for &(_, mv) in &pos.moves {
        let _ = state.play(mv);
    }
    DeadEstimate::default().estimate(&state)
}

/// A mutation on the bot's seat, retried as the published policy says
/// (`deploy/grpc/service-config.json`: UNAVAILABLE, the server or its database away) and
/// on transport failures, waiting at least what a RetryInfo asks (the request id makes a
/// retry of a call that did arrive answer as the first).
async fn call(ctx: &Ctx, seat: &Seat, what: &str, mv: Option<(u32, Option<Point>)>) -> Result<(), tonic::Status> {
    let expected = mv.map(|(n, _)| n);
    let rid = format!(
        "bot:{what}:{}:{}",
        expected.map_or(String::from("-"), |n| n.to_string()),
        rand::random::<u32>()
    );
    let mutation = || {
        Some(pb::Mutation {
            game_id: seat.game_id.clone(),
            request_id: rid.clone(),
            expected_move_number: expected,
            // (The bot reads the game from its stream: the answer's board is not needed.)
            view: pb::StateView::Basic as i32,
        })
    };
    let policy = weiqi_proto::retry::RetryPolicy::published();
    for attempt in 1..=policy.max_attempts {
        let mut c = ctx.client.clone();
        let token = &seat.token;
        let r = match what {
            "play" => {
                let p = mv.and_then(|(_, p)| p).map(|p| pb::Point {
                    x: p.x as u32,
                    y: p.y as u32,
                });
                c.play(super::routed(
                    pb::PlayRequest {
                        mutation: mutation(),
                        point: p,
                        lag_ms: 0,
                    },
                    (token, &seat.game_id),
                ))
                .await
                .map(|_| ())
            }
            "pass" => c
                .pass(super::routed(
                    pb::PassRequest {
                        mutation: mutation(),
                        lag_ms: 0,
                    },
                    (token, &seat.game_id),
                ))
                .await
                .map(|_| ()),
            "resign" => c
                .resign(super::routed(
                    pb::ResignRequest { mutation: mutation() },
                    (token, &seat.game_id),
                ))
                .await
                .map(|_| ()),
            "cancel" => c
                .cancel_game(super::routed(
                    pb::CancelGameRequest { mutation: mutation() },
                    (token, &seat.game_id),
                ))
                .await
                .map(|_| ()),
            "accept" => c
                .accept_score(super::routed(
                    pb::AcceptScoreRequest { mutation: mutation() },
                    (token, &seat.game_id),
                ))
                .await
                .map(|_| ()),
            "dispute" => c
                .dispute_score(super::routed(
                    pb::DisputeScoreRequest { mutation: mutation() },
                    (token, &seat.game_id),
                ))
                .await
                .map(|_| ()),
            "decline_undo" => c
                .answer_undo(super::routed(
                    pb::AnswerUndoRequest {
                        mutation: mutation(),
                        accept: false,
                    },
                    (token, &seat.game_id),
                ))
                .await
                .map(|_| ()),
            "decline_draw" => c
                .answer_draw(super::routed(
                    pb::AnswerDrawRequest {
                        mutation: mutation(),
                        accept: false,
                    },
                    (token, &seat.game_id),
                ))
                .await
                .map(|_| ()),
            _ => unreachable!("unknown call {what}"),
        };
        match r {
            Err(s)
                if attempt < policy.max_attempts
                    && (policy.retryable(s.code()) || matches!(s.code(), Code::Unknown | Code::Cancelled)) =>
            {
                let asked = s.get_details_retry_info().and_then(|r| r.retry_delay);
                tokio::time::sleep(policy.backoff(attempt).max(asked.unwrap_or_default())).await;
            }
            other => {
                if let Err(s) = &other {
                    log(&format!("{what}_refused"), &seat.game_id, s.message());
                }
                return other;
            }
        }
    }
    Err(tonic::Status::unavailable("the server stayed away"))
}

async fn call_with_stones(ctx: &Ctx, seat: &Seat, stones: Vec<Point>) -> Result<(), tonic::Status> {
    let req = pb::ProposeDeadStonesRequest {
        mutation: Some(pb::Mutation {
            game_id: seat.game_id.clone(),
            request_id: format!("bot:propose:{}", rand::random::<u32>()),
            expected_move_number: None,
            // (The bot reads the game from its stream: the answer's board is not needed.)
            view: pb::StateView::Basic as i32,
        }),
        stones: stones
            .iter()
            .map(|p| pb::Point {
                x: p.x as u32,
                y: p.y as u32,
            })
            .collect(),
    };
    let r = ctx
        .client
        .clone()
        .propose_dead_stones(super::routed(req, (&seat.token, &seat.game_id)))
        .await;
    if let Err(s) = &r {
        log("propose_refused", &seat.game_id, s.message());
    }
    r.map(|_| ())
}
