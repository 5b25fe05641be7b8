// The players' pages' pure logic: the rank with "?" while provisional, the header's
// rating, the rating chart's scaling, a game's outcome, the knockout bracket's columns.
import { expect, test } from "@playwright/test";
import { bracketColumns, boardWinner, knockoutRounds, type BoardLike } from "../../src/bracket.js";
import { headlineRating, identityLine, niceTicks, outcomeKey, rankLabel, ratingChart, type RatingLike } from "../../src/rating.js";

const rating = (extra: Partial<RatingLike> = {}): RatingLike => ({
  boardSize: 9,
  rating: 1500,
  rank: "6k",
  games: 1,
  lastMs: 1000n,
  provisional: true,
  ...extra,
});

test("the rank carries a ? while provisional, and is absent before a rated game", () => {
  expect(rankLabel(rating())).toBe("6k?");
  expect(rankLabel(rating({ provisional: false, rank: "1d" }))).toBe("1d");
  expect(rankLabel(rating({ games: 0 }))).toBe("");
  expect(rankLabel(undefined)).toBe("");
});

test("the header names the board size played rated most recently", () => {
  const nine = rating({ boardSize: 9, rating: 1612.4, lastMs: 5000n, rank: "5k" });
  const nineteen = rating({ boardSize: 19, rating: 1400, lastMs: 9000n, rank: "8k", provisional: false });
  expect(headlineRating([nine, nineteen])).toBe(nineteen);
  expect(identityLine("Alice", [nine])).toBe("Alice · 1612 · 5k?");
  expect(identityLine("Alice", [nine, nineteen])).toBe("Alice · 1400 · 8k");
  expect(identityLine("Alice", [])).toBe("Alice");
  expect(identityLine("Alice", [rating({ games: 0 })])).toBe("Alice");
});

test("chart ticks are round numbers covering the range", () => {
  expect(niceTicks(1432, 1588, 4)).toEqual([1450, 1500, 1550]);
  expect(niceTicks(1432, 1588, 8)).toEqual([1440, 1460, 1480, 1500, 1520, 1540, 1560, 1580]);
  expect(niceTicks(0, 10, 5)).toEqual([0, 2, 4, 6, 8, 10]);
  expect(niceTicks(3, 3)).toEqual([3]);
});

test("the rating chart reads the server's newest-first history oldest first, scaled into the plot", () => {
  // Newest first, as GetRatingHistory answers: 1500 -> 1580 -> 1540.
  const changes = [
    { timeMs: 2000n, ratingBefore: 1580, rating: 1540, deviation: 250 },
    { timeMs: 1000n, ratingBefore: 1500, rating: 1580, deviation: 300 },
  ];
  const c = ratingChart(changes, 600, 220);
  expect(c.points.map((p) => p.rating)).toEqual([1500, 1580, 1540]);
  expect(c.points.map((p) => p.game)).toEqual([0, 1, 2]);
  expect(c.points[0]!.timeMs).toBeUndefined();
  expect(c.points[1]!.timeMs).toBe(1000);
  // Left to right in game order, from the plot's left edge to its right edge.
  expect(c.points[0]!.x).toBe(c.plot.left);
  expect(c.points[2]!.x).toBe(c.plot.right);
  // Higher ratings are higher up (smaller y), all inside the plot.
  expect(c.points[1]!.y).toBeLessThan(c.points[2]!.y);
  expect(c.points[2]!.y).toBeLessThan(c.points[0]!.y);
  for (const p of c.points) {
    expect(p.y).toBeGreaterThanOrEqual(c.plot.top);
    expect(p.y).toBeLessThanOrEqual(c.plot.bottom);
  }
  expect(c.line.startsWith("M")).toBe(true);
  expect(c.line.split("L")).toHaveLength(3);
  // The deviation band: two edges of one point per game, closed.
  expect(c.band.endsWith("Z")).toBe(true);
  expect(c.band.split(/[ML]/).filter((s) => s.trim())).toHaveLength(4);
  // Ticks inside the plot, labelled with round ratings and game counts.
  for (const tk of c.yTicks) expect(tk.y).toBeGreaterThanOrEqual(c.plot.top - 1e-9);
  expect(c.xTicks.map((tk) => tk.value)).toEqual([0, 1, 2]);
});

test("an empty history draws an empty chart", () => {
  const c = ratingChart([]);
  expect(c.points).toEqual([]);
  expect(c.line).toBe("");
  expect(c.band).toBe("");
});

test("a game's outcome from the player's side", () => {
  expect(outcomeKey({ result: "W+R", score: 1 })).toBe("outcomeWin");
  expect(outcomeKey({ result: "B+3.5", score: 0 })).toBe("outcomeLoss");
  expect(outcomeKey({ result: "0", score: 0.5 })).toBe("outcomeDraw");
  expect(outcomeKey({ result: "Void", score: 0 })).toBeUndefined();
});

const board = (slot: number, black: string, white: string, result = 0, attempt = 0): BoardLike => ({
  gameId: `g${slot}-${attempt}`,
  blackPlayerId: black,
  whitePlayerId: white,
  slot,
  attempt,
  result,
  walkover: false,
});

test("the knockout bracket: played rounds, then empty places to the final", () => {
  expect(knockoutRounds(1)).toBe(1);
  expect(knockoutRounds(2)).toBe(2);
  expect(knockoutRounds(4)).toBe(3);
  const groupRound = { number: 1, stage: 1, boards: [board(0, "a", "b", 1)] };
  const semis = { number: 4, stage: 2, boards: [board(0, "a", "d", 2), board(1, "c", "b", 3), board(1, "b", "c", 1, 1)] };
  const cols = bracketColumns([groupRound, semis], 2);
  expect(cols).toHaveLength(2);
  expect(cols[0]).toHaveLength(2);
  expect(cols[0]![0]!.winner).toBe("d");
  // A drawn match replayed: its last game decides.
  expect(cols[0]![1]!.board!.attempt).toBe(1);
  expect(cols[0]![1]!.winner).toBe("b");
  // The final, not paired yet.
  expect(cols[1]).toEqual([{ slot: 0, players: ["", ""] }]);
  expect(boardWinner({ ...board(0, "a", "", 0), walkover: true })).toBe("a");
  expect(boardWinner(board(0, "a", "b", 4))).toBeUndefined();
});
