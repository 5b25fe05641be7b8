// Ratings as the app shows them: the rank with OGS's "?" while provisional, the one
// rating the header names, and the geometry of a rating-history chart (pure, so the unit
// tests check it without a browser).

/** The fields of a `Rating` the app reads (the generated message has more). */
export interface RatingLike {
  boardSize: number;
  rating: number;
  rank: string;
  games: number;
  lastMs: bigint | number;
  provisional: boolean;
}

/** "6k", or "6k?" while the rating is provisional; nothing before a rated game. */
export function rankLabel(r: RatingLike | undefined): string {
  if (!r || r.games === 0 || !r.rank) return "";
  return r.provisional ? `${r.rank}?` : r.rank;
}

/** The rating the header shows: the board size played rated most recently (ties: more
 * games, then the larger board), none before any rated game. */
export function headlineRating<R extends RatingLike>(ratings: readonly R[]): R | undefined {
  let best: R | undefined;
  for (const r of ratings) {
    if (r.games === 0) continue;
    if (
      !best ||
      Number(r.lastMs) > Number(best.lastMs) ||
      (Number(r.lastMs) === Number(best.lastMs) && (r.games > best.games || (r.games === best.games && r.boardSize > best.boardSize)))
    )
      best = r;
  }
  return best;
}

/** "Alice · 1500 · 6k?"; just the name before any rated game. */
export function identityLine(name: string, ratings: readonly RatingLike[]): string {
  const r = headlineRating(ratings);
  return r ? `${name} · ${Math.round(r.rating)} · ${rankLabel(r)}` : name;
}

/** The fields of a `RatingChange` the chart reads. */
export interface ChangeLike {
  timeMs: bigint | number;
  ratingBefore: number;
  rating: number;
  deviation: number;
}

export interface ChartPoint {
  x: number;
  y: number;
  /** The rating at this point (before the first game for point 0). */
  rating: number;
  /** Rated games played by then. */
  game: number;
  /** When the game ended (ms); none for the starting point. */
  timeMs?: number;
}

export interface Chart {
  width: number;
  height: number;
  /** The plot area inside the axes. */
  plot: { left: number; top: number; right: number; bottom: number };
  points: ChartPoint[];
  /** The line through the points (an SVG path). */
  line: string;
  /** rating ± deviation after each game (an SVG path, a closed polygon); empty with no games. */
  band: string;
  yTicks: { value: number; y: number }[];
  xTicks: { value: number; x: number }[];
}

/** Round steps (1, 2, 5 × 10^n) giving about `count` ticks from `min` to `max`. */
export function niceTicks(min: number, max: number, count = 5): number[] {
  if (!(max > min)) return [Math.round(min)];
  const raw = (max - min) / Math.max(1, count);
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? 10 * mag;
  const out: number[] = [];
  for (let v = Math.ceil(min / step) * step; v <= max + 1e-9; v += step) out.push(Math.round(v * 1e6) / 1e6);
  return out;
}

/**
 * The chart of a rating history as the server gives it (newest first): x is the number of
 * rated games played (a time axis would squeeze a day's games into one spot), y the
 * rating, the line starting at the rating before the oldest game. The y range fits the
 * line with a margin; the deviation band may run past it and is clipped by the drawing.
 */
export function ratingChart(changesNewestFirst: readonly ChangeLike[], width = 600, height = 220): Chart {
  const changes = [...changesNewestFirst].reverse();
  const plot = { left: 48, top: 10, right: width - 12, bottom: height - 34 };
  const ratings = changes.length ? [changes[0]!.ratingBefore, ...changes.map((c) => c.rating)] : [];
  const lo = Math.min(...ratings, Infinity);
  const hi = Math.max(...ratings, -Infinity);
  const margin = Math.max(20, (hi - lo) * 0.1);
  const yMin = changes.length ? lo - margin : 1400;
  const yMax = changes.length ? hi + margin : 1600;
  const n = Math.max(1, changes.length);
  const xOf = (game: number) => plot.left + ((plot.right - plot.left) * game) / n;
  const yOf = (r: number) => plot.bottom - ((plot.bottom - plot.top) * (r - yMin)) / (yMax - yMin);
  const points: ChartPoint[] = ratings.map((rating, game) => ({
    x: xOf(game),
    y: yOf(rating),
    rating,
    game,
    timeMs: game === 0 ? undefined : Number(changes[game - 1]!.timeMs),
  }));
  const f = (v: number) => v.toFixed(1);
  const line = points.map((p, i) => `${i ? "L" : "M"}${f(p.x)},${f(p.y)}`).join(" ");
  const upper = changes.map((c, i) => `${f(xOf(i + 1))},${f(yOf(c.rating + c.deviation))}`);
  const lower = changes.map((c, i) => `${f(xOf(i + 1))},${f(yOf(c.rating - c.deviation))}`).reverse();
  const band = changes.length ? `M${[...upper, ...lower].join(" L")} Z` : "";
  const yTicks = niceTicks(yMin, yMax, 4).map((value) => ({ value, y: yOf(value) }));
  const xTicks = niceTicks(0, n, Math.min(n, 6))
    .filter((v) => Number.isInteger(v))
    .map((value) => ({ value, x: xOf(value) }));
  return { width, height, plot, points, line, band, yTicks, xTicks };
}

/** Won / lost / drawn from the player's side (score 1, 0, 0.5); nothing for a game
 * without a result ("Void"). */
export function outcomeKey(g: { result: string; score: number }): "outcomeWin" | "outcomeLoss" | "outcomeDraw" | undefined {
  if (!g.result || g.result === "Void") return undefined;
  if (g.result === "0" || g.score === 0.5) return "outcomeDraw";
  return g.score === 1 ? "outcomeWin" : "outcomeLoss";
}
