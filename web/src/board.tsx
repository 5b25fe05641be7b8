// The board: our own SVG (no framework beyond Preact), so that every intersection is a
// labelled, focusable target for screen readers and keyboards, it scales to any screen,
// and the skins are plain CSS variables. Shudan would bring its own styling model and no
// per-point labels.
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import type { JSX } from "preact";
import { pointName } from "./state.js";

export interface BoardProps {
  size: number;
  /** Rows from the top: "x" Black, "o" White, "." empty. */
  rows: string[];
  lastMove?: { x: number; y: number };
  dead?: { x: number; y: number }[];
  /** Stones chosen but not yet sent (free handicap). */
  marked?: { x: number; y: number }[];
  /** Scoring: who each point counts for, rows as `rows` ("x" Black, "o" White, "." neither). */
  owners?: string[];
  /** A score estimate: each point's ownership, row by row, -1 White .. +1 Black. */
  estimate?: number[];
  /** A move proposed by a first tap, waiting for its confirmation (touch screens). */
  candidate?: { x: number; y: number; color: "B" | "W" };
  /** A move made but not yet answered by the server (sent again when the connection returns). */
  pending?: { x: number; y: number; color: "B" | "W" };
  /** A review: the engine's choice in the position before the move shown (a marker of its own). */
  best?: { x: number; y: number };
  /** The colour of the ghost stone under the pointer; none when the player cannot play. */
  ghost?: "B" | "W";
  coordinates: boolean;
  label: string;
  onPoint?: (x: number, y: number) => void;
}

/** Star points: the corners' and the centre's on 9 and 13, all nine on 19. */
function starPoints(n: number): [number, number][] {
  const lines: Record<number, number[]> = { 9: [2, 6], 13: [3, 9], 19: [3, 9, 15] };
  const l = lines[n] ?? [];
  const pts = l.flatMap((a) => l.map((b) => [a, b] as [number, number]));
  if (n === 9 || n === 13) pts.push([(n - 1) / 2, (n - 1) / 2]);
  return pts;
}

const LETTERS = "ABCDEFGHJKLMNOPQRSTUVWXYZ";

export function Board(p: BoardProps): JSX.Element {
  const n = p.size;
  const [hover, setHover] = useState<{ x: number; y: number } | undefined>();
  const [cursor, setCursor] = useState({ x: Math.floor(n / 2), y: Math.floor(n / 2) });
  const pad = p.coordinates ? 1.4 : 0.8;
  const span = n - 1 + 2 * pad;
  const dead = new Set((p.dead ?? []).map((q) => `${q.x},${q.y}`));
  const marked = new Set((p.marked ?? []).map((q) => `${q.x},${q.y}`));
  const at = (x: number, y: number) => p.rows[y]?.[x] ?? ".";

  const lines: JSX.Element[] = [];
  for (let i = 0; i < n; i++) {
    lines.push(<line key={`h${i}`} x1={0} y1={i} x2={n - 1} y2={i} />, <line key={`v${i}`} x1={i} y1={0} x2={i} y2={n - 1} />);
  }
  const stars = starPoints(n).map(([a, b]) => <circle key={`s${a},${b}`} class="star" cx={a} cy={b} r={0.1} />);
  const coords: JSX.Element[] = [];
  if (p.coordinates) {
    for (let i = 0; i < n; i++) {
      coords.push(
        <text key={`ct${i}`} x={i} y={-0.85} class="coord">{LETTERS[i]}</text>,
        <text key={`cb${i}`} x={i} y={n - 1 + 0.95} class="coord">{LETTERS[i]}</text>,
        <text key={`cl${i}`} x={-0.95} y={i + 0.12} class="coord">{n - i}</text>,
        <text key={`cr${i}`} x={n - 1 + 0.95} y={i + 0.12} class="coord">{n - i}</text>,
      );
    }
  }
  const stones: JSX.Element[] = [];
  const targets: JSX.Element[] = [];
  for (let y = 0; y < n; y++) {
    for (let x = 0; x < n; x++) {
      const c = at(x, y);
      const key = `${x},${y}`;
      const isDead = dead.has(key);
      if (c === "x" || c === "o") {
        stones.push(
          <circle
            key={`st${key}`}
            class={`stone ${c === "x" ? "black" : "white"}${isDead ? " dead" : ""}`}
            cx={x}
            cy={y}
            r={0.47}
          />,
        );
        if (isDead) stones.push(<path key={`dx${key}`} class="dead-mark" d={`M${x - 0.2} ${y - 0.2}L${x + 0.2} ${y + 0.2}M${x + 0.2} ${y - 0.2}L${x - 0.2} ${y + 0.2}`} />);
      }
      if (marked.has(key)) stones.push(<circle key={`mk${key}`} class="stone black marked" cx={x} cy={y} r={0.47} />);
      // The count: a small square of the owner's colour on each point that counts (over a
      // dead stone too, as the count takes it off), as OGS and Lichess mark territory.
      const owner = p.owners?.[y]?.[x];
      if ((owner === "x" || owner === "o") && (c === "." || isDead)) {
        stones.push(
          <rect key={`own${key}`} class={`owner ${owner === "x" ? "black" : "white"}`} x={x - 0.18} y={y - 0.18} width={0.36} height={0.36} />,
        );
      }
      // The estimate: a square of the likely owner's colour, larger the surer it is.
      const share = p.estimate?.[y * n + x];
      if (share !== undefined && Math.abs(share) >= 0.2 && (c === "." || isDead)) {
        const half = 0.1 + 0.2 * Math.abs(share);
        stones.push(
          <rect key={`est${key}`} class={`owner estimated ${share > 0 ? "black" : "white"}`} x={x - half} y={y - half} width={2 * half} height={2 * half} />,
        );
      }
      const name = pointName({ x, y }, n);
      const what = c === "x" ? "black stone" : c === "o" ? "white stone" : "empty";
      const isBest = p.best?.x === x && p.best?.y === y;
      targets.push(
        <rect
          key={`t${key}`}
          class="target"
          x={x - 0.5}
          y={y - 0.5}
          width={1}
          height={1}
          data-x={x}
          data-y={y}
          data-point={name}
          data-owner={p.owners ? ({ x: "B", o: "W" } as Record<string, string>)[p.owners[y]?.[x] ?? ""] ?? "-" : undefined}
          data-estimate={share === undefined ? undefined : share >= 0.2 ? "B" : share <= -0.2 ? "W" : "-"}
          role="button"
          aria-label={`${name}, ${what}${isDead ? ", dead" : ""}${isBest ? ", engine's choice" : ""}`}
          onPointerEnter={() => setHover({ x, y })}
          onPointerLeave={() => setHover(undefined)}
          onClick={() => {
            setCursor({ x, y });
            p.onPoint?.(x, y);
          }}
        />,
      );
    }
  }
  const ghostAt = hover ?? undefined;
  const ghost =
    p.ghost && ghostAt && at(ghostAt.x, ghostAt.y) === "." ? (
      <circle class={`stone ghost ${p.ghost === "B" ? "black" : "white"}`} cx={ghostAt.x} cy={ghostAt.y} r={0.47} />
    ) : null;
  const proposed = [
    p.candidate ? (
      <g key="cand" class="candidate" data-testid="candidate">
        <circle class={`stone ${p.candidate.color === "B" ? "black" : "white"}`} cx={p.candidate.x} cy={p.candidate.y} r={0.47} />
        <circle class="candidate-ring" cx={p.candidate.x} cy={p.candidate.y} r={0.6} />
      </g>
    ) : null,
    p.pending ? (
      <g key="pend" class="pending-stone" data-testid="pending-stone">
        <circle class={`stone ${p.pending.color === "B" ? "black" : "white"}`} cx={p.pending.x} cy={p.pending.y} r={0.47} />
        <circle class="pending-ring" cx={p.pending.x} cy={p.pending.y} r={0.3} />
      </g>
    ) : null,
  ];
  // The engine's choice: a blue disc on an empty point, a blue ring around the stone when
  // the move played was the engine's own (so the two never look alike, nor like a stone).
  const best = p.best ? (
    <circle
      class={`best-move${at(p.best.x, p.best.y) === "." ? "" : " on-stone"}`}
      data-testid="best-move"
      data-point={pointName(p.best, n)}
      cx={p.best.x}
      cy={p.best.y}
      r={at(p.best.x, p.best.y) === "." ? 0.3 : 0.52}
    />
  ) : null;
  const last = p.lastMove ? (
    <circle class={`last-move ${at(p.lastMove.x, p.lastMove.y) === "x" ? "on-black" : "on-white"}`} cx={p.lastMove.x} cy={p.lastMove.y} r={0.18} />
  ) : null;

  // Keyboard: arrows move a cursor, Enter or Space plays there.
  const onKey = (e: KeyboardEvent) => {
    const d: Record<string, [number, number]> = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] };
    if (d[e.key]) {
      e.preventDefault();
      const [dx, dy] = d[e.key]!;
      const next = { x: Math.min(n - 1, Math.max(0, cursor.x + dx)), y: Math.min(n - 1, Math.max(0, cursor.y + dy)) };
      setCursor(next);
      setHover(next);
    } else if (e.key === "Enter" || e.key === " ") {
      e.preventDefault();
      p.onPoint?.(cursor.x, cursor.y);
    }
  };
  const cursorName = pointName(cursor, n);
  const cursorWhat = at(cursor.x, cursor.y) === "x" ? "black stone" : at(cursor.x, cursor.y) === "o" ? "white stone" : "empty";

  return (
    // The wrapper takes the focus and the keys (an SVG element's tabindex is not reliable).
    <div class="board-wrap" role="application" aria-label={p.label} aria-roledescription="board" tabIndex={0} onKeyDown={onKey}>
      <svg class="board" viewBox={`${-pad} ${-pad} ${span} ${span}`} data-size={n}>
        <rect class="board-bg" x={-pad} y={-pad} width={span} height={span} />
        <g class="grid">{lines}</g>
        {stars}
        {coords}
        {stones}
        {last}
        {best}
        {proposed}
        {p.candidate || p.pending ? null : ghost}
        <rect class="cursor" x={cursor.x - 0.5} y={cursor.y - 0.5} width={1} height={1} />
        <g class="targets">{targets}</g>
      </svg>
      <div class="sr-only" aria-live="polite">
        {cursorName}, {cursorWhat}
      </div>
    </div>
  );
}

/** The board as big as the screen allows: its top where the layout puts it, its bottom
 * (with the coordinates) above the window's bottom edge. Returns the column's ref and its
 * greatest width. */
export function useBoardFit() {
  const col = useRef<HTMLDivElement>(null);
  const [fit, setFit] = useState<number | undefined>();
  useLayoutEffect(() => {
    const el = col.current;
    if (!el) return;
    const top = el.getBoundingClientRect().top + scrollY;
    const room = Math.max(280, Math.floor(innerHeight - top - 12));
    if (room !== fit) setFit(room);
  });
  useEffect(() => {
    const on = () => setFit(undefined);
    addEventListener("resize", on);
    return () => removeEventListener("resize", on);
  }, []);
  return { col, fit };
}
