// The game page's words from the state alone (the status line, the move list, an
// abandoned game's end, the seats' names), whether the opponent's absence may be claimed,
// and which failures the outbox sends again.
import { expect, test } from "@playwright/test";
import { create } from "@bufbuild/protobuf";
import { Color, GameResultSchema, GameSettingsSchema, GameStateSchema, Phase, SeatPresenceSchema } from "../../src/gen/weiqi/v1/game_pb.js";
import { abandonedWords, moveText, playerName, statusLine } from "../../src/game-words.js";
import { transient } from "../../src/outbox.js";
import { opponentAway } from "../../src/state.js";

const state = (extra: Record<string, unknown> = {}) =>
  create(GameStateSchema, {
    gameId: "g",
    phase: Phase.PLAYING,
    blackSeat: 1,
    moveNumber: 7,
    settings: create(GameSettingsSchema, { boardSize: 9 }),
    board: Array(9).fill("........."),
    ...extra,
  });
const gone = (claimableAtMs?: number) =>
  create(SeatPresenceSchema, { present: false, lastSeenMs: 1000n, claimableAtMs: claimableAtMs === undefined ? undefined : BigInt(claimableAtMs) });
const entry = (text: string, color: "B" | "W" = "B") => ({ seq: 1, number: 1, color, text });

test("the status line: the phase in words, or in play whose turn and the move, a declared end said", () => {
  expect(statusLine("en", state({ phase: Phase.SCORING }), "B", false, undefined)).toMatch(/^Scoring/);
  expect(statusLine("en", state(), "B", true, undefined)).toBe("Your turn · Move 7");
  expect(statusLine("en", state(), "W", false, undefined)).toBe("Opponent's turn · Move 7");
  expect(statusLine("en", state(), undefined, false, entry("D4"))).toBe("Watching · Move 7");
  expect(statusLine("en", state(), "W", true, entry("end"))).toBe(
    "Your turn · Move 7 · Black declared the end of play: a pass ends it, or play on.",
  );
  expect(statusLine("en", state({ phase: Phase.FINISHED }), "B", false, undefined)).toBe("");
});

test("a move list line: the point, or a pass, a declared end, a voided move in words", () => {
  expect(moveText("en", entry("D4"))).toBe("D4");
  expect(moveText("en", entry("pass"))).toBe("pass");
  expect(moveText("en", entry("end"))).toBe("declared the end");
  expect(moveText("en", entry("void"))).toBe("void (counts as a pass)");
});

test("an abandoned game: who left and the winner, or a draw naming the one still away", () => {
  const over = (winner: Color, extra: Record<string, unknown> = {}) =>
    state({ phase: Phase.FINISHED, result: create(GameResultSchema, { winner }), ...extra });
  expect(abandonedWords("en", over(Color.BLACK))).toBe("White left the game; Black claimed the win.");
  expect(abandonedWords("en", over(Color.WHITE))).toBe("Black left the game; White claimed the win.");
  // The host plays Black; the guest (White) is away.
  expect(abandonedWords("en", over(Color.UNSPECIFIED, { guestPresence: gone() }))).toBe("White left the game; it was called a draw.");
  expect(abandonedWords("en", over(Color.UNSPECIFIED))).toBe("A player left the game; it was called a draw.");
});

test("a colour's player is named from its seat, once colours are known", () => {
  const s = state({ blackSeat: 2, hostPlayer: { playerId: "h", name: "Hana" }, guestPlayer: { playerId: "i", name: "Ito" } });
  expect(playerName(s, "B")).toBe("Ito");
  expect(playerName(s, "W")).toBe("Hana");
  expect(playerName(state({ blackSeat: 0 }), "B")).toBeUndefined();
});

test("the opponent's absence may be claimed in play or scoring, by a player, once the server gives a time", () => {
  const s = state({ guestPresence: gone(5000) });
  expect(opponentAway(s, "B", 3000)).toMatchObject({ claimable: true, away: { present: false, claimInMs: 2000 } });
  expect(opponentAway(state({ phase: Phase.SCORING, guestPresence: gone(5000) }), "B", 3000).claimable).toBe(true);
  expect(opponentAway(s, undefined, 3000)).toEqual({ away: undefined, claimable: false });
  expect(opponentAway(s, "W", 3000).claimable).toBe(false);
  expect(opponentAway(state({ guestPresence: gone() }), "B", 3000).claimable).toBe(false);
  expect(opponentAway(state({ phase: Phase.FINISHED, guestPresence: gone(5000) }), "B", 3000).claimable).toBe(false);
});

test("the outbox sends again only what the network or a restarting server failed", () => {
  expect(transient({ kind: "network", message: "", reason: "" })).toBe(true);
  expect(transient({ kind: "network", message: "", reason: "shutting_down" })).toBe(true);
  expect(transient({ kind: "network", message: "", reason: "storage_unavailable" })).toBe(true);
  expect(transient({ kind: "network", message: "", reason: "corrupt" })).toBe(false);
  expect(transient({ kind: "refused", message: "", reason: "" })).toBe(false);
});
