// A game's review as the page shows it: the win-rate graph's geometry, a move of the
// review in the app's words' terms, stepping through the moves, a refusal in words. Pure,
// for the unit tests (game-review.tsx draws it).
import { failure, retryDelayMs } from "./client.js";
import { Color, type GameReview, type MoveReview } from "./gen/weiqi/v1/game_pb.js";
import type { Key } from "./i18n.js";
import type { Colour } from "./replay.js";
import { pointName } from "./state.js";

/** Black's win rate in each position: the start's, then after each move (0..1). */
export function blackRates(moves: readonly Pick<MoveReview, "blackBefore" | "blackAfter">[]): number[] {
  return moves.length ? [moves[0]!.blackBefore, ...moves.map((m) => m.blackAfter)] : [];
}

export interface WinRateChart {
  width: number;
  height: number;
  plot: { left: number; right: number; top: number; bottom: number };
  /** The x of each position: the start (0), then after move k (k). */
  xs: number[];
  /** Black's win rate over the game, and the same closed to the bottom (Black's share). */
  line: string;
  area: string;
  /** The y of 50%. */
  half: number;
  /** The biggest mistakes, biggest first, where they stand on the line. */
  marks: { move: number; x: number; y: number }[];
}

/** The graph of Black's win rate, 100% at the top, in a `width` x `height` box. */
export function winRateChart(review: Pick<GameReview, "moves" | "mistakes">, width = 320, height = 120): WinRateChart {
  const plot = { left: 34, right: width - 6, top: 8, bottom: height - 18 };
  const rates = blackRates(review.moves);
  const n = Math.max(1, rates.length - 1);
  const xs = rates.map((_, k) => plot.left + ((plot.right - plot.left) * k) / n);
  const y = (rate: number) => plot.bottom - (plot.bottom - plot.top) * Math.min(1, Math.max(0, rate));
  const pts = rates.map((r, k) => `${round(xs[k]!)},${round(y(r))}`);
  const line = pts.length ? `M${pts.join("L")}` : "";
  const area = pts.length ? `${line}L${round(xs.at(-1)!)},${plot.bottom}L${plot.left},${plot.bottom}Z` : "";
  const marks = review.mistakes
    .filter((k) => k >= 1 && k < rates.length)
    .map((k) => ({ move: k, x: round(xs[k]!), y: round(y(rates[k]!)) }));
  return { width, height, plot, xs: xs.map(round), line, area, half: round(y(0.5)), marks };
}

const round = (v: number) => Math.round(v * 10) / 10;

/** A reviewed move as the page says it: who, the points (undefined: a pass), the loss and
 * Black's win rate after it in whole percent. */
export interface MoveLine {
  number: number;
  colour: Colour;
  played: string | undefined;
  best: string | undefined;
  loss: number;
  blackAfter: number;
}

export function moveLine(m: MoveReview, size: number): MoveLine {
  return {
    number: m.number,
    colour: m.color === Color.WHITE ? "W" : "B",
    played: m.played ? pointName(m.played, size) : undefined,
    best: m.best ? pointName(m.best, size) : undefined,
    loss: Math.round(m.loss * 100),
    blackAfter: Math.round(m.blackAfter * 100),
  };
}

/**
 * The move shown after a step of `delta` from `at` (undefined: the final position, with
 * no move picked) in a game of `n` moves: a step back from the end picks the last move,
 * a step past the last move returns to the end, and the first move is as far back as it
 * goes.
 */
export function step(at: number | undefined, delta: number, n: number): number | undefined {
  if (n === 0) return undefined;
  const from = at ?? n + 1;
  const to = from + delta;
  if (to > n) return undefined;
  return Math.max(1, to);
}

/** Words to show: the app's own (with their blanks), or the server's message as it is. */
export type Said = { key: Key; vars?: Record<string, string> } | { text: string };

/** A refusal of ReviewGame or GetReview in words: a full queue says when to come back, as
 * the server's RetryInfo does; anything else is the server's own message. */
export function refusal(e: unknown): Said {
  const why = failure(e);
  if (why.reason === "review_queue_full") {
    const ms = retryDelayMs(e);
    return ms === undefined ? { key: "reviewBusyLater" } : { key: "reviewBusy", vars: { s: String(Math.max(1, Math.ceil(ms / 1000))) } };
  }
  if (why.kind === "network") return { key: "whyNetwork" };
  return { text: why.message };
}
