// A game's positions move by move, for the review's jump to a move: the setup stones
// (handicap, the variant's seat stones), then the moves played with their captures. Pure,
// for the unit tests. No legality check (no ko, no suicide): the server judged every move
// already, so a point played twice is simply overwritten rather than refused.
import { Color, type Event, type GameSettings, type MoveReview } from "./gen/weiqi/v1/game_pb.js";

export type Colour = "B" | "W";

export interface Stone {
  x: number;
  y: number;
  color: Colour;
}

/** One move: a stone on `point`, or a pass when it has none. */
export interface Played {
  color: Colour;
  point?: { x: number; y: number };
}

/**
 * The board before the first move and after each: `positions[k]` is the board after move
 * k (`positions[0]` the setup alone), rows from the top as the server writes them ("x"
 * Black, "o" White, "." empty).
 */
export function replay(size: number, setup: readonly Stone[], moves: readonly Played[]): string[][] {
  const board: string[] = Array(size * size).fill(".");
  const inside = (x: number, y: number) => x >= 0 && y >= 0 && x < size && y < size;
  for (const s of setup) if (inside(s.x, s.y)) board[s.y * size + s.x] = mark(s.color);
  const rows = () => Array.from({ length: size }, (_, y) => board.slice(y * size, (y + 1) * size).join(""));
  const positions = [rows()];
  for (const m of moves) {
    const p = m.point;
    if (p && inside(p.x, p.y)) {
      const me = mark(m.color);
      board[p.y * size + p.x] = me;
      // The opponent's chains next to the stone with no liberty left are taken first;
      // then the stone's own chain, should it have none (a suicide, where the rules allow it).
      for (const [nx, ny] of neighbours(p.x, p.y)) {
        const c = inside(nx, ny) ? board[ny * size + nx] : undefined;
        if (c && c !== "." && c !== me) takeIfDead(board, size, nx, ny);
      }
      takeIfDead(board, size, p.x, p.y);
    }
    positions.push(rows());
  }
  return positions;
}

const mark = (c: Colour) => (c === "B" ? "x" : "o");

const neighbours = (x: number, y: number): [number, number][] => [
  [x + 1, y],
  [x - 1, y],
  [x, y + 1],
  [x, y - 1],
];

/** Removes the chain through (x, y) if it has no liberty. */
function takeIfDead(board: string[], size: number, x: number, y: number): void {
  const colour = board[y * size + x];
  const chain: number[] = [];
  const seen = new Set<number>([y * size + x]);
  const stack = [y * size + x];
  while (stack.length) {
    const i = stack.pop()!;
    chain.push(i);
    for (const [nx, ny] of neighbours(i % size, Math.floor(i / size))) {
      if (nx < 0 || ny < 0 || nx >= size || ny >= size) continue;
      const j = ny * size + nx;
      if (board[j] === ".") return;
      if (board[j] === colour && !seen.has(j)) {
        seen.add(j);
        stack.push(j);
      }
    }
  }
  for (const i of chain) board[i] = ".";
}

/**
 * The standard fixed handicap points (as the server places them, and GTP's
 * `fixed_handicap`): corners first, then the sides, the centre for odd counts. None for
 * fewer than 2 stones or more than the board takes.
 */
export function fixedHandicap(size: number, stones: number): { x: number; y: number }[] {
  const max = size < 7 ? 0 : size % 2 === 1 ? 9 : 4;
  if (stones < 2 || stones > max) return [];
  const lo = size >= 13 ? 3 : 2;
  const hi = size - 1 - lo;
  const mid = Math.floor(size / 2);
  const [bl, tr, tl, br] = [{ x: lo, y: hi }, { x: hi, y: lo }, { x: lo, y: lo }, { x: hi, y: hi }];
  const [l, r, b, t, c] = [{ x: lo, y: mid }, { x: hi, y: mid }, { x: mid, y: hi }, { x: mid, y: lo }, { x: mid, y: mid }];
  const byCount: Record<number, { x: number; y: number }[]> = {
    2: [bl, tr],
    3: [bl, tr, tl],
    4: [bl, tr, tl, br],
    5: [bl, tr, tl, br, c],
    6: [bl, tr, tl, br, l, r],
    7: [bl, tr, tl, br, l, r, c],
    8: [bl, tr, tl, br, l, r, b, t],
    9: [bl, tr, tl, br, l, r, b, t, c],
  };
  return byCount[stones] ?? [];
}

/**
 * The stones an event puts on the board before play, outside the moves: a free handicap
 * (`handicap_placed`, Black's) or a seat stone of the variant (`seat_stone_placed`), read
 * from the event's payload; none for any other event or an unreadable payload.
 */
export function setupOf(e: Pick<Event, "kind" | "payloadJson">): Stone[] {
  if (e.kind !== "handicap_placed" && e.kind !== "seat_stone_placed") return [];
  try {
    const p = JSON.parse(e.payloadJson || "{}") as { points?: unknown; point?: unknown; color?: unknown };
    const isPoint = (q: unknown): q is { x: number; y: number } =>
      !!q && typeof (q as { x: unknown }).x === "number" && typeof (q as { y: unknown }).y === "number";
    if (e.kind === "handicap_placed") {
      return (Array.isArray(p.points) ? p.points : []).filter(isPoint).map((q) => ({ x: q.x, y: q.y, color: "B" }));
    }
    return isPoint(p.point) ? [{ x: p.point.x, y: p.point.y, color: p.color === "white" ? "W" : "B" }] : [];
  } catch {
    return [];
  }
}

/** The stones on the board when play starts: a fixed handicap from the settings, or the
 * stones the events placed (a free handicap, seat stones). */
export function startingStones(settings: Pick<GameSettings, "boardSize" | "handicap" | "freeHandicap"> | undefined, placed: readonly Stone[]): Stone[] {
  const size = settings?.boardSize || 19;
  const fixed = settings && !settings.freeHandicap ? fixedHandicap(size, settings.handicap) : [];
  return [...fixed.map((p) => ({ ...p, color: "B" as const })), ...placed];
}

/** A review's moves as the replay takes them. */
export function reviewedMoves(moves: readonly Pick<MoveReview, "color" | "played">[]): Played[] {
  return moves.map((m) => ({
    color: m.color === Color.WHITE ? "W" : "B",
    point: m.played ? { x: m.played.x, y: m.played.y } : undefined,
  }));
}
