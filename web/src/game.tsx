// One game: the board, both clocks, the controls of the player's seat (or a spectator's
// view), scoring, the move list. The state comes from WatchGame (resumed from the last
// event seen after a reload or a dropped connection) and from each call's answer.
//
// Nothing the player does is lost to the network: a call that cannot reach the server is
// kept, shown as pending, and sent again (same request id, so the server answers a retry
// with its first answer) until the connection returns.
import { backoffMs, publishedPolicy } from "./retry.js";
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import type { JSX } from "preact";
import {
  Code,
  Color,
  ConnectError,
  EndReason,
  Parity,
  Phase,
  failure,
  requestId,
  type CommandResult,
  type Failure,
  type GameClient,
  type GameState,
  type PlayerClient,
} from "./client.js";
import { Board } from "./board.js";
import { t, tf, type Key, type Lang } from "./i18n.js";
import { forgetSeat, loadPlayer, loadRecord, loadSeat, saveRecord, saveSeat, type Prefs, type SeatRecord } from "./prefs.js";
import { sha256Hex } from "./lobby.js";
import { sayCall, stoneSound } from "./sound.js";
import {
  announcement,
  bidOutcome,
  displayClock,
  empty,
  eventNotice,
  fold,
  foldResult,
  foldState,
  formatMs,
  myColor,
  needsConfirm,
  nextSeatStone,
  pointName,
  presenceOf,
  presenceView,
  ratingChangeFor,
  refusalKey,
  requestsOf,
  seatOf,
  toggleDead,
  type Folded,
  type MoveEntry,
} from "./state.js";

const RECONNECT_MS = 1000;
/** A call that failed on the network or as unavailable is sent again (same request id: the
 * server answers a retry with the first answer), waiting as the published retry policy
 * says between tries, and never given up while the page is open. */
const RETRY = publishedPolicy();
/** Events older than this when they arrive are a replay (a reload, a reconnect): folded,
 * but not announced again. */
const FRESH_MS = 15_000;

type Colour = "B" | "W";
interface Message {
  text: string;
  /** The server's own words and code, for the curious (a tooltip). */
  title?: string;
  kind: "error" | "info";
}
/** A call made and not yet answered. */
interface Pending {
  id: number;
  /** What it is, in words ("Move D5", "Pass"). */
  label: string;
  /** A move's stone, drawn on the board meanwhile. */
  stone?: { x: number; y: number; color: Colour };
  /** Whether the server has been unreachable for it at least once. */
  failed: boolean;
}

export function GamePage(p: { client: GameClient; prefs: Prefs; gameId: string; players?: PlayerClient }): JSX.Element {
  const { client, prefs, gameId } = p;
  const lang = prefs.lang;
  const [f, setF] = useState<Folded>(() => ({ ...empty(), ...(loadRecord(gameId) ?? {}) }));
  const fRef = useRef(f);
  fRef.current = f;
  const [seat, setSeat] = useState<SeatRecord | undefined>(() => loadSeat(gameId));
  const [notFound, setNotFound] = useState(false);
  const [offline, setOffline] = useState(false);
  const [message, setMessage] = useState<Message | undefined>();
  const [notice, setNotice] = useState<string | undefined>();
  const [call, setCall] = useState<{ color: Colour; text: string } | undefined>();
  const [confirmResign, setConfirmResign] = useState(false);
  const [handicapStones, setHandicapStones] = useState<{ x: number; y: number }[]>([]);
  const [candidate, setCandidate] = useState<{ x: number; y: number } | undefined>();
  const [pending, setPending] = useState<Pending[]>([]);
  const [, tick] = useState(0);
  const prefsRef = useRef(prefs);
  prefsRef.current = prefs;
  /** Calls waiting to be sent again, woken when the connection returns. */
  const wakers = useRef<(() => void)[]>([]);
  const alive = useRef(true);
  const nextPending = useRef(0);

  const apply = (g: Folded) => {
    fRef.current = g;
    setF(g);
    saveRecord(gameId, g);
  };
  const wake = () => {
    for (const w of wakers.current.splice(0)) w();
  };

  useEffect(() => {
    alive.current = true;
    return () => {
      alive.current = false;
      wake();
    };
  }, []);

  /** A new event, from the stream or from a call's answer (told once either way). */
  const onEvent = (e: Parameters<typeof announcement>[0]) => {
    const pr = prefsRef.current;
    const kind = e.kind;
    if (kind === "move_played" && pr.sound) stoneSound();
    const color: Colour = e.color === Color.BLACK ? "B" : "W";
    // The referee's call is about the player thinking: it goes when that player moves
    // or the game ends.
    if (kind === "game_ended") setCall(undefined);
    else if (kind === "move_played" || kind === "passed" || kind === "move_voided") {
      setCall((c) => (c && c.color === color ? undefined : c));
    }
    const c = announcement(e);
    if (c) {
      const words = pr.sound ? sayCall(pr.lang, c.seconds, c.count) : c.count !== undefined ? String(c.count) : `${c.seconds}s`;
      setCall({ color: c.color, text: `${c.color === "B" ? t(pr.lang, "black") : t(pr.lang, "white")}: ${words}` });
    }
    const serverNow = Date.now() + fRef.current.offsetMs;
    const n = eventNotice(e);
    if (n && Number(e.timeMs) >= serverNow - FRESH_MS) {
      setNotice(tf(pr.lang, n.key, { who: colourName(pr.lang, n.who) }));
    }
  };

  // The event stream, resumed from the last event seen; reconnects until the game ends.
  useEffect(() => {
    const abort = new AbortController();
    const run = async () => {
      while (!abort.signal.aborted) {
        try {
          const got = await client.getGame({ gameId }, { signal: abort.signal });
          if (got.state) apply(foldState(fRef.current, got.state, Date.now()));
          setOffline(false);
          setNotFound(false);
          // Back: whatever waits to be sent goes now.
          wake();
          const stream = client.watchGame({ gameId, sinceSeq: BigInt(fRef.current.seq) }, { signal: abort.signal });
          for await (const r of stream) {
            setOffline(false);
            if (!r.state) continue;
            const before = fRef.current;
            // An item without an event is a change outside the log (a seat's presence).
            apply(fold(before, r.event, r.state, Date.now()));
            if (r.event && Number(r.event.seq) > before.seq) onEvent(r.event);
          }
          if (fRef.current.state?.phase === Phase.FINISHED) return;
        } catch (e) {
          if (abort.signal.aborted) return;
          const why = failure(e);
          // A malformed id is refused like a missing one: nothing to wait for either way.
          if (why.kind === "not_found" || why.kind === "refused") {
            setNotFound(true);
            return;
          }
          setOffline(true);
        }
        await new Promise((r) => setTimeout(r, RECONNECT_MS));
      }
    };
    void run();
    return () => abort.abort();
  }, [client, gameId]);

  // The clocks' display ticks locally; the server's events are the truth.
  useEffect(() => {
    const timer = setInterval(() => tick((n) => n + 1), 200);
    return () => clearInterval(timer);
  }, []);

  // A page closed with a call still unsent would lose it: the browser asks first.
  useEffect(() => {
    if (pending.length === 0) return;
    const ask = (e: BeforeUnloadEvent) => e.preventDefault();
    addEventListener("beforeunload", ask);
    return () => removeEventListener("beforeunload", ask);
  }, [pending.length > 0]);

  const s = f.state;
  const me = s ? myColor(s, seat?.seat) : undefined;
  const over = s?.phase === Phase.FINISHED;

  // A proposed move belongs to its position: gone when the position changes.
  useEffect(() => setCandidate(undefined), [s?.moveNumber, s?.phase]);
  // The last call leaves the screen with the game.
  useEffect(() => {
    if (over) setCall(undefined);
  }, [over]);

  // The host reveals its nigiri handful as soon as the guest has guessed (C1).
  useEffect(() => {
    if (s?.phase === Phase.NIGIRI && seat?.seat === "host" && seat.nigiri && s.nigiriGuess !== Parity.UNSPECIFIED) {
      const { stones, nonce } = seat.nigiri;
      void act(() => client.revealNigiri({ mutation: mutation(), stones, nonce }));
    }
  }, [s?.phase, s?.nigiriGuess]);

  const mutation = (expected?: number) => ({ gameId, requestId: requestId(), expectedMoveNumber: expected });

  // The variant: this seat reveals its sealed bid as soon as both bids are sealed.
  const mySealed = seat?.seat === "host" ? s?.hostBidSealed : s?.guestBidSealed;
  const myRevealed = (seat?.seat === "host" ? s?.hostBid : s?.guestBid) !== undefined;
  useEffect(() => {
    if (s?.phase === Phase.BIDDING && seat?.bid && s.hostBidSealed && s.guestBidSealed && !myRevealed) {
      const { komi, nonce } = seat.bid;
      void act(() => client.revealBid({ mutation: mutation(), komi, nonce }));
    }
  }, [s?.phase, s?.hostBidSealed, s?.guestBidSealed, myRevealed]);

  // A finished rated game: the player's rating before and after it (the ratings are
  // updated just after the game ends, so asked again a few times).
  const myPlayer = seat && s ? (seat.seat === "host" ? s.hostPlayer : s.guestPlayer) : undefined;
  const [rating, setRating] = useState<ReturnType<typeof ratingChangeFor>>();
  useEffect(() => {
    const players = p.players;
    const id = myPlayer?.playerId;
    if (!over || !s?.settings?.rated || !players || !id) return;
    let stop = false;
    void (async () => {
      for (let i = 0; i < 10 && !stop; i++) {
        const h = await players.getRatingHistory({ playerId: id, boardSize: s.settings?.boardSize || 19, limit: 20 }).catch(() => undefined);
        const c = h && ratingChangeFor(h.changes, gameId);
        if (c) return setRating(c);
        await new Promise((r) => setTimeout(r, 1000));
      }
    })();
    return () => {
      stop = true;
    };
  }, [over, myPlayer?.playerId]);

  /** Seals a komi bid: the commitment now, the bid and nonce kept here until the reveal. */
  async function sealBid(komi: number) {
    if (!seat) return;
    const nonce = requestId();
    const commitment = await sha256Hex(`${Math.round(komi * 2)}:${nonce}`);
    const kept = { ...seat, bid: { komi, nonce } };
    saveSeat(gameId, kept);
    setSeat(kept);
    await act(() => client.commitBid({ mutation: mutation(), commitment }));
  }

  /** Waits `ms`, or less when the connection comes back. */
  const retryAfter = (ms: number) =>
    new Promise<void>((r) => {
      const done = () => {
        clearTimeout(timer);
        r();
      };
      const timer = setTimeout(done, ms);
      wakers.current.push(done);
    });

  /**
   * Sends a call, retrying network failures with the same request id until it is answered
   * (shown as pending meanwhile), and folds the answer; a refusal is said in words.
   */
  async function act(call: () => Promise<{ result?: CommandResult }>, what?: { label: string; stone?: Pending["stone"] }) {
    setMessage(undefined);
    const entry: Pending = { id: ++nextPending.current, label: what?.label ?? "", stone: what?.stone, failed: false };
    if (what) setPending((ps) => [...ps, entry]);
    try {
      for (let attempt = 1; alive.current; attempt++) {
        try {
          const r = await call();
          const before = fRef.current.seq;
          apply(foldResult(fRef.current, r.result, Date.now()));
          for (const e of r.result?.events ?? []) if (Number(e.seq) > before) onEvent(e);
          setOffline(false);
          return;
        } catch (e) {
          const why = failure(e);
          if (!transient(why)) return report(why, e);
          setOffline(true);
          if (!entry.failed) {
            entry.failed = true;
            setPending((ps) => ps.map((q) => (q.id === entry.id ? { ...entry } : q)));
          }
          await retryAfter(backoffMs(RETRY, Math.min(attempt, RETRY.maxAttempts)));
        }
      }
    } finally {
      if (what) setPending((ps) => ps.filter((q) => q.id !== entry.id));
    }
  }

  async function report(why: Failure, e: unknown) {
    const title = `${why.message} (${Code[ConnectError.from(e).code] ?? ""}${why.reason ? `, ${why.reason}` : ""})`;
    if (why.kind === "seat") {
      forgetSeat(gameId);
      setSeat(undefined);
      setMessage({ text: t(lang, "seatLost"), title, kind: "error" });
    } else if (why.kind === "stale") {
      setMessage({ text: t(lang, "stale"), title, kind: "error" });
      const got = await client.getGame({ gameId }).catch(() => undefined);
      if (got?.state) apply(foldState(fRef.current, got.state, Date.now()));
    } else {
      setMessage({ text: t(lang, refusalKey(why)), title, kind: "error" });
    }
  }

  // Calls built once per render so every request id is fresh and the retry reuses it.
  const send = (
    fn: (m: ReturnType<typeof mutation>) => Promise<{ result?: CommandResult }>,
    expected?: number,
    what?: { label: string; stone?: Pending["stone"] },
  ) => {
    const m = mutation(expected);
    return act(() => fn(m), what);
  };

  // The board as big as the screen allows: its top where the layout puts it, its bottom
  // (with the coordinates) above the window's bottom edge.
  const boardCol = useRef<HTMLDivElement>(null);
  const [fit, setFit] = useState<number | undefined>();
  useLayoutEffect(() => {
    const el = boardCol.current;
    if (!el) return;
    const top = el.getBoundingClientRect().top + scrollY;
    const room = Math.max(280, Math.floor(innerHeight - top - 12));
    if (room !== fit) setFit(room);
  });
  useEffect(() => {
    const on = () => setFit(undefined);
    addEventListener("resize", on);
    return () => removeEventListener("resize", on);
  }, []);

  if (notFound) {
    return (
      <main class="game">
        <p class="error" role="alert">
          {t(lang, "gameNotFound")}
        </p>
        <a href="#/">{t(lang, "back")}</a>
      </main>
    );
  }
  if (!s) return <main class="game">{t(lang, "loading")}</main>;

  const size = s.settings?.boardSize || 19;
  const phase = s.phase;
  const toMove: Colour = s.toMove === Color.BLACK ? "B" : "W";
  const myTurn = phase === Phase.PLAYING && me !== undefined && toMove === me;
  const scoring = phase === Phase.SCORING;
  const placing = phase === Phase.PLACING_HANDICAP && me === "B";
  // The variant: whose seat stone is next (the host places Black's, the guest White's).
  const seatStone = nextSeatStone(s);
  const seatStoneTurn = phase === Phase.SEAT_STONES && seat?.seat === (seatStone === "B" ? "host" : "guest");
  const confirmOn = needsConfirm(prefs.confirmMoves, size);
  const moving = pending.some((q) => q.stone);
  const now = Date.now();
  const serverNow = now + f.offsetMs;

  const say = (key: Key) => setMessage({ text: t(lang, key), kind: "error" });
  const play = (x: number, y: number) => {
    setCandidate(undefined);
    const label = `${t(lang, "move")} ${pointName({ x, y }, size)}`;
    void send((m) => client.play({ mutation: m, point: { x, y } }), s.moveNumber, { label, stone: { x, y, color: me! } });
  };

  const onPoint = (x: number, y: number) => {
    const empty = s.board[y]?.[x] === ".";
    if (phase === Phase.SEAT_STONES && seat) {
      if (!seatStoneTurn) return say("whyNotYourTurn");
      if (!empty) return say("whyOccupied");
      void send((m) => client.placeSeatStone({ mutation: m, point: { x, y } }));
      return;
    }
    if (placing) {
      const key = (q: { x: number; y: number }) => q.x === x && q.y === y;
      setHandicapStones((hs) => (hs.some(key) ? hs.filter((q) => !key(q)) : hs.length < s.settings!.handicap ? [...hs, { x, y }] : hs));
      return;
    }
    if (scoring && me) {
      if (empty) return;
      const dead = toggleDead(s, x, y);
      void send((m) => client.proposeDeadStones({ mutation: m, stones: dead }));
      return;
    }
    if (phase !== Phase.PLAYING || !me) return;
    // Said at once, rather than a click that does nothing (or leaves an older error up).
    if (moving) return say("pendingMove");
    if (!myTurn) return say("whyNotYourTurn");
    if (!empty) return say("whyOccupied");
    setMessage(undefined);
    if (confirmOn && !(candidate && candidate.x === x && candidate.y === y)) {
      setCandidate({ x, y });
      return;
    }
    play(x, y);
  };

  const seatFor = (c: Colour) => (me === c ? ` (${t(lang, "you")})` : "");
  const requests = requestsOf(s, me);
  const undoFrom = requests.theirs.includes("undo");
  const drawFrom = requests.theirs.includes("draw");
  const result = s.result;
  const opponent: Colour | undefined = me === "B" ? "W" : me === "W" ? "B" : undefined;
  const away = opponent ? presenceView(presenceOf(s, opponent), serverNow) : undefined;
  const claimable = !!me && (phase === Phase.PLAYING || scoring) && away?.known && !away.present && away.claimInMs !== undefined;
  const failedPending = pending.filter((q) => q.failed);
  const myAccepted = me === "B" ? s.blackAccepted : me === "W" ? s.whiteAccepted : false;
  const opponentPlayer = seat ? (seat.seat === "host" ? s.guestPlayer : s.hostPlayer) : undefined;
  const signedIn = loadPlayer();
  const canRematch = over && !!p.players && !!signedIn && !!opponentPlayer?.playerId && opponentPlayer.playerId !== signedIn.id;

  const rematch = async () => {
    setMessage(undefined);
    try {
      await p.players!.challenge({ playerId: opponentPlayer!.playerId, settings: { ...s.settings!, scheduledStartMs: undefined } });
      setMessage({ text: tf(lang, "rematchSent", { name: opponentPlayer!.name }), kind: "info" });
    } catch (e) {
      void report(failure(e), e);
    }
  };

  return (
    <main class={`game skin-${prefs.skin}`}>
      {offline ? (
        <p class="banner offline" role="status" data-testid="offline-banner">
          {t(lang, "reconnecting")}
        </p>
      ) : null}
      <div class="players">
        <p class={`conn ${offline ? "off" : "on"}`} data-testid="connection" role="status">
          <span class="conn-dot" aria-hidden="true" />
          {t(lang, offline ? "offline" : "connected")}
        </p>
        {(["B", "W"] as const).map((c) => {
          const cv = displayClock(f, c, now);
          const caps = c === "B" ? s.blackCaptures : s.whiteCaptures;
          const toMoveHere = phase === Phase.PLAYING && toMove === c;
          const pv = presenceView(presenceOf(s, c), serverNow);
          return (
            <section
              key={c}
              class={`player ${c === "B" ? "black" : "white"}${toMoveHere ? " to-move" : ""}`}
              aria-label={`${t(lang, c === "B" ? "black" : "white")}${seatFor(c)}`}
              data-testid={`player-${c}`}
            >
              <h3>
                <span class={`dot ${c === "B" ? "black" : "white"}`} aria-hidden="true" />
                {t(lang, c === "B" ? "black" : "white")}
                {playerName(s, c) ? ` · ${playerName(s, c)}` : ""}
                {seatFor(c)}
                {toMoveHere ? <span class="muted"> · {t(lang, "toMove")}</span> : null}
              </h3>
              {pv.known && seatOf(s, c) ? (
                // (Offline, this is only the last known presence: shown faded.)
                <span class={`presence ${pv.present ? "here" : "gone"}${offline ? " stale" : ""}`} data-testid={`presence-${c}`}>
                  <span class="presence-dot" aria-hidden="true" />
                  {pv.present ? t(lang, "online") : tf(lang, "leftAgo", { ago: formatMs(pv.awayMs) })}
                </span>
              ) : null}
              <div class={`clock${cv.low ? " low" : ""}${cv.running ? " running" : ""}${cv.flagged ? " flagged" : ""}`} data-testid={`clock-${c}`} role="timer">
                <span class="time">{cv.text}</span>
                {cv.detail ? <span class="detail" data-testid={`periods-${c}`}>{cv.overtime ? `× ${cv.detail}` : cv.detail}</span> : null}
                {cv.flagged ? <span class="flag">{t(lang, "lostOnTime")}</span> : null}
              </div>
              <div class="muted">
                {t(lang, "captures")}: {caps}
              </div>
            </section>
          );
        })}
      </div>
      <div class="board-col" ref={boardCol} style={fit ? { maxWidth: `${fit}px` } : undefined}>
        <Board
          size={size}
          rows={s.board}
          lastMove={s.lastMove}
          dead={scoring || phase === Phase.FINISHED ? s.deadStones : undefined}
          owners={scoring ? s.scoring?.owners.length ? s.scoring.owners : undefined : undefined}
          marked={placing ? handicapStones : undefined}
          candidate={candidate && me ? { ...candidate, color: me } : undefined}
          pending={pending.find((q) => q.stone)?.stone}
          ghost={myTurn && !moving ? me : placing ? "B" : seatStoneTurn ? seatStone : undefined}
          coordinates={prefs.coordinates}
          label={`${t(lang, "boardLabel")} ${size}×${size}`}
          onPoint={onPoint}
        />
        {candidate && myTurn ? (
          <div class="confirm-move" data-testid="confirm-move">
            <button class="primary" onClick={() => play(candidate.x, candidate.y)}>
              {tf(lang, "confirmMove", { point: pointName(candidate, size) })}
            </button>
            <button class="secondary" onClick={() => setCandidate(undefined)}>
              {t(lang, "cancel")}
            </button>
            <span class="muted">{t(lang, "candidateHint")}</span>
          </div>
        ) : null}
      </div>
      <div class="side">
        <p class="status" role="status" data-testid="status">
          {statusLine(lang, s, me, myTurn, f.moves.at(-1))}
        </p>
        {call && !over ? (
          <p class="call" aria-live="assertive" data-testid="call">
            {call.text}
          </p>
        ) : null}
        {failedPending.map((q) => (
          <p key={q.id} class="pending" role="status" data-testid="pending">
            {tf(lang, "pendingSend", { what: q.label || t(lang, "loading") })}
          </p>
        ))}
        {message ? (
          <p class={`${message.kind} dismissable`} role="alert" data-testid="message" title={message.title}>
            <span>{message.text}</span>
            <button class="close" aria-label={t(lang, "dismiss")} title={t(lang, "dismiss")} onClick={() => setMessage(undefined)}>
              ×
            </button>
          </p>
        ) : null}
        {notice ? (
          <p class="notice dismissable" role="status" data-testid="notice">
            <span>{notice}</span>
            <button class="close" aria-label={t(lang, "dismiss")} title={t(lang, "dismiss")} onClick={() => setNotice(undefined)}>
              ×
            </button>
          </p>
        ) : null}
        {s.settings?.freeSeats ? <VariantPanel lang={lang} s={s} seat={seat?.seat} nextStone={seatStone} /> : null}
        {claimable && away ? (
          <div class="claim" role="alert" data-testid="claim">
            {away.claimInMs! > 0 ? (
              <>
                {tf(lang, "opponentLeft", { ago: formatMs(away.awayMs) })} {tf(lang, "claimIn", { time: formatMs(away.claimInMs!) })}
              </>
            ) : (
              <>
                {t(lang, "claimNow")}
                <button onClick={() => send((m) => client.claimAbandoned({ mutation: m, draw: false }), undefined, { label: t(lang, "claimWin") })}>
                  {t(lang, "claimWin")}
                </button>
                <button class="secondary" onClick={() => send((m) => client.claimAbandoned({ mutation: m, draw: true }), undefined, { label: t(lang, "claimDraw") })}>
                  {t(lang, "claimDraw")}
                </button>
              </>
            )}
          </div>
        ) : null}
        {result && phase === Phase.FINISHED ? (
          <div class="result" data-testid="result">
            <strong>
              {t(lang, "result")}: {result.text}
            </strong>
            {result.reason === EndReason.SCORE ? (
              <div>
                {t(lang, "area")}: {t(lang, "black")} {result.blackPoints} · {t(lang, "white")} {result.whitePoints}
              </div>
            ) : null}
            {result.reason === EndReason.TIME ? <div>{t(lang, "byTime")}</div> : null}
            {result.reason === EndReason.RESIGNATION ? <div>{t(lang, "byResignation")}</div> : null}
            {result.reason === EndReason.DRAW_BY_AGREEMENT ? <div>{t(lang, "drawByAgreement")}</div> : null}
            {result.reason === EndReason.ABANDONED ? <div data-testid="abandoned">{abandonedWords(lang, s)}</div> : null}
            {rating ? (
              <div data-testid="rating-change">
                {tf(lang, "ratingChange", {
                  before: String(rating.before),
                  after: String(rating.after),
                  delta: rating.delta >= 0 ? `+${rating.delta}` : String(rating.delta),
                })}
              </div>
            ) : null}
            {canRematch ? (
              <button class="rematch" onClick={rematch}>
                {t(lang, "rematch")}
              </button>
            ) : null}
          </div>
        ) : null}
        {scoring ? (
          <ScorePanel
            lang={lang}
            s={s}
            me={me}
            accept={() => send((m) => client.acceptScore({ mutation: m }))}
            dispute={() => send((m) => client.disputeScore({ mutation: m }))}
            myAccepted={myAccepted}
          />
        ) : null}
        {requests.mine.map((r) => (
          <p key={r} class="info" role="status" data-testid={`${r}-waiting`}>
            {t(lang, r === "undo" ? "undoWaiting" : "drawWaiting")}
          </p>
        ))}
        {me && undoFrom ? (
          <Ask lang={lang} question="undoAsked" answer={(accept) => send((m) => client.answerUndo({ mutation: m, accept }))} />
        ) : null}
        {me && drawFrom ? (
          <Ask lang={lang} question="drawAsked" answer={(accept) => send((m) => client.answerDraw({ mutation: m, accept }))} />
        ) : null}
        <div class="controls">
          {me && phase === Phase.PLAYING ? (
            <>
              <button disabled={!myTurn || moving} onClick={() => send((m) => client.pass({ mutation: m }), s.moveNumber, { label: t(lang, "pass") })}>
                {t(lang, "pass")}
              </button>
              <button
                disabled={!myTurn || moving}
                onClick={() => send((m) => client.declareEnd({ mutation: m }), s.moveNumber, { label: t(lang, "declareEnd") })}
              >
                {t(lang, "declareEnd")}
              </button>
              <button disabled={requests.mine.includes("undo")} onClick={() => send((m) => client.requestUndo({ mutation: m }), undefined, { label: t(lang, "undo") })}>
                {t(lang, "undo")}
              </button>
              <button disabled={requests.mine.includes("draw")} onClick={() => send((m) => client.offerDraw({ mutation: m }), undefined, { label: t(lang, "draw") })}>
                {t(lang, "draw")}
              </button>
              <button class="danger" onClick={() => setConfirmResign(true)}>
                {t(lang, "resign")}
              </button>
            </>
          ) : null}
          {placing ? (
            <button disabled={handicapStones.length !== s.settings?.handicap} onClick={() => send((m) => client.placeHandicap({ mutation: m, stones: handicapStones }))}>
              {t(lang, "confirmPlacement")}
            </button>
          ) : null}
          {seat && phase === Phase.BIDDING && !mySealed ? <BidForm lang={lang} seal={sealBid} /> : null}
          {me && phase === Phase.SCHEDULED ? <button onClick={() => send((m) => client.checkIn({ mutation: m }))}>{t(lang, "checkIn")}</button> : null}
          {s.forfeitAtMs !== undefined ? (
            <span class="deadline">
              {t(lang, "forfeitAt")} {new Date(Number(s.forfeitAtMs)).toLocaleTimeString()}
            </span>
          ) : null}
          <button onClick={() => downloadSgf(client, gameId)}>{t(lang, "sgf")}</button>
        </div>
        {confirmResign ? (
          <div class="ask" role="alertdialog" aria-label={t(lang, "resignConfirm")}>
            {t(lang, "resignConfirm")}
            <button
              class="danger"
              onClick={() => {
                setConfirmResign(false);
                void send((m) => client.resign({ mutation: m }), undefined, { label: t(lang, "resign") });
              }}
            >
              {t(lang, "yes")}
            </button>
            <button onClick={() => setConfirmResign(false)}>{t(lang, "no")}</button>
          </div>
        ) : null}
        <details class="moves" open>
          <summary>
            {t(lang, "moves")} ({f.moves.length})
          </summary>
          <ol data-testid="moves">
            {f.moves.map((m) => (
              <li key={m.seq}>
                {m.color} {moveText(lang, m)}
              </li>
            ))}
          </ol>
        </details>
        <a href="#/">{t(lang, "back")}</a>
      </div>
    </main>
  );
}

/** Failures worth sending again: the server unreachable or restarting. A server error with
 * a reason of its own (a corrupt game) would only fail again. */
function transient(why: Failure): boolean {
  return why.kind === "network" && (why.reason === "" || why.reason === "storage_unavailable" || why.reason === "shutting_down");
}

const colourName = (lang: Lang, c: Colour) => t(lang, c === "B" ? "black" : "white");

/** A move list line's words: the point, or what the turn was instead. */
function moveText(lang: Lang, m: MoveEntry): string {
  const words: Record<string, Key> = { pass: "movePass", end: "moveEnd", void: "moveVoid" };
  return words[m.text] ? t(lang, words[m.text]!) : m.text;
}

/** An abandoned game in words: who left, and what the one who stayed chose. */
function abandonedWords(lang: Lang, s: GameState): string {
  const winner = s.result?.winner;
  if (winner === Color.BLACK || winner === Color.WHITE) {
    const w: Colour = winner === Color.BLACK ? "B" : "W";
    return tf(lang, "abandonedWin", { loser: colourName(lang, w === "B" ? "W" : "B"), winner: colourName(lang, w) });
  }
  // A draw does not say who left; the presence does, while the one who left stays away.
  const gone = (["B", "W"] as const).filter((c) => presenceOf(s, c)?.present === false);
  return gone.length === 1 ? tf(lang, "abandonedDraw", { loser: colourName(lang, gone[0]!) }) : t(lang, "abandonedDrawUnknown");
}

/** The signed-in player playing `c`, if any. */
function playerName(s: GameState, c: Colour): string | undefined {
  const seat = seatOf(s, c);
  return seat && (seat === "host" ? s.hostPlayer : s.guestPlayer)?.name;
}

/** The opponent's pending request (undo or draw) and the player's two answers. */
function Ask(p: { lang: Lang; question: Key; answer: (accept: boolean) => void }): JSX.Element {
  return (
    <div class="ask" role="alertdialog" aria-label={t(p.lang, p.question)}>
      {t(p.lang, p.question)}
      <button onClick={() => p.answer(true)}>{t(p.lang, "accept")}</button>
      <button onClick={() => p.answer(false)}>{t(p.lang, "decline")}</button>
    </div>
  );
}

/** Scoring: the server's count under the dead stones on the table (updated at every
 * toggle), each side's acceptance, and the explicit Accept and Dispute. */
function ScorePanel(p: {
  lang: Lang;
  s: GameState;
  me: Colour | undefined;
  myAccepted: boolean;
  accept: () => void;
  dispute: () => void;
}): JSX.Element {
  const { lang, s } = p;
  const v = s.scoring;
  return (
    <div class="score" data-testid="score">
      {v ? (
        <>
          <strong>{t(lang, "scoreCount")}: </strong>
          <span data-testid="score-line">{tf(lang, "scoreLine", { b: String(v.blackPoints), w: String(v.whitePoints) })}</span>
          <div data-testid="score-text">{tf(lang, "scoreWithKomi", { text: v.text })}</div>
        </>
      ) : null}
      <ul class="acceptances">
        {(["B", "W"] as const).map((c) => {
          const ok = c === "B" ? s.blackAccepted : s.whiteAccepted;
          return (
            <li key={c} class={ok ? "ok" : ""} data-testid={`accepted-${c}`}>
              {colourName(lang, c)}: {ok ? `✓ ${t(lang, "accepted")}` : t(lang, "notYetAccepted")}
            </li>
          );
        })}
      </ul>
      {p.me && p.myAccepted ? <p class="muted">{t(lang, "youAccepted")}</p> : null}
      {p.me ? (
        <div class="controls">
          <button disabled={p.myAccepted} onClick={p.accept}>
            {t(lang, p.myAccepted ? "acceptedButton" : "acceptScore")}
          </button>
          <button class="secondary" onClick={p.dispute}>
            {t(lang, "disputeScore")}
          </button>
        </div>
      ) : null}
    </div>
  );
}

/** The variant, for players and spectators alike: whose seat stone is next, the bids as
 * they are sealed and revealed, and how colours and komi were decided. */
function VariantPanel(p: { lang: Lang; s: GameState; seat: "host" | "guest" | undefined; nextStone: Colour }): JSX.Element {
  const { lang, s } = p;
  const seatWord = (x: "host" | "guest") => t(lang, x === "host" ? "hostSeat" : "guestSeat");
  const stoneSeat = p.nextStone === "B" ? "host" : "guest";
  const outcome = bidOutcome(s);
  const bid = (x: "host" | "guest") => {
    const v = x === "host" ? s.hostBid : s.guestBid;
    const sealed = x === "host" ? s.hostBidSealed : s.guestBidSealed;
    return v !== undefined ? String(v) : t(lang, sealed ? "bidSealed" : "bidNotSealed");
  };
  return (
    <div class="variant" data-testid="variant">
      {s.phase === Phase.SEAT_STONES ? (
        <p data-testid="seat-stone-next">
          {p.seat === stoneSeat
            ? tf(lang, "seatStoneYours", { colour: colourName(lang, p.nextStone) })
            : tf(lang, "seatStoneNext", { colour: colourName(lang, p.nextStone), seat: seatWord(stoneSeat) })}
        </p>
      ) : null}
      {s.phase !== Phase.SEAT_STONES && s.phase !== Phase.WAITING_FOR_OPPONENT ? (
        <ul class="bids" data-testid="bids">
          <li>
            {t(lang, "hostBid")}: {bid("host")}
          </li>
          <li>
            {t(lang, "guestBid")}: {bid("guest")}
          </li>
        </ul>
      ) : null}
      {outcome ? (
        <p data-testid="komi-decided">
          {tf(lang, outcome.byLot ? "bidDecidedLot" : "bidDecided", {
            h: String(outcome.hostBid),
            g: String(outcome.guestBid),
            black: seatWord(outcome.black),
            komi: String(outcome.komi),
          })}{" "}
          <strong>
            {t(lang, "komi")} {outcome.komi}
          </strong>
        </p>
      ) : null}
    </div>
  );
}

/** The variant: a komi bid (what this player would give as Black), sealed. */
function BidForm(p: { lang: Lang; seal: (komi: number) => Promise<void> }) {
  const [komi, setKomi] = useState(6.5);
  return (
    <form
      class="bid"
      onSubmit={(e) => {
        e.preventDefault();
        void p.seal(komi);
      }}
    >
      <label>
        {t(p.lang, "bidLabel")}
        <input type="number" name="bid" step="0.5" value={komi} onInput={(e) => setKomi(Number((e.target as HTMLInputElement).value))} />
      </label>
      <button type="submit">{t(p.lang, "sealBid")}</button>
    </form>
  );
}

function statusLine(lang: Lang, s: GameState, me: Colour | undefined, myTurn: boolean, last: MoveEntry | undefined): string {
  const phases: Partial<Record<Phase, Key>> = {
    [Phase.WAITING_FOR_OPPONENT]: "waiting",
    [Phase.SEAT_STONES]: "seatStonesPhase",
    [Phase.BIDDING]: "biddingPhase",
    [Phase.NIGIRI]: "nigiriPhase",
    [Phase.PLACING_HANDICAP]: "placeHandicap",
    [Phase.SCHEDULED]: "scheduled",
    [Phase.ADJOURNED]: "adjourned",
    [Phase.SCORING]: "scoring",
  };
  const k = phases[s.phase];
  if (k) return t(lang, k);
  if (s.phase === Phase.PLAYING) {
    const who = t(lang, me === undefined ? "spectating" : myTurn ? "yourTurn" : "opponentsTurn");
    // A declared end is a pass that asks the opponent to end play: said as such.
    const ended = last?.text === "end" ? ` · ${tf(lang, "noticeDeclaredEnd", { who: colourName(lang, last.color) })}` : "";
    return `${who} · ${t(lang, "move")} ${s.moveNumber}${ended}`;
  }
  return "";
}

async function downloadSgf(client: GameClient, gameId: string): Promise<void> {
  const r = await client.exportSgf({ gameId });
  const url = URL.createObjectURL(new Blob([r.sgf], { type: "application/x-go-sgf" }));
  const a = document.createElement("a");
  a.href = url;
  a.download = `${gameId}.sgf`;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
