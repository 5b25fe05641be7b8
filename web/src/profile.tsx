// A player's page (#/player/<id>): name and marks, ratings per board size (the rank with
// "?" while provisional), a rating-history chart per size, their finished games a page at
// a time (each to watch again or download), and a Challenge button for another player.
import { useEffect, useState } from "preact/hooks";
import { create } from "@bufbuild/protobuf";
import type { JSX } from "preact";
import {
  Color,
  WatchPlayerResponseSchema,
  failure,
  type GameClient,
  type Player,
  type PlayerClient,
  type PlayerGame,
  type RatingChange,
} from "./client.js";
import { ChallengeForm } from "./challenges.js";
import type { PlayerFeed } from "./feed.js";
import { t, type Lang } from "./i18n.js";
import { outcomeKey, rankLabel, ratingChart } from "./rating.js";
import { downloadSgf } from "./sgf.js";

const PAGE_SIZE = 20;
const HISTORY_LIMIT = 200;

export function ProfilePage(p: {
  players: PlayerClient;
  client: GameClient;
  feed?: PlayerFeed;
  /** The signed-in player's id, if any. */
  me?: string;
  playerId: string;
  /** Opened from a "Challenge" link: the form shows at once. */
  challenge: boolean;
  lang: Lang;
}): JSX.Element {
  const { lang, playerId } = p;
  const [player, setPlayer] = useState<Player | undefined>();
  const [error, setError] = useState("");
  const [notFound, setNotFound] = useState(false);
  const [challenging, setChallenging] = useState(p.challenge);

  useEffect(() => {
    let alive = true;
    setPlayer(undefined);
    p.players
      .getPlayer({ playerId })
      .then((r) => alive && setPlayer(r.player))
      .catch((e) => {
        if (!alive) return;
        const f = failure(e);
        if (f.kind === "not_found") setNotFound(true);
        else setError(f.message);
      });
    return () => {
      alive = false;
    };
  }, [playerId]);
  useEffect(() => setChallenging(p.challenge), [p.challenge, playerId]);

  if (notFound)
    return (
      <main class="profile">
        <p class="error" role="alert">
          {t(lang, "playerNotFound")}
        </p>
      </main>
    );
  if (!player)
    return (
      <main class="profile">
        <p class="muted">{error || t(lang, "loading")}</p>
      </main>
    );
  const canChallenge = !!p.me && !!p.feed && p.me !== player.playerId;
  const sizes = [...player.ratings].sort((a, b) => a.boardSize - b.boardSize);
  return (
    <main class="profile" data-testid="profile">
      <h2 class="profile-name">
        {player.name}
        {player.bot ? <span class="mark">{t(lang, "botMark")}</span> : null}
        {player.guest ? <span class="mark">{t(lang, "guestMark")}</span> : null}
        {canChallenge ? (
          <button type="button" aria-expanded={challenging} onClick={() => setChallenging(!challenging)}>
            {t(lang, "challenge")}
          </button>
        ) : null}
      </h2>
      {canChallenge && challenging ? (
        <ChallengeForm
          players={p.players}
          lang={lang}
          opponent={{ id: player.playerId, name: player.name }}
          onSent={(c) => {
            setChallenging(false);
            // The server tells the challenged, not the challenger: the inbox hears of it here.
            if (c) p.feed!.tell(create(WatchPlayerResponseSchema, { event: { case: "challengeReceived", value: c } }));
          }}
        />
      ) : null}
      <section aria-labelledby="ratings-h">
        <h3 id="ratings-h">{t(lang, "ratings")}</h3>
        {sizes.length === 0 ? (
          <p class="muted">{t(lang, "noRatings")}</p>
        ) : (
          <>
            <table class="table" data-testid="ratings">
              <thead>
                <tr>
                  <th>{t(lang, "boardSize")}</th>
                  <th>{t(lang, "rating")}</th>
                  <th>{t(lang, "deviation")}</th>
                  <th>{t(lang, "ratedGamesAxis")}</th>
                </tr>
              </thead>
              <tbody>
                {sizes.map((r) => (
                  <tr key={r.boardSize} data-size={r.boardSize}>
                    <td>
                      {r.boardSize}×{r.boardSize}
                    </td>
                    <td>
                      {Math.round(r.rating)} <strong>{rankLabel(r)}</strong>
                    </td>
                    <td>±{Math.round(r.deviation)}</td>
                    <td>{r.games}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            {sizes.some((r) => r.provisional) ? <p class="muted small">{t(lang, "provisionalNote")}</p> : null}
            {sizes.map((r) => (
              <History key={r.boardSize} players={p.players} playerId={playerId} size={r.boardSize} lang={lang} />
            ))}
          </>
        )}
      </section>
      <Games players={p.players} client={p.client} playerId={playerId} lang={lang} />
    </main>
  );
}

/** One board size's rating history as a chart. */
function History(p: { players: PlayerClient; playerId: string; size: number; lang: Lang }): JSX.Element {
  const { lang, size } = p;
  const [changes, setChanges] = useState<RatingChange[] | undefined>();
  const [error, setError] = useState("");
  useEffect(() => {
    let alive = true;
    p.players
      .getRatingHistory({ playerId: p.playerId, boardSize: size, limit: HISTORY_LIMIT })
      .then((r) => alive && setChanges(r.changes))
      .catch((e) => alive && setError(failure(e).message));
    return () => {
      alive = false;
    };
  }, [p.playerId, size]);
  const title = `${t(lang, "ratingHistory")} ${size}×${size}`;
  return (
    <figure class="chart" data-testid={`history-${size}`}>
      <figcaption>{title}</figcaption>
      {error ? <p class="error">{error}</p> : changes ? <RatingChart changes={changes} title={title} lang={lang} /> : null}
    </figure>
  );
}

export function RatingChart(p: { changes: RatingChange[]; title: string; lang: Lang }): JSX.Element {
  const c = ratingChart(p.changes);
  const { plot } = c;
  const last = c.points[c.points.length - 1];
  return (
    <svg
      class="rating-chart"
      viewBox={`0 0 ${c.width} ${c.height}`}
      role="img"
      aria-label={`${p.title}: ${c.points.map((q) => Math.round(q.rating)).join(", ")}`}
    >
      <defs>
        <clipPath id={`plot-${p.title.replace(/\W/g, "")}`}>
          <rect x={plot.left} y={plot.top} width={plot.right - plot.left} height={plot.bottom - plot.top} />
        </clipPath>
      </defs>
      <g class="axis">
        <line x1={plot.left} y1={plot.bottom} x2={plot.right} y2={plot.bottom} />
        <line x1={plot.left} y1={plot.top} x2={plot.left} y2={plot.bottom} />
        {c.yTicks.map((tk) => (
          <g key={`y${tk.value}`}>
            <line class="grid" x1={plot.left} y1={tk.y} x2={plot.right} y2={tk.y} />
            <text x={plot.left - 6} y={tk.y} text-anchor="end" dominant-baseline="middle">
              {tk.value}
            </text>
          </g>
        ))}
        {c.xTicks.map((tk) => (
          <text key={`x${tk.value}`} x={tk.x} y={plot.bottom + 14} text-anchor="middle">
            {tk.value}
          </text>
        ))}
        <text class="axis-label" x={(plot.left + plot.right) / 2} y={c.height - 4} text-anchor="middle">
          {t(p.lang, "ratedGamesAxis")}
        </text>
        <text class="axis-label" transform={`translate(11 ${(plot.top + plot.bottom) / 2}) rotate(-90)`} text-anchor="middle">
          {t(p.lang, "rating")}
        </text>
      </g>
      <g clip-path={`url(#plot-${p.title.replace(/\W/g, "")})`}>
        {c.band ? <path class="band" d={c.band} /> : null}
        <path class="line" d={c.line} />
        {c.points.map((q) => (
          <circle key={q.game} class="pt" cx={q.x} cy={q.y} r={3}>
            <title>
              {Math.round(q.rating)}
              {q.timeMs ? ` · ${new Date(q.timeMs).toLocaleString()}` : ""}
            </title>
          </circle>
        ))}
      </g>
      {last ? (
        <text class="last" x={plot.right} y={plot.top + 4} text-anchor="end" dominant-baseline="hanging">
          {Math.round(last.rating)}
        </text>
      ) : null}
    </svg>
  );
}

/** The player's finished games, newest first, a page at a time. */
function Games(p: { players: PlayerClient; client: GameClient; playerId: string; lang: Lang }): JSX.Element {
  const { lang } = p;
  const [games, setGames] = useState<PlayerGame[]>([]);
  const [next, setNext] = useState("");
  const [loaded, setLoaded] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState("");

  const load = async (pageToken: string) => {
    setBusy(true);
    try {
      const r = await p.players.listPlayerGames({ playerId: p.playerId, pageSize: PAGE_SIZE, pageToken });
      setGames((gs) => (pageToken ? [...gs, ...r.games] : r.games));
      setNext(r.nextPageToken);
      setError("");
    } catch (e) {
      setError(`${t(lang, "gamesUnavailable")} ${failure(e).message}`);
    } finally {
      setLoaded(true);
      setBusy(false);
    }
  };
  useEffect(() => {
    setGames([]);
    setNext("");
    void load("");
  }, [p.playerId]);

  const sgf = async (gameId: string) => {
    try {
      await downloadSgf(p.client, gameId);
    } catch (e) {
      setError(failure(e).message);
    }
  };

  return (
    <section aria-labelledby="games-h">
      <h3 id="games-h">{t(lang, "finishedGames")}</h3>
      {error ? (
        <p class="error" role="alert">
          {error}
        </p>
      ) : null}
      {loaded && !error && games.length === 0 ? <p class="muted">{t(lang, "noFinishedGames")}</p> : null}
      <ul class="games" data-testid="player-games">
        {games.map((g) => {
          const outcome = outcomeKey(g);
          return (
            <li key={g.gameId} data-game={g.gameId}>
              <span class="muted">{new Date(Number(g.endedMs)).toLocaleDateString()}</span>
              <span class="size">
                {g.boardSize}×{g.boardSize}
              </span>
              <span class={`dot ${g.color === Color.BLACK ? "black" : "white"}`} aria-label={t(lang, g.color === Color.BLACK ? "black" : "white")} />
              <span>
                {t(lang, "opponent")}:{" "}
                {g.opponent?.playerId ? <a href={`#/player/${encodeURIComponent(g.opponent.playerId)}`}>{g.opponent.name}</a> : t(lang, "anonymous")}
              </span>
              <span class={`outcome ${outcome ?? ""}`}>
                {outcome ? `${t(lang, outcome)} ` : ""}
                {g.result}
              </span>
              <span class="muted">{t(lang, g.rated ? "rated" : "casual")}</span>
              <a href={`#/game/${encodeURIComponent(g.gameId)}`}>{t(lang, "openGame")}</a>
              <button type="button" class="plain" aria-label={t(lang, "sgf")} title={t(lang, "sgf")} onClick={() => sgf(g.gameId)}>
                SGF
              </button>
            </li>
          );
        })}
      </ul>
      {next ? (
        <button type="button" disabled={busy} onClick={() => load(next)}>
          {t(lang, "moreGames")}
        </button>
      ) : null}
    </section>
  );
}
