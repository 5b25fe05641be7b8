// The review's pure parts: the game replayed to any move (captures, setup stones, passes,
// a record that does not add up), the setup read from the events, the win-rate graph's
// geometry, a reviewed move in words' terms, stepping through the moves, refusals.
import { expect, test } from "@playwright/test";
import { create } from "@bufbuild/protobuf";
import { Color, EventSchema, GameSettingsSchema, GameStateSchema, MoveReviewSchema, Phase } from "../../src/gen/weiqi/v1/game_pb.js";
import { fixedHandicap, replay, reviewedMoves, setupOf, startingStones, type Played } from "../../src/replay.js";
import { blackRates, moveLine, refusal, step, winRateChart } from "../../src/review.js";
import { Code, ConnectError } from "../../src/client.js";
import { ErrorInfoSchema, RetryInfoSchema } from "../../src/gen/google/rpc/error_details_pb.js";
import { empty, fold } from "../../src/state.js";

/** GTP's vertex on 9x9 as a point (x from the left, y from the top). */
const pt = (v: string) => ({ x: "ABCDEFGHJ".indexOf(v[0]!), y: 9 - Number(v.slice(1)) });
const moves = (vs: string[], first: "B" | "W" = "B"): Played[] =>
  vs.map((v, k) => ({ color: (k % 2 === 0) === (first === "B") ? "B" : "W", point: v === "pass" ? undefined : pt(v) }));
const stoneAt = (rows: string[], v: string) => rows[pt(v).y]![pt(v).x];

/** The game of the server's review test: Black misses the capture at B5 (move 15, J9)
 * and White takes A6 and B6 with it. */
const BLUNDER = ["A6", "A5", "B6", "B4", "C5", "A4", "C4", "A3", "B3", "A7", "A2", "B7", "G5", "C6", "J9", "B5"];

test("a game replayed move by move: the start, each move, White's capture at the end", () => {
  const positions = replay(9, [], moves(BLUNDER));
  expect(positions).toHaveLength(17);
  expect(positions[0]).toEqual(Array(9).fill("........."));
  expect(stoneAt(positions[1]!, "A6")).toBe("x");
  expect(stoneAt(positions[2]!, "A5")).toBe("o");
  // After move 15 the two black stones still stand; move 16 takes them.
  expect([stoneAt(positions[15]!, "A6"), stoneAt(positions[15]!, "B6"), stoneAt(positions[15]!, "J9")]).toEqual(["x", "x", "x"]);
  // The final position, row by row as the server's board writes it.
  expect(positions[16]).toEqual([
    "........x",
    ".........",
    "oo.......",
    "..o......",
    "oox...x..",
    "oox......",
    "ox.......",
    "x........",
    ".........",
  ]);
});

test("captures: a stone, a chain whole, the opponent's before the mover's own", () => {
  // Black's corner stone at A9, taken by White's B9 and A8.
  const corner = replay(9, [], moves(["A9", "B9", "pass", "A8"]));
  expect(stoneAt(corner[3]!, "A9")).toBe("x");
  expect(stoneAt(corner[4]!, "A9")).toBe(".");
  // A two-stone chain on the edge.
  const chain = replay(9, [], moves(["A9", "A8", "B9", "B8", "pass", "C9"]));
  expect(chain.at(-1)!.slice(0, 2)).toEqual(["..o......", "oo......."]);
  // Black's B9 has no liberty of its own but takes White's A9 first, and so stays.
  const around = [
    { ...pt("A9"), color: "W" as const },
    { ...pt("A8"), color: "B" as const },
    { ...pt("C9"), color: "W" as const },
    { ...pt("B8"), color: "W" as const },
  ];
  const taking = replay(9, around, [{ color: "B", point: pt("B9") }]);
  expect([stoneAt(taking[1]!, "A9"), stoneAt(taking[1]!, "B9")]).toEqual([".", "x"]);
  // A stone that takes nothing and has no liberty goes (a suicide, where rules allow it).
  const suicide = replay(9, [{ ...pt("B9"), color: "B" }, { ...pt("A8"), color: "B" }], [{ color: "W", point: pt("A9") }]);
  expect([stoneAt(suicide[1]!, "A9"), stoneAt(suicide[1]!, "B9"), stoneAt(suicide[1]!, "A8")]).toEqual([".", "x", "x"]);
});

test("passes leave the board; a record that does not add up (a point played twice, off the board) does not throw", () => {
  const p = replay(9, [], moves(["E5", "pass", "E5", "Z1"]));
  expect(p).toHaveLength(5);
  expect(p[2]).toEqual(p[1]);
  expect(stoneAt(p[3]!, "E5")).toBe("x");
  expect(p[4]).toEqual(p[3]);
  expect(() => replay(9, [{ x: 20, y: 20, color: "B" }], [{ color: "W", point: { x: -1, y: 3 } }])).not.toThrow();
});

test("handicap stones: fixed ones from the settings (as the server places them), free ones and seat stones from the events", () => {
  // 19x19: D4, Q16, D16, Q4 for four.
  expect(fixedHandicap(19, 4)).toEqual([{ x: 3, y: 15 }, { x: 15, y: 3 }, { x: 3, y: 3 }, { x: 15, y: 15 }]);
  expect(fixedHandicap(9, 5).at(-1)).toEqual({ x: 4, y: 4 });
  expect(fixedHandicap(9, 1)).toEqual([]);
  expect(fixedHandicap(8, 5)).toEqual([]);
  const settings = (handicap: number, freeHandicap: boolean) => create(GameSettingsSchema, { boardSize: 9, handicap, freeHandicap });
  expect(startingStones(settings(2, false), [])).toEqual([
    { x: 2, y: 6, color: "B" },
    { x: 6, y: 2, color: "B" },
  ]);
  const placed = setupOf(create(EventSchema, { kind: "handicap_placed", payloadJson: '{"type":"handicap_placed","points":[{"x":1,"y":1},{"x":7,"y":7}]}' }));
  expect(placed).toEqual([
    { x: 1, y: 1, color: "B" },
    { x: 7, y: 7, color: "B" },
  ]);
  expect(startingStones(settings(2, true), placed)).toEqual(placed);
  expect(setupOf(create(EventSchema, { kind: "seat_stone_placed", payloadJson: '{"type":"seat_stone_placed","color":"white","point":{"x":3,"y":4}}' }))).toEqual([
    { x: 3, y: 4, color: "W" },
  ]);
  expect(setupOf(create(EventSchema, { kind: "handicap_placed", payloadJson: "not json" }))).toEqual([]);
  expect(setupOf(create(EventSchema, { kind: "move_played", payloadJson: "{}" }))).toEqual([]);
  // White moves first after a handicap; the stones stay under the moves.
  const p = replay(9, startingStones(settings(2, false), []), moves(["E5"], "W"));
  expect(stoneAt(p[1]!, "C3")).toBe("x");
  expect(stoneAt(p[1]!, "E5")).toBe("o");
});

test("the game's record keeps the setup stones its events placed", () => {
  const state = create(GameStateSchema, { gameId: "g", seq: 2n, phase: Phase.PLAYING, settings: { boardSize: 9, handicap: 2, freeHandicap: true } });
  let f = empty();
  f = fold(f, create(EventSchema, { seq: 1n, kind: "handicap_placed", payloadJson: '{"type":"handicap_placed","points":[{"x":2,"y":2},{"x":6,"y":6}]}' }), state, 0);
  f = fold(f, create(EventSchema, { seq: 2n, kind: "move_played", color: Color.WHITE, point: { x: 4, y: 4 } }), state, 0);
  expect(f.setup).toEqual([
    { x: 2, y: 2, color: "B" },
    { x: 6, y: 6, color: "B" },
  ]);
  expect(f.moves.map((m) => m.text)).toEqual(["E5"]);
});

const reviewed = (number: number, color: Color, before: number, after: number, extra: Record<string, unknown> = {}) =>
  create(MoveReviewSchema, { number, color, blackBefore: before, blackAfter: after, ...extra });

test("a review's moves replay as played, a pass as a pass", () => {
  const r = [reviewed(1, Color.BLACK, 0.5, 0.6, { played: { x: 4, y: 4 } }), reviewed(2, Color.WHITE, 0.6, 0.6)];
  expect(reviewedMoves(r)).toEqual([
    { color: "B", point: { x: 4, y: 4 } },
    { color: "W", point: undefined },
  ]);
});

test("the win-rate graph: one point a position, 100% at the top, the mistakes on the line", () => {
  const r = {
    moves: [reviewed(1, Color.BLACK, 0.5, 0.75), reviewed(2, Color.WHITE, 0.75, 1), reviewed(3, Color.BLACK, 1, 0)],
    mistakes: [3, 9],
  };
  expect(blackRates(r.moves)).toEqual([0.5, 0.75, 1, 0]);
  const c = winRateChart(r, 334, 126);
  // The plot runs from x 34 to 328, y 8 (100%) to 108 (0%).
  expect(c.xs).toEqual([34, 132, 230, 328]);
  expect(c.line).toBe("M34,58L132,33L230,8L328,108");
  expect(c.area).toBe("M34,58L132,33L230,8L328,108L328,108L34,108Z");
  expect(c.half).toBe(58);
  // A mistake number past the game's moves is left out.
  expect(c.marks).toEqual([{ move: 3, x: 328, y: 108 }]);
  expect(winRateChart({ moves: [], mistakes: [] })).toMatchObject({ xs: [], line: "", area: "", marks: [] });
});

test("a reviewed move in words' terms: board coordinates, a pass, whole percent", () => {
  const m = reviewed(15, Color.BLACK, 0.62, 0.36, { played: pt("J9"), best: pt("B5"), loss: 0.384 });
  expect(moveLine(m, 9)).toEqual({ number: 15, colour: "B", played: "J9", best: "B5", loss: 38, blackAfter: 36 });
  expect(moveLine(reviewed(2, Color.WHITE, 0.5, 0.5), 9)).toMatchObject({ colour: "W", played: undefined, best: undefined, loss: 0 });
});

test("stepping: back from the end to the last move, not before the first, past the last to the end", () => {
  expect(step(undefined, -1, 16)).toBe(16);
  expect(step(16, 1, 16)).toBeUndefined();
  expect(step(5, -1, 16)).toBe(4);
  expect(step(1, -1, 16)).toBe(1);
  expect(step(undefined, 1, 16)).toBeUndefined();
  expect(step(undefined, -1, 0)).toBeUndefined();
});

test("refusals in words: a full queue with when to retry (RetryInfo), else the server's message", () => {
  const info = (reason: string) => ({ desc: ErrorInfoSchema, value: { reason, domain: "weiqi.v1" } });
  const full = (retry?: { seconds: bigint; nanos: number }) =>
    new ConnectError("the server has 16 reviews waiting; retry later", Code.ResourceExhausted, undefined, [
      info("review_queue_full"),
      ...(retry ? [{ desc: RetryInfoSchema, value: { retryDelay: retry } }] : []),
    ]);
  expect(refusal(full({ seconds: 5n, nanos: 0 }))).toEqual({ key: "reviewBusy", vars: { s: "5" } });
  expect(refusal(full({ seconds: 0n, nanos: 200_000_000 }))).toEqual({ key: "reviewBusy", vars: { s: "1" } });
  expect(refusal(full())).toEqual({ key: "reviewBusyLater" });
  const early = new ConnectError("not allowed in phase Playing", Code.FailedPrecondition, undefined, [info("wrong_phase")]);
  expect(refusal(early)).toEqual({ text: "not allowed in phase Playing" });
  expect(refusal(new ConnectError("down", Code.Unavailable))).toEqual({ key: "whyNetwork" });
});
