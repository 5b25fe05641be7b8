// The game page's pure logic: presence kept across states that do not carry it, refusals
// in words, requests and their answers, the declared end, the flagged clock, the variant's
// outcome, the rating change, the touch confirm step.
import { expect, test } from "@playwright/test";
import { create } from "@bufbuild/protobuf";
import {
  ClockStateSchema,
  Color,
  EventSchema,
  GameSettingsSchema,
  GameStateSchema,
  Phase,
  SeatPresenceSchema,
  TimeControlSchema,
} from "../../src/gen/weiqi/v1/game_pb.js";
import {
  bidOutcome,
  clockView,
  empty,
  eventNotice,
  fold,
  foldState,
  needsConfirm,
  nextSeatStone,
  presenceOf,
  presenceView,
  ratingChangeFor,
  refusalKey,
  requestsOf,
} from "../../src/state.js";
import { t } from "../../src/i18n.js";

function state(seq: number, extra: Record<string, unknown> = {}) {
  return create(GameStateSchema, {
    gameId: "g",
    seq: BigInt(seq),
    phase: Phase.PLAYING,
    blackSeat: 1,
    settings: create(GameSettingsSchema, { boardSize: 9 }),
    board: Array(9).fill("........."),
    serverTimeMs: BigInt(1_000_000 + seq * 1000),
    ...extra,
  });
}
const here = (lastSeenMs: number) => create(SeatPresenceSchema, { present: true, lastSeenMs: BigInt(lastSeenMs) });
const gone = (lastSeenMs: number, claimableAtMs?: number) =>
  create(SeatPresenceSchema, {
    present: false,
    lastSeenMs: BigInt(lastSeenMs),
    claimableAtMs: claimableAtMs === undefined ? undefined : BigInt(claimableAtMs),
  });

test("a presence change arrives without an event and is folded; the move list is untouched", () => {
  let f = empty();
  f = fold(f, create(EventSchema, { seq: 1n, kind: "move_played", color: Color.BLACK, point: { x: 2, y: 2 } }), state(1, { hostPresence: here(1), guestPresence: here(1) }), 0);
  f = fold(f, undefined, state(1, { hostPresence: here(2), guestPresence: gone(5, 65) }), 0);
  expect(f.moves).toHaveLength(1);
  expect(f.seq).toBe(1);
  expect(f.state?.guestPresence?.present).toBe(false);
  expect(Number(f.state?.guestPresence?.claimableAtMs)).toBe(65);
});

test("a state without presence (a replayed one, an answer's) keeps the presence last known", () => {
  let f = empty();
  f = foldState(f, state(3, { hostPresence: here(1), guestPresence: gone(5, 65) }), 0);
  // The stream replays the event after seq 3 with the state as it was logged: no presence.
  f = fold(f, create(EventSchema, { seq: 4n, kind: "passed", color: Color.WHITE }), state(4), 0);
  expect(Number(f.state?.seq)).toBe(4);
  expect(f.state?.guestPresence?.present).toBe(false);
  expect(f.state?.hostPresence?.present).toBe(true);
  // An answer's state without presence keeps it too.
  f = foldState(f, state(5), 0);
  expect(f.state?.guestPresence?.present).toBe(false);
});

test("presence as shown: online, gone for a while, the countdown to the claim", () => {
  expect(presenceView(undefined, 0).known).toBe(false);
  expect(presenceView(here(100), 5_000)).toMatchObject({ known: true, present: true, claimInMs: undefined });
  expect(presenceView(gone(10_000, 70_000), 45_000)).toMatchObject({ present: false, awayMs: 35_000, claimInMs: 25_000 });
  expect(presenceView(gone(10_000, 70_000), 80_000).claimInMs).toBe(0);
  // Black is the host here (blackSeat 1): White's presence is the guest's.
  const s = state(1, { hostPresence: here(1), guestPresence: gone(2) });
  expect(presenceOf(s, "W")?.present).toBe(false);
  expect(presenceOf(s, "B")?.present).toBe(true);
});

test("refusals in words, chosen by the server's reason; no requirement codes", () => {
  const words = (reason: string, kind = "refused") => t("en", refusalKey({ kind, reason }));
  expect(words("ko")).toMatch(/^Ko:/);
  expect(words("suicide")).toContain("without liberties");
  expect(words("occupied")).toBe("That point is occupied.");
  expect(words("not_your_turn")).toBe("It is your opponent's turn.");
  expect(words("superko")).toContain("repeat an earlier position");
  expect(words("stale")).toContain("moved on");
  expect(words("opponent_present")).toContain("cannot be claimed yet");
  expect(words("", "network")).toBe("The server cannot be reached.");
  expect(words("something_new")).toBe("The server refused this.");
  for (const r of ["ko", "suicide", "superko", "occupied"]) expect(words(r)).not.toMatch(/\(R\d+\)/);
  expect(t("zh", refusalKey({ kind: "refused", reason: "ko" }))).toContain("打劫");
});

test("pending requests: the asker's and the opponent's", () => {
  const s = state(1, { pendingUndoFrom: Color.BLACK, pendingDrawFrom: Color.WHITE });
  expect(requestsOf(s, "B")).toEqual({ mine: ["undo"], theirs: ["draw"] });
  expect(requestsOf(s, "W")).toEqual({ mine: ["draw"], theirs: ["undo"] });
  expect(requestsOf(s, undefined)).toEqual({ mine: [], theirs: [] });
});

test("answers are announced; a declared end is listed as such, not as a pass", () => {
  const ev = (kind: string, color: Color, payloadJson = "{}") => create(EventSchema, { seq: 9n, kind, color, payloadJson });
  expect(eventNotice(ev("undo_declined", Color.WHITE))).toEqual({ key: "noticeUndoDeclined", who: "W" });
  expect(eventNotice(ev("move_taken_back", Color.BLACK))).toEqual({ key: "noticeUndoAccepted", who: "B" });
  expect(eventNotice(ev("draw_declined", Color.BLACK))).toEqual({ key: "noticeDrawDeclined", who: "B" });
  expect(eventNotice(ev("move_played", Color.BLACK))).toBeUndefined();
  let f = empty();
  f = fold(f, create(EventSchema, { seq: 1n, kind: "passed", color: Color.BLACK, payloadJson: '{"type":"passed","color":"black","declared_end":true,"lag_ms":0}' }), state(1), 0);
  f = fold(f, create(EventSchema, { seq: 2n, kind: "passed", color: Color.WHITE, payloadJson: '{"type":"passed","color":"white","declared_end":false,"lag_ms":0}' }), state(2), 0);
  expect(f.moves.map((m) => m.text)).toEqual(["end", "pass"]);
});

test("a flagged clock reads 0:00, whatever period it stopped in", () => {
  const tc = create(TimeControlSchema, { kind: { case: "byoYomi", value: { mainMs: 0n, periods: 3, periodMs: 10_000n } } });
  const flagged = create(ClockStateSchema, { periods: 0, periodMs: 10_000n, flagged: true });
  expect(clockView(flagged, tc, 0, 0)).toMatchObject({ text: "0:00", detail: "", flagged: true });
  const fischer = create(TimeControlSchema, { kind: { case: "fischer", value: { mainMs: 60_000n, incrementMs: 0n } } });
  expect(clockView(create(ClockStateSchema, { mainMs: 400n, flagged: true }), fischer, 0, 0).text).toBe("0:00");
});

test("the variant: the next seat stone, and how bids decided colours and komi", () => {
  expect(nextSeatStone(state(1))).toBe("B");
  expect(nextSeatStone(state(1, { board: ["x........"].concat(Array(8).fill(".........")) }))).toBe("W");
  const settings = create(GameSettingsSchema, { boardSize: 9, komi: 6.5 });
  expect(bidOutcome(state(1, { hostBid: 6.5, guestBid: 4.5, blackSeat: 1, settings }))).toEqual({
    hostBid: 6.5,
    guestBid: 4.5,
    black: "host",
    komi: 6.5,
    byLot: false,
  });
  expect(bidOutcome(state(1, { hostBid: 5.5, guestBid: 5.5, blackSeat: 2, settings }))?.byLot).toBe(true);
  expect(bidOutcome(state(1, { hostBid: 5.5 }))).toBeUndefined();
});

test("the rating change of a game, from the history", () => {
  const changes = [
    { gameId: "a", ratingBefore: 1500, rating: 1562.4 },
    { gameId: "b", ratingBefore: 1562.4, rating: 1530.1 },
  ];
  expect(ratingChangeFor(changes, "b")).toEqual({ before: 1562, after: 1530, delta: -32 });
  expect(ratingChangeFor(changes, "c")).toBeUndefined();
});

test("the confirm step: only on 13x13 and bigger, and only when wanted", () => {
  expect(needsConfirm(true, 19)).toBe(true);
  expect(needsConfirm(true, 13)).toBe(true);
  expect(needsConfirm(true, 9)).toBe(false);
  expect(needsConfirm(false, 19)).toBe(false);
});
