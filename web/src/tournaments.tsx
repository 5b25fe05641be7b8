// Tournaments: the list (#/tournaments) with a form to create one, and a tournament's
// page (#/tournament/<id>), live from WatchTournament: settings, players, register and
// withdraw, the organizer's Start, standings per group, the knockout bracket, and every
// round's boards (to watch; a player's own board opens with their seat from GetSeat).
import { useEffect, useRef, useState } from "preact/hooks";
import { create } from "@bufbuild/protobuf";
import type { JSX } from "preact";
import {
  BoardResult,
  GameSettingsSchema,
  RefereeMode,
  Seeding,
  TimeControlSchema,
  TournamentPhase,
  TournamentStage,
  failure,
  type GameSettings,
  type PlayerClient,
  type Tournament,
  type TournamentBoard,
  type TournamentClient,
  type TournamentSummary,
} from "./client.js";
import { bracketColumns } from "./bracket.js";
import { takeSeat } from "./feed.js";
import { BoardSizeSelect, checked, num } from "./forms.js";
import { t, tf, type Key, type Lang } from "./i18n.js";
import { describe } from "./lobby.js";
import { keepWatching } from "./watch.js";

const LIST_REFRESH_MS = 5000;

const PHASE: Record<number, Key> = {
  [TournamentPhase.REGISTRATION]: "phaseRegistration",
  [TournamentPhase.RUNNING]: "phaseRunning",
  [TournamentPhase.FINISHED]: "phaseFinished",
};

export function TournamentsPage(p: { tournaments: TournamentClient; signedIn: boolean; lang: Lang }): JSX.Element {
  const { lang } = p;
  const [list, setList] = useState<TournamentSummary[] | undefined>();
  const [error, setError] = useState("");
  useEffect(() => {
    let alive = true;
    const refresh = () =>
      p.tournaments
        .listTournaments({ limit: 100 })
        .then((r) => {
          if (!alive) return;
          setList(r.tournaments);
          setError("");
        })
        .catch((e) => alive && setError(failure(e).message));
    void refresh();
    const timer = setInterval(refresh, LIST_REFRESH_MS);
    return () => {
      alive = false;
      clearInterval(timer);
    };
  }, [p.tournaments]);
  return (
    <main class="lobby tournaments">
      <section aria-labelledby="tournaments-h">
        <h2 id="tournaments-h">{t(lang, "tournaments")}</h2>
        {list && list.length === 0 ? <p class="muted">{t(lang, "noTournaments")}</p> : null}
        <ul class="games" data-testid="tournament-list">
          {(list ?? []).map((s) => (
            <li key={s.tournamentId} data-tournament={s.tournamentId}>
              <a class="size" href={`#/tournament/${encodeURIComponent(s.tournamentId)}`}>
                {s.name}
              </a>
              <span class={`phase phase-${s.phase}`}>{t(lang, PHASE[s.phase] ?? "phaseRegistration")}</span>
              <span class="muted">{new Date(Number(s.createdMs)).toLocaleDateString()}</span>
            </li>
          ))}
        </ul>
      </section>
      {p.signedIn ? <CreateTournament tournaments={p.tournaments} lang={lang} onError={setError} /> : null}
      {error ? (
        <p class="error" role="alert">
          {error}
        </p>
      ) : null}
    </main>
  );
}

function CreateTournament(p: { tournaments: TournamentClient; lang: Lang; onError: (m: string) => void }): JSX.Element {
  const { lang } = p;
  const [name, setName] = useState("");
  const [size, setSize] = useState(9);
  const [groups, setGroups] = useState(1);
  const [groupSize, setGroupSize] = useState(4);
  const [knockout, setKnockout] = useState(true);
  const [mainMin, setMainMin] = useState(10);
  const [rated, setRated] = useState(true);
  const [checkInMin, setCheckInMin] = useState(5);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    try {
      const r = await p.tournaments.createTournament({
        settings: {
          name: name.trim(),
          groups,
          groupSize,
          knockout,
          seeding: Seeding.RATING,
          checkInWindowMs: BigInt(Math.round(checkInMin * 60_000)),
          game: create(GameSettingsSchema, {
            boardSize: size,
            rules: "chinese",
            komi: 7.5,
            rated,
            mode: RefereeMode.TOURNAMENT,
            timeControl: create(TimeControlSchema, {
              kind: { case: "byoYomi", value: { mainMs: BigInt(Math.round(mainMin * 60_000)), periods: 3, periodMs: 30_000n } },
            }),
          }),
        },
      });
      location.hash = `#/tournament/${encodeURIComponent(r.tournament!.tournamentId)}`;
    } catch (err) {
      p.onError(failure(err).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby="create-t-h">
      <h2 id="create-t-h">{t(lang, "createTournament")}</h2>
      <form class="create" onSubmit={submit}>
        <label>
          {t(lang, "tournamentName")}
          <input name="t-name" value={name} maxLength={100} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
        </label>
        <label>
          {t(lang, "boardSize")}
          <BoardSizeSelect name="t-size" value={size} onChange={setSize} />
        </label>
        <label>
          {t(lang, "groups")}
          <select name="t-groups" value={groups} onChange={num(setGroups)}>
            {[1, 2, 4, 8, 16].map((g) => (
              <option key={g} value={g}>
                {g}
              </option>
            ))}
          </select>
        </label>
        <label>
          {t(lang, "groupSize")}
          <input name="t-group-size" type="number" min="2" max="16" value={groupSize} onInput={num(setGroupSize)} />
        </label>
        <label>
          {t(lang, "mainMinutes")}
          <input name="t-main" type="number" min="0" value={mainMin} onInput={num(setMainMin)} />
        </label>
        <label>
          {t(lang, "checkInWindow")}
          <input name="t-check-in" type="number" min="0" value={checkInMin} onInput={num(setCheckInMin)} />
        </label>
        <label class="check">
          <input type="checkbox" name="t-knockout" checked={knockout} onChange={checked(setKnockout)} />
          {t(lang, "knockoutAfterGroups")}
        </label>
        <label class="check">
          <input type="checkbox" name="t-rated" checked={rated} onChange={checked(setRated)} />
          {t(lang, "rated")}
        </label>
        <button type="submit" disabled={busy || !name.trim()}>
          {t(lang, "create")}
        </button>
      </form>
    </section>
  );
}

/** The tournament as WatchTournament gives it: now, then after every change; reopened
 * after a drop until it finishes. */
function useTournament(tournaments: TournamentClient, id: string) {
  const [tour, setTour] = useState<Tournament | undefined>();
  const [notFound, setNotFound] = useState(false);
  const [offline, setOffline] = useState(false);
  useEffect(() => {
    const abort = new AbortController();
    setTour(undefined);
    setNotFound(false);
    void keepWatching(
      abort.signal,
      async () => {
        for await (const r of tournaments.watchTournament({ tournamentId: id }, { signal: abort.signal })) {
          setOffline(false);
          if (r.tournament) setTour(r.tournament);
        }
        // The stream ends when the tournament finishes: nothing more to wait for.
        return "done";
      },
      { gone: () => setNotFound(true), offline: () => setOffline(true) },
    );
    return () => abort.abort();
  }, [tournaments, id]);
  return { tour, setTour, notFound, offline };
}

export function TournamentPage(p: {
  tournaments: TournamentClient;
  players: PlayerClient;
  me?: string;
  id: string;
  lang: Lang;
  go: (gameId: string) => void;
}): JSX.Element {
  const { lang, me } = p;
  const { tour, setTour, notFound, offline } = useTournament(p.tournaments, p.id);
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  const alive = useRef(true);
  useEffect(() => () => void (alive.current = false), []);
  // The organizer's name, for one who does not play in it.
  const [organizer, setOrganizer] = useState("");
  const organizerId = tour?.organizerId ?? "";
  useEffect(() => {
    if (!organizerId) return;
    p.players
      .getPlayer({ playerId: organizerId })
      .then((r) => alive.current && setOrganizer(r.player?.name ?? ""))
      .catch(() => undefined);
  }, [organizerId]);

  if (notFound)
    return (
      <main class="lobby">
        <p class="error" role="alert">
          {t(lang, "tournamentNotFound")}
        </p>
      </main>
    );
  if (!tour)
    return (
      <main class="lobby">
        <p class="muted">{t(lang, "loading")}</p>
      </main>
    );

  const s = tour.settings!;
  const names = new Map(tour.entrants.map((e) => [e.playerId, e.name]));
  if (organizer && !names.has(tour.organizerId)) names.set(tour.organizerId, organizer);
  const name = (id: string) => (id ? (names.get(id) ?? id) : t(lang, "toBeDecided"));
  const mine = tour.entrants.find((e) => e.playerId === me);
  const registering = tour.phase === TournamentPhase.REGISTRATION;

  const act = async (f: () => Promise<{ tournament?: Tournament }>) => {
    setBusy(true);
    try {
      const r = await f();
      if (alive.current && r.tournament) setTour(r.tournament);
      setError("");
    } catch (e) {
      setError(failure(e).message);
    } finally {
      setBusy(false);
    }
  };
  const play = async (b: TournamentBoard) => {
    try {
      await takeSeat(p.players, b.gameId, me!);
    } catch {
      // No seat (yet): the board is still worth watching.
    }
    p.go(b.gameId);
  };
  const playerLink = (id: string) =>
    id ? <a href={`#/player/${encodeURIComponent(id)}`}>{name(id)}</a> : <span class="muted">{name(id)}</span>;

  return (
    <main class="lobby tournament" data-testid="tournament">
      <h2>
        {s.name} <span class={`phase phase-${tour.phase}`}>{t(lang, PHASE[tour.phase] ?? "phaseRegistration")}</span>
      </h2>
      {offline ? <p class="banner offline">{t(lang, "reconnecting")}</p> : null}
      <p class="muted" data-testid="tournament-settings">
        {s.game ? `${s.game.boardSize}×${s.game.boardSize} · ${gameWords(lang, s.game)}` : ""} · {t(lang, "groups")} {s.groups} ×{" "}
        {s.groupSize}
        {s.knockout ? ` · ${t(lang, "knockoutAfterGroups")}` : ""} · {t(lang, "seeding")}:{" "}
        {t(lang, s.seeding === Seeding.RATING ? "seedingRating" : "seedingRandom")} · {t(lang, "organizer")}:{" "}
        {playerLink(tour.organizerId)}
      </p>
      {tour.championId ? (
        <p class="champion" data-testid="champion">
          {t(lang, "champion")}: {playerLink(tour.championId)}
        </p>
      ) : null}
      <div class="controls">
        {me && registering && !mine ? (
          <button disabled={busy} onClick={() => act(() => p.tournaments.registerForTournament({ tournamentId: tour.tournamentId }))}>
            {t(lang, "register")}
          </button>
        ) : null}
        {mine && !mine.withdrawn && tour.phase !== TournamentPhase.FINISHED ? (
          <>
            <span class="info">{t(lang, "registeredNote")}</span>
            <button
              class="danger"
              disabled={busy}
              onClick={() => act(() => p.tournaments.withdrawFromTournament({ tournamentId: tour.tournamentId }))}
            >
              {t(lang, "withdraw")}
            </button>
          </>
        ) : null}
        {me && me === tour.organizerId && registering ? (
          <button disabled={busy} onClick={() => act(() => p.tournaments.startTournament({ tournamentId: tour.tournamentId, seed: 0n }))}>
            {t(lang, "startTournament")}
          </button>
        ) : null}
      </div>
      {error ? (
        <p class="error" role="alert">
          {error}
        </p>
      ) : null}
      <section aria-labelledby="entrants-h">
        <h3 id="entrants-h">
          {t(lang, "entrants")} ({tour.entrants.length}/{s.groups * s.groupSize})
        </h3>
        <ul class="entrants" data-testid="entrants">
          {tour.entrants.map((e) => (
            <li key={e.playerId} class={e.withdrawn ? "withdrawn" : ""}>
              {playerLink(e.playerId)} <span class="muted">{Math.round(e.rating)}</span>
              {e.bot ? <span class="mark">{t(lang, "botMark")}</span> : null}
              {e.withdrawn ? <span class="mark">{t(lang, "withdrawnMark")}</span> : null}
            </li>
          ))}
        </ul>
      </section>
      {tour.groups.length ? (
        <section aria-labelledby="standings-h">
          <h3 id="standings-h">{t(lang, "standings")}</h3>
          {tour.groups.map((g) => (
            <table class="table standings" key={g.group} data-testid={`standings-${g.group}`}>
              <caption>
                {t(lang, "group")} {g.group}
              </caption>
              <thead>
                <tr>
                  <th>#</th>
                  <th>{t(lang, "entrants")}</th>
                  <th>{t(lang, "played")}</th>
                  <th>{t(lang, "winsShort")}</th>
                  <th>{t(lang, "drawsShort")}</th>
                  <th>{t(lang, "lossesShort")}</th>
                  <th>{t(lang, "points")}</th>
                  <th>{t(lang, "sonnebornBerger")}</th>
                </tr>
              </thead>
              <tbody>
                {g.standings.map((st) => (
                  <tr key={st.playerId}>
                    <td>{st.place}</td>
                    <td>{playerLink(st.playerId)}</td>
                    <td>{st.played}</td>
                    <td>{st.wins}</td>
                    <td>{st.draws}</td>
                    <td>{st.losses}</td>
                    <td>
                      <strong>{st.points}</strong>
                    </td>
                    <td>{st.sonnebornBergerX2 / 2}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          ))}
        </section>
      ) : null}
      {s.knockout && tour.phase !== TournamentPhase.REGISTRATION ? (
        <section aria-labelledby="bracket-h">
          <h3 id="bracket-h">{t(lang, "bracket")}</h3>
          <div class="bracket" data-testid="bracket">
            {bracketColumns(tour.rounds, s.groups).map((col, i) => (
              <ol class="bracket-round" key={i} aria-label={stageWords(lang, col.length)}>
                <li class="bracket-title">{stageWords(lang, col.length)}</li>
                {col.map((m) => (
                  <li class="match" key={m.slot}>
                    {m.players.map((id, k) => (
                      <span key={k} class={m.winner && m.winner === id ? "winner" : ""}>
                        {playerLink(id)}
                      </span>
                    ))}
                    {m.board && !m.board.walkover ? <a href={`#/game/${encodeURIComponent(m.board.gameId)}`}>{t(lang, "watch")}</a> : null}
                  </li>
                ))}
              </ol>
            ))}
          </div>
        </section>
      ) : null}
      {tour.rounds.length ? (
        <section aria-labelledby="rounds-h">
          <h3 id="rounds-h">{t(lang, "rounds")}</h3>
          {[...tour.rounds].reverse().map((r) => (
            <div key={r.number} class="round" data-round={r.number}>
              <h4>
                {t(lang, "round")} {r.number}
                {r.stage === TournamentStage.KNOCKOUT ? ` · ${t(lang, "bracket")}` : ""}{" "}
                <span class="muted">
                  {t(lang, "starts")} {new Date(Number(r.startsMs)).toLocaleTimeString()}
                </span>
              </h4>
              <ul class="games" data-testid={`round-${r.number}`}>
                {r.boards.map((b) => {
                  const mineHere = !!me && (b.blackPlayerId === me || b.whitePlayerId === me);
                  return (
                    <li key={`${b.slot}-${b.attempt}-${b.group}`} data-game={b.gameId}>
                      {b.group ? (
                        <span class="muted">
                          {t(lang, "group")} {b.group}
                        </span>
                      ) : null}
                      <span>
                        <span class="dot black" /> {playerLink(b.blackPlayerId)} – <span class="dot white" /> {playerLink(b.whitePlayerId)}
                      </span>
                      <span class="outcome">{boardResultWords(lang, b)}</span>
                      {b.walkover ? null : mineHere && b.result === BoardResult.UNSPECIFIED ? (
                        <button onClick={() => play(b)}>{t(lang, "playGame")}</button>
                      ) : (
                        <a href={`#/game/${encodeURIComponent(b.gameId)}`}>{t(lang, "watch")}</a>
                      )}
                    </li>
                  );
                })}
              </ul>
            </div>
          ))}
        </section>
      ) : null}
    </main>
  );
}

/** A knockout column's name from its matches: the final, the semi-finals, the last 8... */
function stageWords(lang: Lang, matches: number): string {
  if (matches === 1) return t(lang, "finalRound");
  if (matches === 2) return t(lang, "semiFinal");
  return tf(lang, "roundOf", { n: String(matches * 2) });
}

/** The games' settings as the lobby words them, less the colour (the draw decides it). */
function gameWords(lang: Lang, g: GameSettings): string {
  const colour = `${t(lang, "colour")}:`;
  return describe(lang, g)
    .split(" · ")
    .filter((part) => !part.startsWith(colour))
    .join(" · ");
}

function boardResultWords(lang: Lang, b: TournamentBoard): string {
  if (b.walkover) return t(lang, "walkover");
  const forfeit = b.forfeit ? ` (${t(lang, "byForfeit")})` : "";
  switch (b.result) {
    case BoardResult.BLACK_WINS:
      return `${t(lang, "blackWins")}${forfeit}`;
    case BoardResult.WHITE_WINS:
      return `${t(lang, "whiteWins")}${forfeit}`;
    case BoardResult.DRAW:
      return t(lang, "outcomeDraw");
    case BoardResult.BOTH_LOSE:
      return t(lang, "bothLose");
    case BoardResult.NO_RESULT:
      return t(lang, "noResult");
    default:
      return t(lang, "notPlayedYet");
  }
}
