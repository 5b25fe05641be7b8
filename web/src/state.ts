// The client-side state of one game, folded from the server's events. Pure: no DOM, no
// network, no clock reads (the caller passes `now`), so the unit tests drive it directly.
import type { ClockState, Event, GameState, Point, SeatPresence } from "./gen/weiqi/v1/game_pb.js";
import { Color, Phase, TimeControl } from "./gen/weiqi/v1/game_pb.js";
import type { RatingChange } from "./gen/weiqi/v1/player_pb.js";
import type { Key } from "./i18n.js";
import { setupOf, type Stone } from "./replay.js";

/** One line of the move list. */
export interface MoveEntry {
  seq: number;
  number: number;
  color: "B" | "W";
  /** "D4", "pass", "end" (a pass that declared the end), "void" (a voided move counts as a
   * pass), or "undo". */
  text: string;
}

/** What the app keeps of a game: the latest state and the record of events seen. */
export interface Folded {
  state: GameState | undefined;
  /** Sequence number of the last event folded: the `since_seq` to resume from. */
  seq: number;
  moves: MoveEntry[];
  /** Server time minus local time, in ms, from the newest snapshot (for the clocks). */
  offsetMs: number;
  /** The server time of the newest snapshot, against which the clocks are read. */
  snapshotAt: number;
  /**
   * The running clock as it read when it started (the event that gave the turn). A
   * byo-yomi reading mid-turn does not say how much of the current period is used, so the
   * display counts from the turn's start.
   */
  turn: { color: "B" | "W"; at: number; clock: ClockState } | undefined;
  /** The stones the events placed before play (a free handicap, seat stones), for the
   * review's replay of the game; a fixed handicap follows from the settings instead. */
  setup: Stone[];
}

export const empty = (): Folded => ({
  state: undefined,
  seq: 0,
  moves: [],
  offsetMs: 0,
  snapshotAt: 0,
  turn: undefined,
  setup: [],
});

function runningOf(black: ClockState | undefined, white: ClockState | undefined) {
  if (black?.running) return { color: "B" as const, clock: black };
  if (white?.running) return { color: "W" as const, clock: white };
  return undefined;
}

/** The turn after an event: kept while the same clock runs, restarted when it changes. */
function nextTurn(turn: Folded["turn"], at: number, black?: ClockState, white?: ClockState): Folded["turn"] {
  const r = runningOf(black, white);
  if (!r) return undefined;
  if (turn && turn.color === r.color) return turn;
  return { color: r.color, at, clock: r.clock };
}

const LETTERS = "ABCDEFGHJKLMNOPQRSTUVWXYZ";

/** Board coordinates as players say them: column letter (no I), row from the bottom. */
export function pointName(p: { x: number; y: number }, size: number): string {
  return `${LETTERS[p.x] ?? "?"}${size - p.y}`;
}

/**
 * Folds one event (with the state after it) into the record. Events at or below the last
 * seen sequence number are ignored, so a replay after a reconnect never doubles a move.
 * `localNow` is the local time the event arrived, to estimate the server clock offset.
 */
export function fold(f: Folded, event: Event | undefined, state: GameState, localNow: number): Folded {
  const seq = event ? Number(event.seq) : Number(state.seq);
  if (event && seq <= f.seq) return f;
  const size = state.settings?.boardSize || 19;
  let moves = f.moves;
  let setup = f.setup;
  if (event) {
    const placed = setupOf(event);
    if (placed.length) setup = [...setup, ...placed];
    const entry = moveEntry(event, size, moves);
    if (entry === "undo") moves = moves.slice(0, -1);
    else if (entry) moves = [...moves, entry];
  }
  const serverNow = Number(state.serverTimeMs);
  const turn = event
    ? nextTurn(f.turn, Number(event.timeMs), event.blackClock, event.whiteClock)
    : nextTurn(f.turn, serverNow, state.blackClock, state.whiteClock);
  // A replay after a fresh GetGame brings states older than the one shown: keep the newer.
  const newest = f.state && Number(f.state.seq) > Number(state.seq) ? f.state : state;
  return {
    state: keepPresence(newest, f.state),
    seq: Math.max(seq, f.seq),
    moves,
    offsetMs: serverNow ? serverNow - localNow : f.offsetMs,
    snapshotAt: serverNow || f.snapshotAt,
    turn,
    setup,
  };
}

/** A state from a call's answer (no event stream needed): newer states win. */
export function foldState(f: Folded, state: GameState, localNow: number): Folded {
  if (Number(state.seq) < f.seq) return f;
  const serverNow = Number(state.serverTimeMs);
  return {
    ...f,
    state: keepPresence(state, f.state),
    offsetMs: serverNow ? serverNow - localNow : f.offsetMs,
    snapshotAt: serverNow || f.snapshotAt,
    turn: nextTurn(f.turn, serverNow, state.blackClock, state.whiteClock),
  };
}

/**
 * A state that says nothing of the seats' presence (one replayed from the log, or an
 * answer's) keeps the presence last known: only a state that carries presence changes it.
 */
function keepPresence(state: GameState, before: GameState | undefined): GameState {
  if (!before || (state.hostPresence && state.guestPresence)) return state;
  return {
    ...state,
    hostPresence: state.hostPresence ?? before.hostPresence,
    guestPresence: state.guestPresence ?? before.guestPresence,
  };
}

/** A call's answer: its events in order, then its state. */
export function foldResult(
  f: Folded,
  result: { state?: GameState; events: Event[] } | undefined,
  localNow: number,
): Folded {
  if (!result?.state) return f;
  let g = f;
  for (const e of result.events) g = fold(g, e, result.state, localNow);
  return foldState(g, result.state, localNow);
}

/** A player's clock as shown at local time `localNow`. */
export function displayClock(f: Folded, color: "B" | "W", localNow: number): ClockView {
  const s = f.state;
  const tc = s?.settings?.timeControl;
  const serverNow = localNow + f.offsetMs;
  const snapshot = color === "B" ? s?.blackClock : s?.whiteClock;
  if (s?.phase === Phase.PLAYING && f.turn && f.turn.color === color && snapshot?.running) {
    return clockView(f.turn.clock, tc, f.turn.at, serverNow);
  }
  return clockView(snapshot, tc, f.snapshotAt, serverNow);
}

function moveEntry(e: Event, size: number, moves: MoveEntry[]): MoveEntry | "undo" | undefined {
  const color = e.color === Color.BLACK ? "B" : "W";
  const number = moves.length + 1;
  const seq = Number(e.seq);
  switch (e.kind) {
    case "move_played":
      return e.point ? { seq, number, color, text: pointName(e.point, size) } : undefined;
    case "passed":
      // "Declare the end" is a pass that says so: listed as such, not as a plain pass.
      return { seq, number, color, text: payload(e).declared_end ? "end" : "pass" };
    case "move_voided":
      return { seq, number, color, text: "void" };
    case "move_taken_back":
      return "undo";
    default:
      return undefined;
  }
}

/** An event's payload (the library's JSON of the event kind); empty when unreadable. */
export function payload(e: Event): Record<string, unknown> {
  try {
    const p = JSON.parse(e.payloadJson || "{}") as unknown;
    return p && typeof p === "object" ? (p as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** A referee call from an `announcement` event's payload (C2). */
export interface Call {
  color: "B" | "W";
  /** Seconds used in the byo-yomi period (30, 40, 50, 55, 58), or undefined for a count. */
  seconds?: number;
  /** In the last period: the count 1..9. */
  count?: number;
  periodsLeft: number;
}

export function announcement(e: Event): Call | undefined {
  if (e.kind !== "announcement") return undefined;
  try {
    const p = JSON.parse(e.payloadJson) as { seconds?: number; count?: number | null; periods_left?: number };
    return {
      color: e.color === Color.BLACK ? "B" : "W",
      seconds: p.count == null ? p.seconds : undefined,
      count: p.count ?? undefined,
      periodsLeft: p.periods_left ?? 0,
    };
  } catch {
    return undefined;
  }
}

/** What a clock shows now. */
export interface ClockView {
  /** "12:04", "0:09", "—" with no clock. */
  text: string;
  /** Byo-yomi periods or Canadian stones left, when in overtime. */
  detail: string;
  overtime: boolean;
  /** Ten seconds or less left in the current period (or main time). */
  low: boolean;
  flagged: boolean;
  running: boolean;
}

export function formatMs(ms: number): string {
  const s = Math.max(0, Math.ceil(ms / 1000));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = String(s % 60).padStart(2, "0");
  return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${sec}` : `${m}:${sec}`;
}

/**
 * A clock as displayed at server time `serverNow`. The server's snapshot is the truth
 * (`snapshotAt`); a running clock is counted down locally only for display. The flag is
 * never decided here: only `clock.flagged` (the server's) shows a time loss.
 */
export function clockView(
  clock: ClockState | undefined,
  tc: TimeControl | undefined,
  snapshotAt: number,
  serverNow: number,
): ClockView {
  const kind = tc?.kind.case;
  const base = { flagged: !!clock?.flagged, running: !!clock?.running };
  if (!clock || !kind || kind === "none") {
    return { ...base, text: "—", detail: "", overtime: false, low: false };
  }
  // A flagged clock has no time left, whatever its last reading (the server stops it with
  // the period it was in): it reads 0:00, with no periods beside it.
  if (clock.flagged) return { ...base, text: formatMs(0), detail: "", overtime: false, low: true };
  const elapsed = clock.running ? Math.max(0, serverNow - snapshotAt) : 0;
  const main = Number(clock.mainMs);
  const view = (left: number, detail: string, overtime: boolean): ClockView => ({
    ...base,
    text: formatMs(left),
    detail,
    overtime,
    low: left <= 10_000,
  });
  if (kind === "absolute" || kind === "fischer") return view(Math.max(0, main - elapsed), "", false);
  if (kind === "gamePlusMove") {
    // Game time, and the limit of this move beside it.
    const move = Math.max(0, Number(clock.periodMs) - elapsed);
    return view(Math.max(0, main - elapsed), formatMs(move), false);
  }
  const full = configuredPeriod(tc);
  if (main > elapsed) {
    const detail = kind === "byoYomi" ? `${clock.periods}×${formatMs(full)}` : `${clock.stones}/${formatMs(full)}`;
    return view(main - elapsed, detail, false);
  }
  let rest = elapsed - main;
  if (kind === "byoYomi") {
    // Each turn in byo-yomi starts a full period; a period used up entirely is gone (C2).
    let periods = clock.periods;
    while (rest >= full && periods > 1) {
      rest -= full;
      periods -= 1;
    }
    return view(Math.max(0, full - rest), `${periods}`, true);
  }
  // Canadian: the block's time runs on across moves (the reading says what is left).
  const block = main > 0 ? full : Number(clock.periodMs);
  return view(Math.max(0, block - rest), `${clock.stones}`, true);
}

function configuredPeriod(tc: TimeControl | undefined): number {
  const k = tc?.kind;
  if (k?.case === "byoYomi" || k?.case === "canadian") return Number(k.value.periodMs);
  return 0;
}

/** Rows of the board: "x" Black, "o" White, "." empty (the server's encoding). */
export function stoneAt(state: GameState, x: number, y: number): "B" | "W" | undefined {
  const c = state.board[y]?.[x];
  return c === "x" ? "B" : c === "o" ? "W" : undefined;
}

/** The chain through (x, y): the stones a click on a dead stone toggles together. */
export function chainAt(state: GameState, x: number, y: number): Point[] {
  const color = stoneAt(state, x, y);
  if (!color) return [];
  const size = state.board.length;
  const seen = new Set<number>();
  const out: { x: number; y: number }[] = [];
  const stack: [number, number][] = [[x, y]];
  while (stack.length) {
    const [cx, cy] = stack.pop()!;
    const key = cy * size + cx;
    if (seen.has(key) || cx < 0 || cy < 0 || cx >= size || cy >= size) continue;
    if (stoneAt(state, cx, cy) !== color) continue;
    seen.add(key);
    out.push({ x: cx, y: cy });
    stack.push([cx + 1, cy], [cx - 1, cy], [cx, cy + 1], [cx, cy - 1]);
  }
  return out as Point[];
}

/** The dead-stone list after toggling the chain at (x, y). */
export function toggleDead(state: GameState, x: number, y: number): { x: number; y: number }[] {
  const chain = chainAt(state, x, y);
  const key = (p: { x: number; y: number }) => `${p.x},${p.y}`;
  const dead = new Map(state.deadStones.map((p) => [key(p), { x: p.x, y: p.y }]));
  const wasDead = chain.some((p) => dead.has(key(p)));
  for (const p of chain) {
    if (wasDead) dead.delete(key(p));
    else dead.set(key(p), { x: p.x, y: p.y });
  }
  return [...dead.values()];
}

/** Which colour a seat plays, once colours are known. */
export function myColor(state: GameState, seat: "host" | "guest" | undefined): "B" | "W" | undefined {
  if (!seat || state.blackSeat === 0) return undefined;
  return seatOf(state, "B") === seat ? "B" : "W";
}

/** The seat that plays `color`, once colours are known (`blackSeat` 1 is the host). */
export function seatOf(state: GameState, color: "B" | "W"): "host" | "guest" | undefined {
  if (state.blackSeat === 0) return undefined;
  const hostIsBlack = state.blackSeat === 1;
  return (color === "B") === hostIsBlack ? "host" : "guest";
}

export const isOver = (s: GameState | undefined) => s?.phase === Phase.FINISHED;

/** The variant: the colour of the next seat stone (Black, White, Black, White). */
export function nextSeatStone(state: GameState): "B" | "W" {
  const placed = state.board.reduce((n, row) => n + [...row].filter((c) => c !== ".").length, 0);
  return placed % 2 === 0 ? "B" : "W";
}

/**
 * Words for a refusal, chosen by the ErrorInfo reason the server sends (or the kind of
 * failure when there is none): the server's own message, with its requirement codes, is
 * for the tooltip only.
 */
export function refusalKey(why: { kind: string; reason: string }): Key {
  const byReason: Record<string, Key> = {
    ko: "whyKo",
    superko: "whySuperko",
    suicide: "whySuicide",
    occupied: "whyOccupied",
    off_board: "whyOffBoard",
    not_your_turn: "whyNotYourTurn",
    game_over: "whyGameOver",
    stale: "stale",
    opponent_present: "whyOpponentPresent",
    wrong_phase: "whyWrongPhase",
    nothing_pending: "whyNothingPending",
    not_permitted: "whyNotPermitted",
    undo_not_allowed: "whyUndoNotAllowed",
    commitment_mismatch: "whyCommitment",
    first_line: "whyFirstLine",
    bids_not_sealed: "whyBidsNotSealed",
    game_full: "whyGameFull",
    missing_token: "seatLost",
    wrong_token: "seatLost",
    game_not_found: "gameNotFound",
    opponent_offline: "whyOpponentOffline",
    too_many_challenges: "whyTooManyChallenges",
    invalid_argument: "whyInvalid",
    bad_setting: "whyInvalid",
  };
  if (byReason[why.reason]) return byReason[why.reason]!;
  if (why.kind === "network") return "whyNetwork";
  if (why.kind === "seat") return "seatLost";
  if (why.kind === "not_found") return "gameNotFound";
  return "whyRefused";
}

/** The requests (undo, draw) waiting for an answer, as the player at `me` sees them. */
export function requestsOf(
  state: GameState,
  me: "B" | "W" | undefined,
): { mine: ("undo" | "draw")[]; theirs: ("undo" | "draw")[] } {
  const c = (x: Color) => (x === Color.BLACK ? "B" : x === Color.WHITE ? "W" : undefined);
  const out = { mine: [] as ("undo" | "draw")[], theirs: [] as ("undo" | "draw")[] };
  if (!me) return out;
  for (const [what, from] of [["undo", c(state.pendingUndoFrom)], ["draw", c(state.pendingDrawFrom)]] as const) {
    if (from === me) out.mine.push(what);
    else if (from) out.theirs.push(what);
  }
  return out;
}

/** Something that happened that both players (and spectators) are told in words. */
export interface Notice {
  /** The words' key; `{who}` in them is the colour that acted. */
  key: Key;
  who: "B" | "W";
}

/** The answer to a request, and the other happenings worth a line (not the moves). */
export function eventNotice(e: Event): Notice | undefined {
  const who = e.color === Color.BLACK ? "B" : "W";
  const keys: Record<string, Key> = {
    undo_declined: "noticeUndoDeclined",
    move_taken_back: "noticeUndoAccepted",
    draw_declined: "noticeDrawDeclined",
    score_disputed: "noticeScoreDisputed",
  };
  const key = keys[e.kind];
  return key && e.color !== Color.UNSPECIFIED ? { key, who } : undefined;
}

/** A seat's presence as shown at server time `serverNow`. */
export interface PresenceView {
  /** Unknown until the server has said (an older server, or a state replayed). */
  known: boolean;
  present: boolean;
  /** How long ago the seat was last here, when absent. */
  awayMs: number;
  /** When absent from a game in play: how long until the game may be claimed (0: now). */
  claimInMs: number | undefined;
}

export function presenceView(p: SeatPresence | undefined, serverNow: number): PresenceView {
  if (!p) return { known: false, present: true, awayMs: 0, claimInMs: undefined };
  const claimAt = p.claimableAtMs === undefined ? undefined : Number(p.claimableAtMs);
  return {
    known: true,
    present: p.present,
    awayMs: p.present ? 0 : Math.max(0, serverNow - Number(p.lastSeenMs)),
    claimInMs: p.present || claimAt === undefined ? undefined : Math.max(0, claimAt - serverNow),
  };
}

/** The presence of the seat that plays `color`. */
export function presenceOf(state: GameState, color: "B" | "W"): SeatPresence | undefined {
  const seat = seatOf(state, color);
  return seat === "host" ? state.hostPresence : seat === "guest" ? state.guestPresence : undefined;
}

/** The opponent's presence as the player sees it, and whether the game may be claimed
 * (absent from a game in play or being scored, with a claim time from the server). */
export function opponentAway(s: GameState, me: "B" | "W" | undefined, serverNow: number): { away?: PresenceView; claimable: boolean } {
  const opponent: "B" | "W" | undefined = me === "B" ? "W" : me === "W" ? "B" : undefined;
  const away = opponent ? presenceView(presenceOf(s, opponent), serverNow) : undefined;
  const inPlay = s.phase === Phase.PLAYING || s.phase === Phase.SCORING;
  return { away, claimable: !!me && inPlay && !!away?.known && !away.present && away.claimInMs !== undefined };
}

/** The variant, once both bids are revealed and colours follow: who bid what, who plays
 * Black, the komi, and whether equal bids went by lot. */
export interface BidOutcome {
  hostBid: number;
  guestBid: number;
  black: "host" | "guest";
  komi: number;
  byLot: boolean;
}

export function bidOutcome(state: GameState): BidOutcome | undefined {
  const { hostBid, guestBid } = state;
  if (hostBid === undefined || guestBid === undefined) return undefined;
  const black = state.blackSeat === 1 ? "host" : state.blackSeat === 2 ? "guest" : undefined;
  if (!black) return undefined;
  const komi = state.settings?.komi ?? Math.max(hostBid, guestBid);
  return { hostBid, guestBid, black, komi, byLot: hostBid === guestBid };
}

/** The rating change a finished game made, from the player's rating history. */
export function ratingChangeFor(
  changes: Pick<RatingChange, "gameId" | "ratingBefore" | "rating">[],
  gameId: string,
): { before: number; after: number; delta: number } | undefined {
  const c = changes.find((x) => x.gameId === gameId);
  if (!c) return undefined;
  const before = Math.round(c.ratingBefore);
  const after = Math.round(c.rating);
  return { before, after, delta: after - before };
}

/** Whether a tap on the board only proposes a move, played on a second tap or Confirm:
 * on boards of 13 and more, where a finger covers several points, if the player wants it. */
export function needsConfirm(confirmPref: boolean, size: number): boolean {
  return confirmPref && size >= 13;
}

