// One game: the board, both clocks, the controls of the player's seat (or a spectator's
// view), scoring, the move list. The state comes from WatchGame (resumed from the last
// event seen after a reload or a dropped connection) and from each call's answer.
import { backoffMs, publishedPolicy } from "./retry.js";
import { useEffect, useRef, useState } from "preact/hooks";
import type { JSX } from "preact";
import {
  Color,
  EndReason,
  Parity,
  Phase,
  failure,
  requestId,
  type CommandResult,
  type Failure,
  type GameClient,
  type GameState,
} from "./client.js";
import { Board } from "./board.js";
import { t, type Key, type Lang } from "./i18n.js";
import { forgetSeat, loadRecord, loadSeat, saveRecord, saveSeat, type Prefs, type SeatRecord } from "./prefs.js";
import { sha256Hex } from "./lobby.js";
import { sayCall, stoneSound } from "./sound.js";
import {
  announcement,
  displayClock,
  empty,
  fold,
  foldResult,
  foldState,
  myColor,
  seatOf,
  toggleDead,
  type Folded,
} from "./state.js";

const RECONNECT_MS = 1000;
/** A call that failed on the network or as unavailable is sent again (same request id: the
 * server answers a retry with the first answer) as the published retry policy says, then
 * the player is told. */
const RETRY = publishedPolicy();

export function GamePage(p: { client: GameClient; prefs: Prefs; gameId: string }): JSX.Element {
  const { client, prefs, gameId } = p;
  const lang = prefs.lang;
  const [f, setF] = useState<Folded>(() => ({ ...empty(), ...(loadRecord(gameId) ?? {}) }));
  const fRef = useRef(f);
  fRef.current = f;
  const [seat, setSeat] = useState<SeatRecord | undefined>(() => loadSeat(gameId));
  const [notFound, setNotFound] = useState(false);
  const [offline, setOffline] = useState(false);
  const [message, setMessage] = useState<{ text: string; kind: "error" | "info" } | undefined>();
  const [call, setCall] = useState("");
  const [confirmResign, setConfirmResign] = useState(false);
  const [handicapStones, setHandicapStones] = useState<{ x: number; y: number }[]>([]);
  const [, tick] = useState(0);
  const prefsRef = useRef(prefs);
  prefsRef.current = prefs;

  const apply = (g: Folded) => {
    fRef.current = g;
    setF(g);
    saveRecord(gameId, g);
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
          const stream = client.watchGame({ gameId, sinceSeq: BigInt(fRef.current.seq) }, { signal: abort.signal });
          for await (const r of stream) {
            setOffline(false);
            if (!r.state) continue;
            const before = fRef.current;
            apply(fold(before, r.event, r.state, Date.now()));
            if (r.event && Number(r.event.seq) > before.seq) onEvent(r.event.kind, r.event);
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
    const onEvent = (kind: string, e: Parameters<typeof announcement>[0]) => {
      const pr = prefsRef.current;
      if (kind === "move_played" && pr.sound) stoneSound();
      const c = announcement(e);
      if (c) {
        const words = pr.sound ? sayCall(pr.lang, c.seconds, c.count) : c.count !== undefined ? String(c.count) : `${c.seconds}s`;
        setCall(`${c.color === "B" ? t(pr.lang, "black") : t(pr.lang, "white")}: ${words}`);
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

  const s = f.state;
  const me = s ? myColor(s, seat?.seat) : undefined;

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

  /** Sends a call, retrying network failures with the same request id, and folds the answer. */
  async function act(call: () => Promise<{ result?: CommandResult }>) {
    setMessage(undefined);
    let last: Failure | undefined;
    for (let attempt = 1; attempt <= RETRY.maxAttempts; attempt++) {
      try {
        const r = await call();
        apply(foldResult(fRef.current, r.result, Date.now()));
        return;
      } catch (e) {
        last = failure(e);
        if (last.kind !== "network" || attempt === RETRY.maxAttempts) break;
        await new Promise((r) => setTimeout(r, backoffMs(RETRY, attempt)));
      }
    }
    if (!last) return;
    if (last.kind === "seat") {
      forgetSeat(gameId);
      setSeat(undefined);
      setMessage({ text: t(lang, "seatLost"), kind: "error" });
    } else if (last.kind === "stale") {
      setMessage({ text: `${t(lang, "stale")} (${last.message})`, kind: "error" });
      const got = await client.getGame({ gameId }).catch(() => undefined);
      if (got?.state) apply(foldState(fRef.current, got.state, Date.now()));
    } else {
      setMessage({ text: `${t(lang, "refused")}: ${last.message}`, kind: "error" });
    }
  }

  // Calls built once per render so every request id is fresh and the retry reuses it.
  const send = (fn: (m: ReturnType<typeof mutation>) => Promise<{ result?: CommandResult }>, expected?: number) => {
    const m = mutation(expected);
    return act(() => fn(m));
  };

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
  const myTurn = phase === Phase.PLAYING && me !== undefined && (s.toMove === Color.BLACK ? "B" : "W") === me;
  const scoring = phase === Phase.SCORING;
  const placing = phase === Phase.PLACING_HANDICAP && me === "B";
  // The variant: whose seat stone is next (the host places Black's, the guest White's).
  const stonesPlaced = s.board.reduce((n, row) => n + [...row].filter((c) => c !== ".").length, 0);
  const nextSeatStone = stonesPlaced % 2 === 0 ? "B" : "W";
  const seatStoneTurn = phase === Phase.SEAT_STONES && seat?.seat === (nextSeatStone === "B" ? "host" : "guest");

  const onPoint = (x: number, y: number) => {
    if (seatStoneTurn && s.board[y]?.[x] === ".") {
      void send((m) => client.placeSeatStone({ mutation: m, point: { x, y } }));
      return;
    }
    if (placing) {
      const key = (q: { x: number; y: number }) => q.x === x && q.y === y;
      setHandicapStones((hs) => (hs.some(key) ? hs.filter((q) => !key(q)) : hs.length < s.settings!.handicap ? [...hs, { x, y }] : hs));
      return;
    }
    if (scoring && me) {
      const dead = toggleDead(s, x, y);
      void send((m) => client.proposeDeadStones({ mutation: m, stones: dead }));
      return;
    }
    if (myTurn && s.board[y]?.[x] === ".") {
      void send((m) => client.play({ mutation: m, point: { x, y } }), s.moveNumber);
    }
  };

  const seatFor = (c: "B" | "W") => (me === c ? ` (${t(lang, "you")})` : "");
  const pending = (c: Color) => (c === Color.BLACK ? "B" : c === Color.WHITE ? "W" : undefined);
  const undoFrom = pending(s.pendingUndoFrom);
  const drawFrom = pending(s.pendingDrawFrom);
  const now = Date.now();
  const result = s.result;

  return (
    <main class={`game skin-${prefs.skin}`}>
      {offline ? (
        <p class="banner offline" role="status">
          {t(lang, "reconnecting")}
        </p>
      ) : null}
      <div class="players">
        {(["B", "W"] as const).map((c) => {
          const cv = displayClock(f, c, now);
          const caps = c === "B" ? s.blackCaptures : s.whiteCaptures;
          const toMove = phase === Phase.PLAYING && (s.toMove === Color.BLACK ? "B" : "W") === c;
          const accepted = c === "B" ? s.blackAccepted : s.whiteAccepted;
          return (
            <section
              key={c}
              class={`player ${c === "B" ? "black" : "white"}${toMove ? " to-move" : ""}`}
              aria-label={`${t(lang, c === "B" ? "black" : "white")}${seatFor(c)}`}
              data-testid={`player-${c}`}
            >
              <h3>
                <span class={`dot ${c === "B" ? "black" : "white"}`} aria-hidden="true" />
                {t(lang, c === "B" ? "black" : "white")}
                {playerName(s, c) ? ` · ${playerName(s, c)}` : ""}
                {seatFor(c)}
                {toMove ? <span class="muted"> · {t(lang, "toMove")}</span> : null}
              </h3>
              <div class={`clock${cv.low ? " low" : ""}${cv.running ? " running" : ""}${cv.flagged ? " flagged" : ""}`} data-testid={`clock-${c}`} role="timer">
                <span class="time">{cv.text}</span>
                {cv.detail ? <span class="detail" data-testid={`periods-${c}`}>{cv.overtime ? `× ${cv.detail}` : cv.detail}</span> : null}
                {cv.flagged ? <span class="flag">{t(lang, "lostOnTime")}</span> : null}
              </div>
              <div class="muted">
                {t(lang, "captures")}: {caps}
                {scoring && accepted ? ` · ${t(lang, "accepted")}` : ""}
              </div>
            </section>
          );
        })}
      </div>
      <Board
        size={size}
        rows={s.board}
        lastMove={s.lastMove}
        dead={scoring || phase === Phase.FINISHED ? s.deadStones : undefined}
        marked={placing ? handicapStones : undefined}
        ghost={myTurn ? me : placing ? "B" : seatStoneTurn ? nextSeatStone : undefined}
        coordinates={prefs.coordinates}
        label={`${t(lang, "boardLabel")} ${size}×${size}`}
        onPoint={onPoint}
      />
      <div class="side">
        <p class="status" role="status" data-testid="status">
          {statusLine(lang, s, me, myTurn)}
        </p>
        {call ? (
          <p class="call" aria-live="assertive" data-testid="call">
            {call}
          </p>
        ) : null}
        {message ? (
          <p class={message.kind} role="alert" data-testid="message">
            {message.text}
          </p>
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
          </div>
        ) : null}
        {me && undoFrom && undoFrom !== me ? (
          <Ask lang={lang} question="undoAsked" answer={(accept) => send((m) => client.answerUndo({ mutation: m, accept }))} />
        ) : null}
        {me && drawFrom && drawFrom !== me ? (
          <Ask lang={lang} question="drawAsked" answer={(accept) => send((m) => client.answerDraw({ mutation: m, accept }))} />
        ) : null}
        <div class="controls">
          {me && phase === Phase.PLAYING ? (
            <>
              <button disabled={!myTurn} onClick={() => send((m) => client.pass({ mutation: m }), s.moveNumber)}>
                {t(lang, "pass")}
              </button>
              <button disabled={!myTurn} onClick={() => send((m) => client.declareEnd({ mutation: m }), s.moveNumber)}>
                {t(lang, "declareEnd")}
              </button>
              <button onClick={() => send((m) => client.requestUndo({ mutation: m }))}>{t(lang, "undo")}</button>
              <button onClick={() => send((m) => client.offerDraw({ mutation: m }))}>{t(lang, "draw")}</button>
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
          {me && scoring ? (
            <>
              <button onClick={() => send((m) => client.acceptScore({ mutation: m }))}>{t(lang, "acceptScore")}</button>
              <button onClick={() => send((m) => client.disputeScore({ mutation: m }))}>{t(lang, "disputeScore")}</button>
            </>
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
                void send((m) => client.resign({ mutation: m }));
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
                {m.color} {m.text}
              </li>
            ))}
          </ol>
        </details>
        <a href="#/">{t(lang, "back")}</a>
      </div>
    </main>
  );
}

/** The signed-in player playing `c`, if any. */
function playerName(s: GameState, c: "B" | "W"): string | undefined {
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

function statusLine(lang: Lang, s: GameState, me: "B" | "W" | undefined, myTurn: boolean): string {
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
    return `${who} · ${t(lang, "move")} ${s.moveNumber}`;
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

