//! Tournaments between the wire and the domain.

use tonic::Status;
use weiqi_game::Ms;
use weiqi_proto::v1 as pb;
use weiqi_tournament::export::group_letter;
use weiqi_tournament::{
    BoardResult, Round, RoundGame, Seeding, Stage, Tournament, TournamentPhase, TournamentSettings,
};

use crate::convert::{settings_from, settings_to};
use crate::status::{bad_request, invalid};

fn non_negative(field: &str, v: i64) -> Result<u64, Status> {
    u64::try_from(v).map_err(|_| bad_request(field, format!("{field} is not negative")))
}

pub fn settings_from_pb(s: Option<&pb::TournamentSettings>, default_lag_ms: Ms) -> Result<TournamentSettings, Status> {
    let s = s.ok_or_else(|| bad_request("settings", "a tournament needs its settings"))?;
    let seeding =
        match pb::Seeding::try_from(s.seeding).map_err(|_| invalid(format!("unknown seeding {}", s.seeding)))? {
            pb::Seeding::Unspecified | pb::Seeding::Random => Seeding::Random,
            pb::Seeding::Rating => Seeding::Rating,
        };
    let round_starts_ms = s
        .round_starts_ms
        .iter()
        .map(|&t| non_negative("settings.round_starts_ms", t))
        .collect::<Result<_, _>>()?;
    Ok(TournamentSettings {
        name: s.name.clone(),
        groups: s.groups,
        group_size: s.group_size,
        game: settings_from(s.game.as_ref(), default_lag_ms)?,
        seeding,
        knockout: s.knockout,
        round_starts_ms,
        round_break_ms: non_negative("settings.round_break_ms", s.round_break_ms)?,
        check_in_window_ms: non_negative("settings.check_in_window_ms", s.check_in_window_ms)?,
    })
}

fn settings_to_pb(s: &TournamentSettings) -> pb::TournamentSettings {
    pb::TournamentSettings {
        name: s.name.clone(),
        groups: s.groups,
        group_size: s.group_size,
        game: Some(settings_to(&s.game)),
        seeding: match s.seeding {
            Seeding::Random => pb::Seeding::Random,
            Seeding::Rating => pb::Seeding::Rating,
        } as i32,
        knockout: s.knockout,
        round_starts_ms: s.round_starts_ms.iter().map(|&t| t as i64).collect(),
        round_break_ms: s.round_break_ms as i64,
        check_in_window_ms: s.check_in_window_ms as i64,
    }
}

pub fn phase_to(p: TournamentPhase) -> pb::TournamentPhase {
    match p {
        TournamentPhase::Registration => pb::TournamentPhase::Registration,
        TournamentPhase::Running => pb::TournamentPhase::Running,
        TournamentPhase::Finished => pb::TournamentPhase::Finished,
    }
}

fn result_to(r: Option<BoardResult>) -> pb::BoardResult {
    match r {
        None => pb::BoardResult::Unspecified,
        Some(BoardResult::BlackWins) => pb::BoardResult::BlackWins,
        Some(BoardResult::WhiteWins) => pb::BoardResult::WhiteWins,
        Some(BoardResult::Draw) => pb::BoardResult::Draw,
        Some(BoardResult::BothLose) => pb::BoardResult::BothLose,
        Some(BoardResult::NoResult) => pb::BoardResult::NoResult,
    }
}

fn board_to(b: &RoundGame) -> pb::TournamentBoard {
    pb::TournamentBoard {
        game_id: b.game_id.clone(),
        black_player_id: b.black.clone().unwrap_or_default(),
        white_player_id: b.white.clone().unwrap_or_default(),
        group: b.group.map(|g| group_letter(g as usize)).unwrap_or_default(),
        slot: b.slot,
        attempt: b.attempt,
        starts_ms: b.starts_ms as i64,
        walkover: b.is_walkover(),
        forfeit: b.forfeit,
        result: result_to(b.result) as i32,
    }
}

fn round_to(r: &Round) -> pb::TournamentRound {
    pb::TournamentRound {
        number: r.number,
        stage: match r.stage {
            Stage::Groups => pb::TournamentStage::Groups,
            Stage::Knockout => pb::TournamentStage::Knockout,
        } as i32,
        starts_ms: r.starts_ms as i64,
        boards: r.boards.iter().map(board_to).collect(),
    }
}

pub fn tournament_to(t: &Tournament) -> pb::Tournament {
    let name_of = |id: &str| t.entrant(id).map(|e| e.name.clone()).unwrap_or_default();
    pb::Tournament {
        tournament_id: t.id.clone(),
        settings: Some(settings_to_pb(&t.settings)),
        organizer_id: t.organizer.clone(),
        phase: phase_to(t.phase) as i32,
        entrants: t
            .entrants
            .iter()
            .map(|e| pb::Entrant {
                player_id: e.player_id.clone(),
                name: e.name.clone(),
                bot: e.bot,
                rating: e.rating,
                withdrawn: t.withdrawn.contains(&e.player_id),
            })
            .collect(),
        seed: t.seed,
        groups: t
            .groups
            .iter()
            .enumerate()
            .map(|(g, players)| pb::GroupStandings {
                group: group_letter(g),
                player_ids: players.clone(),
                standings: t
                    .group_standings(g)
                    .into_iter()
                    .map(|s| pb::Standing {
                        name: name_of(&s.player_id),
                        player_id: s.player_id,
                        place: s.place,
                        played: s.played,
                        wins: s.wins,
                        draws: s.draws,
                        losses: s.losses,
                        points: s.points,
                        head_to_head: s.head_to_head,
                        sonneborn_berger_x2: s.sonneborn_berger_x2,
                    })
                    .collect(),
            })
            .collect(),
        rounds: t.rounds.iter().map(round_to).collect(),
        champion_id: t.champion.clone().unwrap_or_default(),
        created_ms: t.created_ms as i64,
        finished_ms: t.finished_ms.unwrap_or(0) as i64,
        version: t.version,
    }
}
