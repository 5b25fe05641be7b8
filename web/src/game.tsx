// One game: the board, both clocks, the controls of the player's seat (or a spectator's
// view), scoring, the move list, the engine's review once it is over. The page puts
// together the state from the event stream (game-stream.ts), the calls kept until
// answered (outbox.ts) and the panels.
import { useEffect, useState } from "preact/hooks";
import type { JSX } from "preact";
import { Code, Color, ConnectError, Parity, Phase, failure, requestId, sha256Hex, type Failure, type GameClient, type PlayerClient } from "./client.js";
import { Board, useBoardFit } from "./board.js";
import { useAnnouncements } from "./game-announce.js";
import { Controls } from "./game-controls.js";
import { EstimatePanel, useEstimate } from "./game-estimate.js";
import { ClaimPanel, Players } from "./game-players.js";
import { ReviewPanel, useNarrow, useReview, useReviewMove } from "./game-review.js";
import { Ask, ConfirmResign, Dismissable, Waiting } from "./game-prompts.js";
import { ResultPanel, ScorePanel, useRatingChange } from "./game-score.js";
import { useGameStream } from "./game-stream.js";
import { VariantPanel } from "./game-variant.js";
import { moveText, statusLine, type Colour } from "./game-words.js";
import { t, tf, type Key } from "./i18n.js";
import { useOutbox } from "./outbox.js";
import { forgetSeat, loadPlayer, loadSeat, saveSeat, type Prefs, type SeatRecord } from "./prefs.js";
import { myColor, needsConfirm, nextSeatStone, opponentAway, pointName, refusalKey, requestsOf, toggleDead } from "./state.js";

interface Message {
  text: string;
  /** The server's own words and code, for the curious (a tooltip). */
  title?: string;
  kind: "error" | "info";
}

export function GamePage(p: { client: GameClient; prefs: Prefs; gameId: string; players?: PlayerClient }): JSX.Element {
  const { client, prefs, gameId } = p;
  const lang = prefs.lang;
  const [seat, setSeat] = useState<SeatRecord | undefined>(() => loadSeat(gameId));
  const [message, setMessage] = useState<Message | undefined>();
  const [confirmResign, setConfirmResign] = useState(false);
  const [handicapStones, setHandicapStones] = useState<{ x: number; y: number }[]>([]);
  const [candidate, setCandidate] = useState<{ x: number; y: number } | undefined>();
  const [, tick] = useState(0);

  // (The handlers reach the hooks declared after this one only once the page is shown.)
  const game = useGameStream(client, gameId, { event: (e, f) => told.onEvent(e, f), back: () => outbox.wake() });
  const { f, offline } = game;
  const s = f.state;
  const over = s?.phase === Phase.FINISHED;
  const told = useAnnouncements(prefs, over);
  const outbox = useOutbox(gameId, {
    sending: () => setMessage(undefined),
    answered: game.answered,
    offline: game.setOffline,
    refused: (why, e) => report(why, e),
  });
  const { pending, act, send, mutation } = outbox;
  const me = s ? myColor(s, seat?.seat) : undefined;

  // The clocks' display ticks locally; the server's events are the truth.
  useEffect(() => {
    const timer = setInterval(() => tick((n) => n + 1), 200);
    return () => clearInterval(timer);
  }, []);

  // A proposed move belongs to its position: gone when the position changes.
  useEffect(() => setCandidate(undefined), [s?.moveNumber, s?.phase]);

  // The host reveals its nigiri handful as soon as the guest has guessed (C1).
  useEffect(() => {
    if (s?.phase === Phase.NIGIRI && seat?.seat === "host" && seat.nigiri && s.nigiriGuess !== Parity.UNSPECIFIED) {
      const { stones, nonce } = seat.nigiri;
      void act(() => client.revealNigiri({ mutation: mutation(), stones, nonce }));
    }
  }, [s?.phase, s?.nigiriGuess]);

  // The variant: this seat reveals its sealed bid as soon as both bids are sealed.
  const mySealed = seat?.seat === "host" ? s?.hostBidSealed : s?.guestBidSealed;
  const myRevealed = (seat?.seat === "host" ? s?.hostBid : s?.guestBid) !== undefined;
  useEffect(() => {
    if (s?.phase === Phase.BIDDING && seat?.bid && s.hostBidSealed && s.guestBidSealed && !myRevealed) {
      const { komi, nonce } = seat.bid;
      void act(() => client.revealBid({ mutation: mutation(), komi, nonce }));
    }
  }, [s?.phase, s?.hostBidSealed, s?.guestBidSealed, myRevealed]);

  const myPlayer = seat && s ? (seat.seat === "host" ? s.hostPlayer : s.guestPlayer) : undefined;
  const rating = useRatingChange(p.players, s, myPlayer?.playerId, gameId);

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

  async function report(why: Failure, e: unknown) {
    const title = `${why.message} (${Code[ConnectError.from(e).code] ?? ""}${why.reason ? `, ${why.reason}` : ""})`;
    if (why.kind === "seat") {
      forgetSeat(gameId);
      setSeat(undefined);
      setMessage({ text: t(lang, "seatLost"), title, kind: "error" });
    } else if (why.kind === "stale") {
      setMessage({ text: t(lang, "stale"), title, kind: "error" });
      await game.refresh();
    } else {
      setMessage({ text: t(lang, refusalKey(why)), title, kind: "error" });
    }
  }

  const board = useBoardFit();
  const estimate = useEstimate(client, gameId, Number(s?.seq ?? 0));
  const review = useReview(client, gameId, over);
  // A move of the review on the board instead of the final position.
  const reviewed = useReviewMove(review.review, s?.settings, f.setup);
  const shown = reviewed.shown;
  const narrow = useNarrow();

  if (game.notFound) {
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

  const requests = requestsOf(s, me);
  const { away, claimable } = opponentAway(s, me, serverNow);
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

  const reviewPanel = over ? <ReviewPanel lang={lang} review={review} size={size} at={reviewed.at} go={reviewed.go} /> : null;

  return (
    <main class={`game skin-${prefs.skin}`}>
      {offline ? (
        <p class="banner offline" role="status" data-testid="offline-banner">
          {t(lang, "reconnecting")}
        </p>
      ) : null}
      <Players lang={lang} f={f} s={s} me={me} offline={offline} now={now} serverNow={serverNow} />
      <div class="board-col" ref={board.col} style={board.fit ? { maxWidth: `${board.fit}px` } : undefined}>
        <Board
          size={size}
          rows={shown ? shown.rows : s.board}
          lastMove={shown ? shown.lastMove : s.lastMove}
          best={shown?.best}
          dead={shown ? undefined : scoring || phase === Phase.FINISHED ? s.deadStones : estimate.shown?.dead}
          owners={scoring ? s.scoring?.owners.length ? s.scoring.owners : undefined : undefined}
          estimate={phase === Phase.PLAYING ? estimate.shown?.ownership : undefined}
          marked={placing ? handicapStones : undefined}
          candidate={candidate && me ? { ...candidate, color: me } : undefined}
          pending={pending.find((q) => q.stone)?.stone}
          ghost={myTurn && !moving ? me : placing ? "B" : seatStoneTurn ? seatStone : undefined}
          coordinates={prefs.coordinates}
          label={`${t(lang, "boardLabel")} ${size}×${size}${shown ? `, ${t(lang, "move")} ${reviewed.at}` : ""}`}
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
        {narrow ? reviewPanel : null}
      </div>
      <div class="side">
        <p class="status" role="status" data-testid="status">
          {statusLine(lang, s, me, myTurn, f.moves.at(-1))}
        </p>
        {told.call && !over ? (
          <p class="call" aria-live="assertive" data-testid="call">
            {told.call.text}
          </p>
        ) : null}
        {pending
          .filter((q) => q.failed)
          .map((q) => (
            <p key={q.id} class="pending" role="status" data-testid="pending">
              {tf(lang, "pendingSend", { what: q.label || t(lang, "loading") })}
            </p>
          ))}
        {message ? (
          <Dismissable class={message.kind} role="alert" testid="message" title={message.title} lang={lang} dismiss={() => setMessage(undefined)}>
            {message.text}
          </Dismissable>
        ) : null}
        {told.notice ? (
          <Dismissable class="notice" role="status" testid="notice" lang={lang} dismiss={told.dismissNotice}>
            {told.notice}
          </Dismissable>
        ) : null}
        {phase === Phase.PLAYING ? <EstimatePanel lang={lang} estimate={estimate} /> : null}
        {s.settings?.freeSeats ? <VariantPanel lang={lang} s={s} seat={seat?.seat} nextStone={seatStone} /> : null}
        {claimable && away ? (
          <ClaimPanel
            lang={lang}
            away={away}
            claim={(draw) => send((m) => client.claimAbandoned({ mutation: m, draw }), undefined, { label: t(lang, draw ? "claimDraw" : "claimWin") })}
          />
        ) : null}
        {phase === Phase.FINISHED ? <ResultPanel lang={lang} s={s} rating={rating} rematch={canRematch ? rematch : undefined} /> : null}
        {narrow ? null : reviewPanel}
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
        <Waiting lang={lang} requests={requests.mine} />
        {me && requests.theirs.includes("undo") ? (
          <Ask lang={lang} question="undoAsked" answer={(accept) => send((m) => client.answerUndo({ mutation: m, accept }))} />
        ) : null}
        {me && requests.theirs.includes("draw") ? (
          <Ask lang={lang} question="drawAsked" answer={(accept) => send((m) => client.answerDraw({ mutation: m, accept }))} />
        ) : null}
        <Controls
          lang={lang}
          client={client}
          gameId={gameId}
          s={s}
          me={me}
          myTurn={myTurn}
          moving={moving}
          asked={requests.mine}
          handicap={placing ? handicapStones : undefined}
          seal={seat && phase === Phase.BIDDING && !mySealed ? sealBid : undefined}
          send={send}
          resign={() => setConfirmResign(true)}
        />
        {confirmResign ? (
          <ConfirmResign
            lang={lang}
            yes={() => {
              setConfirmResign(false);
              void send((m) => client.resign({ mutation: m }), undefined, { label: t(lang, "resign") });
            }}
            no={() => setConfirmResign(false)}
          />
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
