// The client-side state: folding events (no duplicates after a reconnect's replay, undo,
// out-of-order states) and what the clocks show (byo-yomi periods, Canadian, the flag
// only from the server).
import { expect, test } from "@playwright/test";
import { create } from "@bufbuild/protobuf";
import {
  ClockStateSchema,
  Color,
  EventSchema,
  GameSettingsSchema,
  GameStateSchema,
  Phase,
  TimeControlSchema,
} from "../../src/gen/weiqi/v1/game_pb.js";
import { announcement, clockView, displayClock, empty, fold, formatMs, pointName, toggleDead } from "../../src/state.js";

const byoYomi = (mainMs: number, periods: number, periodMs: number) =>
  create(TimeControlSchema, { kind: { case: "byoYomi", value: { mainMs: BigInt(mainMs), periods, periodMs: BigInt(periodMs) } } });

function state(seq: number, extra: Record<string, unknown> = {}) {
  return create(GameStateSchema, {
    gameId: "g",
    seq: BigInt(seq),
    phase: Phase.PLAYING,
    settings: create(GameSettingsSchema, { boardSize: 9, timeControl: byoYomi(0, 3, 30_000) }),
    board: Array(9).fill("........."),
    serverTimeMs: BigInt(1_000_000 + seq * 1000),
    ...extra,
  });
}

function moveEvent(seq: number, color: Color, x: number, y: number, running: "B" | "W") {
  return create(EventSchema, {
    seq: BigInt(seq),
    timeMs: BigInt(1_000_000 + seq * 1000),
    kind: "move_played",
    color,
    point: { x, y },
    blackClock: create(ClockStateSchema, { periods: 3, periodMs: 30_000n, running: running === "B" }),
    whiteClock: create(ClockStateSchema, { periods: 3, periodMs: 30_000n, running: running === "W" }),
  });
}

test("a replayed event is folded once (resume after a reconnect)", () => {
  let f = empty();
  f = fold(f, moveEvent(1, Color.BLACK, 2, 2, "W"), state(1), 0);
  f = fold(f, moveEvent(2, Color.WHITE, 6, 6, "B"), state(2), 0);
  // The stream resumes from seq 1 and sends 2 again, then 3.
  f = fold(f, moveEvent(2, Color.WHITE, 6, 6, "B"), state(2), 0);
  f = fold(f, moveEvent(3, Color.BLACK, 4, 4, "W"), state(3), 0);
  expect(f.seq).toBe(3);
  expect(f.moves.map((m) => `${m.color} ${m.text}`)).toEqual(["B C7", "W G3", "B E5"]);
});

test("an undo takes the last move off the list; passes and voided moves are listed", () => {
  let f = empty();
  f = fold(f, moveEvent(1, Color.BLACK, 0, 8, "W"), state(1), 0);
  f = fold(f, create(EventSchema, { seq: 2n, kind: "passed", color: Color.WHITE }), state(2), 0);
  f = fold(f, create(EventSchema, { seq: 3n, kind: "move_voided", color: Color.BLACK }), state(3), 0);
  f = fold(f, create(EventSchema, { seq: 4n, kind: "move_taken_back", color: Color.BLACK }), state(4), 0);
  expect(f.moves.map((m) => m.text)).toEqual(["A1", "pass"]);
});

test("an older state never replaces a newer one", () => {
  let f = empty();
  f = fold(f, moveEvent(5, Color.BLACK, 1, 1, "W"), state(5, { moveNumber: 5 }), 0);
  f = fold(f, moveEvent(4, Color.BLACK, 1, 1, "W"), state(4, { moveNumber: 4 }), 0);
  expect(f.state?.moveNumber).toBe(5);
});

test("coordinates skip I and count rows from the bottom", () => {
  expect(pointName({ x: 0, y: 0 }, 19)).toBe("A19");
  expect(pointName({ x: 8, y: 18 }, 19)).toBe("J1");
  expect(pointName({ x: 3, y: 15 }, 19)).toBe("D4");
});

test("clock text", () => {
  expect(formatMs(0)).toBe("0:00");
  expect(formatMs(59_001)).toBe("1:00");
  expect(formatMs(3_600_000)).toBe("1:00:00");
});

test("byo-yomi: main time, then periods counted down, a used-up period removed (C2)", () => {
  const tc = byoYomi(10_000, 3, 30_000);
  const clock = create(ClockStateSchema, { mainMs: 10_000n, periods: 3, periodMs: 30_000n, running: true });
  expect(clockView(clock, tc, 0, 4_000)).toMatchObject({ text: "0:06", overtime: false });
  // 10 s main + 12 s into the first period.
  expect(clockView(clock, tc, 0, 22_000)).toMatchObject({ text: "0:18", overtime: true, detail: "3" });
  // 10 s + 30 s (one period gone) + 25 s.
  expect(clockView(clock, tc, 0, 65_000)).toMatchObject({ text: "0:05", detail: "2", low: true });
  // Past everything: shows 0:00 but never a flag of its own.
  const past = clockView(clock, tc, 0, 1_000_000);
  expect(past.text).toBe("0:00");
  expect(past.flagged).toBe(false);
  // The server's flag is shown.
  const flagged = create(ClockStateSchema, { periods: 0, periodMs: 30_000n, flagged: true });
  expect(clockView(flagged, tc, 0, 0).flagged).toBe(true);
});

test("a stopped clock does not move", () => {
  const tc = byoYomi(60_000, 1, 30_000);
  const clock = create(ClockStateSchema, { mainMs: 60_000n, periods: 1, periodMs: 30_000n, running: false });
  expect(clockView(clock, tc, 0, 50_000).text).toBe("1:00");
});

test("Canadian overtime counts the block, stones shown", () => {
  const tc = create(TimeControlSchema, { kind: { case: "canadian", value: { mainMs: 0n, stones: 10, periodMs: 300_000n } } });
  const clock = create(ClockStateSchema, { periodMs: 120_000n, stones: 4, running: true });
  expect(clockView(clock, tc, 0, 20_000)).toMatchObject({ text: "1:40", detail: "4", overtime: true });
});

test("the running clock counts from its turn's start, not from a mid-turn snapshot", () => {
  let f = empty();
  f = fold(f, moveEvent(1, Color.BLACK, 2, 2, "W"), state(1), 1_001_000);
  // An announcement 20 s into White's period carries a reading that cannot say so.
  const call = create(EventSchema, {
    seq: 2n,
    timeMs: 1_021_000n,
    kind: "announcement",
    color: Color.WHITE,
    payloadJson: JSON.stringify({ type: "announcement", color: "white", due: 0, seconds: 20, count: null, periods_left: 3 }),
    blackClock: create(ClockStateSchema, { periods: 3, periodMs: 30_000n }),
    whiteClock: create(ClockStateSchema, { periods: 3, periodMs: 30_000n, running: true }),
  });
  f = fold(f, call, state(2, { serverTimeMs: 1_021_000n, whiteClock: create(ClockStateSchema, { periods: 3, periodMs: 30_000n, running: true }) }), 1_021_000);
  // Local clock equals server clock here (offset 0): 25 s after White's turn began.
  expect(displayClock(f, "W", 1_026_000).text).toBe("0:05");
  expect(announcement(call)).toEqual({ color: "W", seconds: 20, count: undefined, periodsLeft: 3 });
});

test("a click on a stone toggles its whole chain dead or alive", () => {
  const board = ["xx.......", "........."].concat(Array(7).fill("........."));
  const s = state(1, { phase: Phase.SCORING, board });
  const dead = toggleDead(s, 0, 0);
  expect(dead).toEqual([{ x: 0, y: 0 }, { x: 1, y: 0 }]);
  const s2 = state(2, { phase: Phase.SCORING, board, deadStones: dead });
  expect(toggleDead(s2, 1, 0)).toEqual([]);
});

test("a replay after a fresh snapshot keeps the newer board while the moves fill in", () => {
  let f = empty();
  // GetGame first (seq 3), then the stream replays from the start.
  f = { ...f, state: state(3, { moveNumber: 3 }) };
  f = fold(f, moveEvent(1, Color.BLACK, 2, 2, "W"), state(1, { moveNumber: 1 }), 0);
  expect(f.state?.moveNumber).toBe(3);
  expect(f.moves).toHaveLength(1);
});
