// The lobby: open games to join and games in play to watch (refreshed every two seconds),
// and the form that creates a game.
import { useEffect, useState } from "preact/hooks";
import { create } from "@bufbuild/protobuf";
import type { JSX } from "preact";
import {
  ColorChoice,
  GameSettingsSchema,
  Parity,
  RefereeMode,
  TimeControlSchema,
  failure,
  requestId,
  sha256Hex,
  type GameClient,
  type Player,
  type PlayerClient,
  type GameSettings,
  type GameSummary,
  type Matched,
  type TimeControl,
} from "./client.js";
import { BoardSizeSelect, checked, num } from "./forms.js";
import { t, type Key, type Lang } from "./i18n.js";
import { loadSeat, saveSeat } from "./prefs.js";
import { withRetry, type PlayerFeed } from "./feed.js";
import { rankLabel } from "./rating.js";
import { formatMs, refusalKey } from "./state.js";

const REFRESH_MS = 2000;

/** What the lobby shows of an open game beyond its row. */
interface Listed {
  settings: GameSettings;
  /** The host's name, when the host signed in. */
  host?: string;
}

export function Lobby(p: {
  client: GameClient;
  players: PlayerClient;
  signedIn: boolean;
  lang: Lang;
  go: (gameId: string) => void;
  /** The signed-in player's feed (quick play's match arrives on it). */
  feed?: PlayerFeed;
}): JSX.Element {
  const { client, lang } = p;
  const [leaders, setLeaders] = useState<Player[]>([]);
  const [open, setOpen] = useState<GameSummary[]>([]);
  const [playing, setPlaying] = useState<GameSummary[]>([]);
  const [settings, setSettings] = useState<Record<string, Listed>>({});
  const [error, setError] = useState("");
  // An action's refusal stays until dismissed or replaced (the server's words in its
  // tooltip); the list's own failure goes with the next refresh that works.
  const [errorTitle, setErrorTitle] = useState<string | undefined>();
  const [listError, setListError] = useState("");
  const refused = (e: unknown) => {
    const f = failure(e);
    setError(t(lang, refusalKey(f)));
    setErrorTitle(`${f.message}${f.reason ? ` (${f.reason})` : ""}`);
  };

  useEffect(() => {
    let alive = true;
    const known: Record<string, Listed> = {};
    const refresh = async () => {
      try {
        const r = await client.listGames({ limit: 50 });
        if (!alive) return;
        setOpen(r.open);
        setPlaying(r.playing);
        const board = await p.players.listPlayers({ boardSize: 9, limit: 10 });
        if (alive) setLeaders(board.players);
        setListError("");
        // The lobby rows carry size and rules; the rest of the settings (time control,
        // colours, handicap) and the host come from each game once (they never change).
        for (const g of r.open.slice(0, 20)) {
          if (known[g.gameId]) continue;
          const s = await client.getGame({ gameId: g.gameId });
          if (s.state?.settings) known[g.gameId] = { settings: s.state.settings, host: s.state.hostPlayer?.name };
        }
        if (alive) setSettings({ ...known });
      } catch (e) {
        if (alive) setListError(t(lang, refusalKey(failure(e))));
      }
    };
    void refresh();
    const timer = setInterval(refresh, REFRESH_MS);
    return () => {
      alive = false;
      clearInterval(timer);
    };
  }, [client]);

  const join = async (g: GameSummary, guess?: Parity) => {
    try {
      const r = await client.joinGame({ gameId: g.gameId, requestId: requestId(), nigiriGuess: guess ?? Parity.UNSPECIFIED });
      saveSeat(g.gameId, { token: r.seatToken, seat: "guest" });
      p.go(g.gameId);
    } catch (e) {
      refused(e);
    }
  };

  /** The host withdraws its own open game (its seat token is in this browser). */
  const cancel = async (g: GameSummary) => {
    try {
      await client.cancelGame({ mutation: { gameId: g.gameId, requestId: requestId() } });
      setOpen((gs) => gs.filter((x) => x.gameId !== g.gameId));
    } catch (e) {
      refused(e);
    }
  };

  return (
    <main class="lobby">
      {error ? (
        <p class="error dismissable" role="alert" data-testid="lobby-error" title={errorTitle}>
          <span>{error}</span>
          <button
            class="close"
            aria-label={t(lang, "dismiss")}
            onClick={() => {
              setError("");
              setErrorTitle(undefined);
            }}
          >
            ×
          </button>
        </p>
      ) : null}
      {listError ? (
        <p class="error" role="status">
          {listError}
        </p>
      ) : null}
      <section aria-labelledby="open-h">
        <h2 id="open-h">{t(lang, "openGames")}</h2>
        {open.length === 0 ? <p class="muted">{t(lang, "noOpenGames")}</p> : null}
        <ul class="games" data-testid="open-games">
          {open.map((g) => {
            const listed = settings[g.gameId];
            const s = listed?.settings;
            const nigiri = s?.colorChoice === ColorChoice.NIGIRI;
            // The host's own game: opened or withdrawn, not joined.
            const mine = loadSeat(g.gameId)?.seat === "host";
            return (
              <li key={g.gameId} data-game={g.gameId}>
                <span class="size">
                  {g.boardSize}×{g.boardSize}
                </span>
                <span class="host">{listed?.host ?? t(lang, "anonymous")}</span>
                <span>{s ? describe(lang, s) : g.rules}</span>
                {mine ? (
                  <>
                    <a class="button" href={`#/game/${g.gameId}`}>
                      {t(lang, "openGame")}
                    </a>
                    <button class="danger" onClick={() => cancel(g)} aria-label={`${t(lang, "cancelGame")} ${g.gameId}`}>
                      {t(lang, "cancel")}
                    </button>
                  </>
                ) : nigiri ? (
                  <>
                    <button onClick={() => join(g, Parity.ODD)}>{t(lang, "guessOdd")}</button>
                    <button onClick={() => join(g, Parity.EVEN)}>{t(lang, "guessEven")}</button>
                  </>
                ) : (
                  <button onClick={() => join(g)} aria-label={`${t(lang, "join")} ${g.gameId}`}>
                    {t(lang, "join")}
                  </button>
                )}
              </li>
            );
          })}
        </ul>
      </section>
      <section aria-labelledby="playing-h">
        <h2 id="playing-h">{t(lang, "gamesInPlay")}</h2>
        {playing.length === 0 ? <p class="muted">{t(lang, "noGamesInPlay")}</p> : null}
        <ul class="games" data-testid="playing-games">
          {playing.map((g) => (
            <li key={g.gameId} data-game={g.gameId}>
              <span class="size">
                {g.boardSize}×{g.boardSize}
              </span>
              <span>
                {t(lang, "move")} {g.moveNumber}
              </span>
              <a href={`#/game/${g.gameId}`}>{t(lang, "watch")}</a>
            </li>
          ))}
        </ul>
      </section>
      <section aria-labelledby="leaders-h">
        <h2 id="leaders-h">
          {t(lang, "leaderboard")} 9×9
        </h2>
        {leaders.length === 0 ? <p class="muted">{t(lang, "noRatings")}</p> : null}
        <ol class="leaders" data-testid="leaderboard">
          {leaders.map((pl) => {
            const r = pl.ratings[0];
            return (
              <li key={pl.playerId}>
                <a class="name" href={`#/player/${encodeURIComponent(pl.playerId)}`}>
                  {pl.name}
                </a>{" "}
                <span>{r ? Math.round(r.rating) : ""}</span> <span class="muted">{rankLabel(r)}</span>
                {p.signedIn ? (
                  <a class="challenge-link" href={`#/player/${encodeURIComponent(pl.playerId)}/challenge`}>
                    {t(lang, "challenge")}
                  </a>
                ) : null}
              </li>
            );
          })}
        </ol>
      </section>
      {p.signedIn && p.feed ? <QuickPlay client={client} players={p.players} feed={p.feed} lang={lang} go={p.go} onError={setError} /> : null}
      <CreateForm client={client} lang={lang} signedIn={p.signedIn} go={p.go} onError={setError} />
    </main>
  );
}

export function describe(lang: Lang, s: GameSettings): string {
  const tc = s.timeControl?.kind;
  let clock = t(lang, "tcNone");
  if (tc?.case === "byoYomi") clock = `${formatMs(Number(tc.value.mainMs))} + ${tc.value.periods}×${Number(tc.value.periodMs) / 1000}s`;
  else if (tc?.case === "fischer") clock = `${formatMs(Number(tc.value.mainMs))} + ${Number(tc.value.incrementMs) / 1000}s`;
  else if (tc?.case === "canadian") clock = `${formatMs(Number(tc.value.mainMs))} + ${tc.value.stones}/${formatMs(Number(tc.value.periodMs))}`;
  else if (tc?.case === "absolute") clock = formatMs(Number(tc.value.mainMs));
  const colour: Record<number, Key> = {
    [ColorChoice.HOST_BLACK]: "white",
    [ColorChoice.HOST_WHITE]: "black",
    [ColorChoice.RANDOM]: "random",
    [ColorChoice.NIGIRI]: "nigiri",
  };
  // The variant has no komi or colour to offer: bids decide both.
  const parts = s.freeSeats
    ? [clock, t(lang, "lobbyFreeSeats")]
    : [clock, `${t(lang, "komi")} ${s.komi ?? "—"}`, `${t(lang, "colour")}: ${t(lang, colour[s.colorChoice] ?? "random")}`];
  if (s.handicap) parts.push(`${t(lang, "handicap")} ${s.handicap}`);
  if (s.rated) parts.push(t(lang, "rated"));
  parts.push(t(lang, s.mode === RefereeMode.TOURNAMENT ? "tournament" : "casual"));
  return parts.join(" · ");
}

/** Quick play: a rated 9x9 seek (5 to 15 minutes' main time, then byo-yomi), the match
 * and the seat from the player's feed, then the game. */
const QUICK = { boardSizes: [9], mainTimeMinS: 300, mainTimeMaxS: 900, rated: true };

function QuickPlay(p: {
  client: GameClient;
  players: PlayerClient;
  feed: PlayerFeed;
  lang: Lang;
  go: (id: string) => void;
  onError: (m: string) => void;
}): JSX.Element {
  const { lang } = p;
  const [seeking, setSeeking] = useState<{ stop: AbortController; seekId?: string } | null>(null);

  const start = async () => {
    const stop = new AbortController();
    setSeeking({ stop });
    let seekId: string | undefined;
    let matched = false;
    // The app's feed carries the match; one that arrives while the seek call is still
    // answering (the partner was waiting) is kept until the seek's id is known.
    const matches: Matched[] = [];
    let wake = () => {};
    const off = p.feed.on((ev) => {
      if (ev.event.case === "matched" && ev.event.value.seatToken) {
        matches.push(ev.event.value);
        wake();
      }
    });
    const aborted = new Promise<void>((r) => stop.signal.addEventListener("abort", () => r()));
    try {
      const me = (await p.players.whoAmI({})).player?.playerId;
      // The player must be online (the feed live) before seeking, as the server pairs at once.
      await p.feed.whenLive(stop.signal);
      seekId = (await p.players.seek(QUICK)).seekId;
      if (stop.signal.aborted) return; // cancelled while the seek was being made
      setSeeking({ stop, seekId });
      let m: Matched | undefined;
      while (!(m = matches.find((x) => x.seekId === seekId)) && !stop.signal.aborted) {
        await Promise.race([new Promise<void>((r) => (wake = r)), aborted]);
      }
      if (!m || stop.signal.aborted) return;
      matched = true;
      const gameId = m.gameId;
      const game = await withRetry(() => p.client.getGame({ gameId }));
      const host = game.state?.hostPlayer?.playerId === me;
      saveSeat(m.gameId, { token: m.seatToken, seat: host ? "host" : "guest" });
      stop.abort();
      p.go(m.gameId);
    } catch (err) {
      if (!stop.signal.aborted) p.onError(failure(err).message);
    } finally {
      // A seek left behind would be matched without this page, and a new one from this
      // page would wait while its partner got the old one's game: it is withdrawn before
      // the button comes back. (Matched meanwhile: the game is in the lobby's list.)
      off();
      if (seekId && !matched) await p.players.cancelSeek({ seekId }).catch(() => undefined);
      setSeeking(null);
    }
  };

  const cancel = () => {
    seeking?.stop.abort();
  };

  return (
    <section aria-labelledby="quick-h" class="quick">
      <h2 id="quick-h">{t(lang, "quickPlay")}</h2>
      {seeking ? (
        <p role="status" data-testid="seeking">
          {t(lang, "seeking")}{" "}
          <button type="button" onClick={cancel}>
            {t(lang, "cancel")}
          </button>
        </p>
      ) : (
        <button type="button" onClick={start}>
          {t(lang, "quickPlayButton")}
        </button>
      )}
    </section>
  );
}

type TcKind = "none" | "byoYomi" | "fischer" | "canadian" | "absolute";

function CreateForm(p: {
  client: GameClient;
  lang: Lang;
  signedIn: boolean;
  go: (id: string) => void;
  onError: (m: string) => void;
}): JSX.Element {
  const { lang } = p;
  const [size, setSize] = useState(9);
  const [komi, setKomi] = useState(7.5);
  const [handicap, setHandicap] = useState(0);
  const [freeSeats, setFreeSeats] = useState(false);
  const [free, setFree] = useState(false);
  const [colour, setColour] = useState<ColorChoice>(ColorChoice.HOST_BLACK);
  const [tc, setTc] = useState<TcKind>("byoYomi");
  const [mainMin, setMainMin] = useState(10);
  const [periods, setPeriods] = useState(3);
  const [periodS, setPeriodS] = useState(30);
  const [incS, setIncS] = useState(10);
  const [stones, setStones] = useState(10);
  const [mode, setMode] = useState<RefereeMode>(RefereeMode.CASUAL);
  const [rated, setRated] = useState(false);
  const [busy, setBusy] = useState(false);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    try {
      const main = BigInt(Math.round(mainMin * 60_000));
      const tcMsg: TimeControl = create(TimeControlSchema, {
        kind:
          tc === "none"
            ? { case: "none", value: {} }
            : tc === "absolute"
              ? { case: "absolute", value: { mainMs: main } }
              : tc === "fischer"
                ? { case: "fischer", value: { mainMs: main, incrementMs: BigInt(incS * 1000) } }
                : tc === "canadian"
                  ? { case: "canadian", value: { mainMs: main, stones, periodMs: BigInt(periodS * 1000) } }
                  : { case: "byoYomi", value: { mainMs: main, periods, periodMs: BigInt(periodS * 1000) } },
      });
      const settings = create(GameSettingsSchema, {
        boardSize: size,
        rules: "chinese",
        komi,
        handicap,
        freeHandicap: free,
        timeControl: tcMsg,
        colorChoice: colour,
        mode,
        rated: rated && p.signedIn,
        // Seed 002's variant: free seat stones, then sealed komi bids (no handicap, no nigiri).
        freeSeats: freeSeats ? { noFirstLine: false, halfPointBids: true } : undefined,
      });
      let nigiri: { stones: number; nonce: string } | undefined;
      let commitment = "";
      if (colour === ColorChoice.NIGIRI) {
        // The host's handful, committed now and revealed after the guest's guess (C1).
        const r = new Uint32Array(1);
        crypto.getRandomValues(r);
        nigiri = { stones: 1 + (r[0]! % 40), nonce: requestId() };
        commitment = await sha256Hex(`${nigiri.stones}:${nigiri.nonce}`);
      }
      const r = await p.client.createGame({ settings, requestId: requestId(), nigiriCommitment: commitment });
      saveSeat(r.gameId, { token: r.seatToken, seat: "host", nigiri });
      p.go(r.gameId);
    } catch (err) {
      p.onError(failure(err).message);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="create-h">
      <h2 id="create-h">{t(lang, "createGame")}</h2>
      <form class="create" onSubmit={submit}>
        <label>
          {t(lang, "boardSize")}
          <BoardSizeSelect name="size" value={size} onChange={setSize} />
        </label>
        <label>
          {t(lang, "komi")}
          <input name="komi" type="number" step="0.5" value={komi} onInput={num(setKomi)} />
        </label>
        <label>
          {t(lang, "handicap")}
          <select name="handicap" value={handicap} onChange={num(setHandicap)}>
            {[0, 2, 3, 4, 5, 6, 7, 8, 9].map((h) => (
              <option key={h} value={h}>
                {h}
              </option>
            ))}
          </select>
        </label>
        <label class="check">
          <input type="checkbox" name="free" checked={free} onChange={checked(setFree)} />
          {t(lang, "freeHandicap")}
        </label>
        <label class="check">
          <input type="checkbox" name="freeSeats" checked={freeSeats} onChange={checked(setFreeSeats)} />
          {t(lang, "freeSeats")}
        </label>
        <label>
          {t(lang, "colour")}
          <select name="colour" value={colour} onChange={num((v) => setColour(v as ColorChoice))}>
            <option value={ColorChoice.HOST_BLACK}>{t(lang, "black")}</option>
            <option value={ColorChoice.HOST_WHITE}>{t(lang, "white")}</option>
            <option value={ColorChoice.RANDOM}>{t(lang, "random")}</option>
            <option value={ColorChoice.NIGIRI}>{t(lang, "nigiri")}</option>
          </select>
        </label>
        <label>
          {t(lang, "timeControl")}
          <select name="tc" value={tc} onChange={(e) => setTc((e.target as HTMLSelectElement).value as TcKind)}>
            <option value="none">{t(lang, "tcNone")}</option>
            <option value="byoYomi">{t(lang, "tcByoYomi")}</option>
            <option value="fischer">{t(lang, "tcFischer")}</option>
            <option value="canadian">{t(lang, "tcCanadian")}</option>
            <option value="absolute">{t(lang, "tcAbsolute")}</option>
          </select>
        </label>
        {tc !== "none" ? (
          <label>
            {t(lang, "mainMinutes")}
            <input name="main" type="number" min="0" step="0.1" value={mainMin} onInput={num(setMainMin)} />
          </label>
        ) : null}
        {tc === "byoYomi" ? (
          <label>
            {t(lang, "periods")}
            <input name="periods" type="number" min="1" value={periods} onInput={num(setPeriods)} />
          </label>
        ) : null}
        {tc === "canadian" ? (
          <label>
            {t(lang, "stones")}
            <input name="stones" type="number" min="1" value={stones} onInput={num(setStones)} />
          </label>
        ) : null}
        {tc === "byoYomi" || tc === "canadian" ? (
          <label>
            {t(lang, "periodSeconds")}
            <input name="period" type="number" min="1" value={periodS} onInput={num(setPeriodS)} />
          </label>
        ) : null}
        {tc === "fischer" ? (
          <label>
            {t(lang, "incrementSeconds")}
            <input name="increment" type="number" min="0" value={incS} onInput={num(setIncS)} />
          </label>
        ) : null}
        <label>
          {t(lang, "mode")}
          <select name="mode" value={mode} onChange={num((v) => setMode(v as RefereeMode))}>
            <option value={RefereeMode.CASUAL}>{t(lang, "casual")}</option>
            <option value={RefereeMode.TOURNAMENT}>{t(lang, "tournament")}</option>
          </select>
        </label>
        <label class="check" title={p.signedIn ? undefined : t(lang, "ratedNeedsSignIn")}>
          <input
            type="checkbox"
            name="rated"
            checked={rated && p.signedIn}
            disabled={!p.signedIn}
            onChange={checked(setRated)}
          />
          {t(lang, "rated")}
        </label>
        <button type="submit" disabled={busy}>
          {t(lang, "create")}
        </button>
      </form>
    </section>
  );
}
