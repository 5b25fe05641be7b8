// After a game: the engine's review. The stored one is asked for when the finished game
// opens (GetReview); without one, a button starts it (ReviewGame), its place in the queue
// and its progress shown as the stream tells them. Then Black's win rate as a graph, the
// biggest mistakes, and the board at any move of the game with the engine's choice beside
// the move played, until "Back to the end".
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import type { JSX } from "preact";
import { Code, ConnectError, failure, type GameClient, type GameReview, type GameSettings } from "./client.js";
import { colourName } from "./game-words.js";
import { t, tf, type Lang } from "./i18n.js";
import { replay, reviewedMoves, startingStones, type Stone } from "./replay.js";
import { moveLine, refusal, step, winRateChart, type MoveLine, type Said } from "./review.js";

const say = (lang: Lang, s: Said) => ("key" in s ? tf(lang, s.key, s.vars ?? {}) : s.text);

/** The review of a finished game: the stored one, or the one the player starts. */
export function useReview(client: GameClient, gameId: string, finished: boolean) {
  const [review, setReview] = useState<GameReview>();
  /** No stored review (yet): the page offers to start one. */
  const [absent, setAbsent] = useState(false);
  /** The stream's news while a review is made: its place in the queue, then positions. */
  const [progress, setProgress] = useState<{ ahead: number; done: number; total: number }>();
  const [error, setError] = useState<Said>();
  const stream = useRef<AbortController>();

  useEffect(() => {
    if (!finished) return;
    const stop = new AbortController();
    client
      .getReview({ gameId }, { signal: stop.signal })
      .then((r) => (r.review ? setReview(r.review) : setAbsent(true)))
      .catch((e) => {
        if (stop.signal.aborted) return;
        // A server that does not review games: no panel at all.
        if (ConnectError.from(e).code === Code.Unimplemented) return;
        setAbsent(true);
        if (failure(e).reason !== "review_not_found") setError(refusal(e));
      });
    return () => stop.abort();
  }, [client, gameId, finished]);
  // Leaving the page closes the stream (the server finishes and keeps the review anyway).
  useEffect(() => () => stream.current?.abort(), []);

  const start = async () => {
    stream.current?.abort();
    const stop = new AbortController();
    stream.current = stop;
    setError(undefined);
    setProgress({ ahead: 0, done: 0, total: 0 });
    try {
      for await (const r of client.reviewGame({ gameId }, { signal: stop.signal })) {
        if (r.review) {
          setReview(r.review);
          return;
        }
        setProgress({ ahead: r.queuedAhead, done: r.positionsDone, total: r.positions });
      }
      setError({ key: "reviewStopped" });
    } catch (e) {
      if (!stop.signal.aborted) setError(refusal(e));
    } finally {
      if (!stop.signal.aborted) setProgress(undefined);
    }
  };

  return { review, absent, progress, error, start };
}

/** Whether the page has its one-column layout (app.css's breakpoint): the panel goes under
 * the board there, and beside it, under the result, where the board fills the window's
 * height (under it, the panel would be out of sight of the board it moves). */
export function useNarrow(): boolean {
  const query = "(max-width: 720px)";
  const [narrow, setNarrow] = useState(() => globalThis.matchMedia?.(query).matches ?? false);
  useEffect(() => {
    const m = globalThis.matchMedia?.(query);
    if (!m) return;
    const on = () => setNarrow(m.matches);
    m.addEventListener("change", on);
    return () => m.removeEventListener("change", on);
  }, []);
  return narrow;
}

/** The move of the review shown on the board (none: the final position), the board then,
 * and the arrow keys to step through the moves. */
export function useReviewMove(review: GameReview | undefined, settings: GameSettings | undefined, setup: Stone[]) {
  const [at, setAt] = useState<number>();
  const size = settings?.boardSize || 19;
  const handicap = settings?.handicap ?? 0;
  const free = settings?.freeHandicap ?? false;
  const positions = useMemo(
    () => (review ? replay(size, startingStones({ boardSize: size, handicap, freeHandicap: free }, setup), reviewedMoves(review.moves)) : undefined),
    [review, size, handicap, free, setup],
  );
  const n = review?.moves.length ?? 0;

  useEffect(() => {
    if (!n) return;
    const onKey = (e: KeyboardEvent) => {
      // Not the keys another control has used (the board's cursor), nor a field's, nor a
      // browser shortcut (Alt+Left goes back).
      if (e.defaultPrevented || e.altKey || e.ctrlKey || e.metaKey || e.shiftKey) return;
      if (e.target instanceof Element && e.target.closest("input, select, textarea, [contenteditable]")) return;
      const d = e.key === "ArrowLeft" ? -1 : e.key === "ArrowRight" ? 1 : 0;
      if (d) {
        e.preventDefault();
        setAt((a) => step(a, d, n));
      } else if (e.key === "Escape") {
        setAt(undefined);
      }
    };
    addEventListener("keydown", onKey);
    return () => removeEventListener("keydown", onKey);
  }, [n]);

  const move = at === undefined ? undefined : review?.moves[at - 1];
  const rows = at === undefined ? undefined : positions?.[at];
  const shown = move && rows ? { rows, lastMove: move.played, best: move.best } : undefined;
  return { at: shown ? at : undefined, go: setAt, shown };
}

export function ReviewPanel(p: {
  lang: Lang;
  review: ReturnType<typeof useReview>;
  size: number;
  at: number | undefined;
  go: (move: number | undefined) => void;
}): JSX.Element | null {
  const { lang, size, at, go } = p;
  const { review, absent, progress, error, start } = p.review;
  const failed = error ? (
    <p class="error" role="alert" data-testid="review-error">
      {say(lang, error)}
    </p>
  ) : null;

  if (!review) {
    if (progress) {
      const words: Said =
        progress.total > 0
          ? { key: "reviewProgress", vars: { done: String(progress.done), total: String(progress.total) } }
          : progress.ahead > 0
            ? { key: "reviewQueued", vars: { n: String(progress.ahead) } }
            : { key: "reviewWaiting" };
      return (
        <section class="review" data-testid="review">
          <p class="review-progress" role="status" data-testid="review-progress">
            <span>{say(lang, words)}</span>
            <progress max={progress.total || 1} value={progress.total ? progress.done : undefined} />
          </p>
        </section>
      );
    }
    if (!absent && !error) return null;
    return (
      <section class="review" data-testid="review">
        <button onClick={() => void start()}>{t(lang, "reviewGame")}</button>
        {failed}
      </section>
    );
  }

  const n = review.moves.length;
  const lines = review.moves.map((m) => moveLine(m, size));
  const current = at === undefined ? undefined : lines[at - 1];
  const point = (q: string | undefined) => q ?? t(lang, "movePass");
  return (
    <section class="review" data-testid="review">
      <h3>{t(lang, "reviewTitle")}</h3>
      {current ? (
        <div class="review-at" data-testid="review-at">
          <p data-testid="review-move">
            {tf(lang, "reviewAt", {
              n: String(current.number),
              total: String(n),
              colour: colourName(lang, current.colour),
              played: point(current.played),
              loss: String(current.loss),
              rate: String(current.blackAfter),
            })}
          </p>
          <p>
            <span class="best-dot" aria-hidden="true" /> {tf(lang, "reviewBest", { best: point(current.best) })}
          </p>
          <div class="review-nav">
            <button class="secondary" aria-label={t(lang, "reviewPrevious")} disabled={at === 1} onClick={() => go(step(at, -1, n))}>
              ◀
            </button>
            <button class="secondary" aria-label={t(lang, "reviewNext")} onClick={() => go(step(at, 1, n))}>
              ▶
            </button>
            <button onClick={() => go(undefined)}>{t(lang, "reviewBack")}</button>
          </div>
        </div>
      ) : null}
      {n ? <WinRateGraph lang={lang} review={review} at={at} go={go} /> : <p class="muted">{t(lang, "reviewNoMoves")}</p>}
      {n ? <Mistakes lang={lang} lines={lines} mistakes={review.mistakes} at={at} go={go} /> : null}
      <p class="muted small">{tf(lang, "reviewVisits", { visits: String(review.visits) })}</p>
    </section>
  );
}

/** Black's win rate over the game: the dark area is Black's share, the dashed line 50%,
 * the red dots the biggest mistakes. A click picks the nearest move. */
function WinRateGraph(p: { lang: Lang; review: GameReview; at: number | undefined; go: (move: number) => void }): JSX.Element {
  const { lang, at } = p;
  const c = winRateChart(p.review);
  const { plot, xs } = c;
  const n = xs.length - 1;
  const half = n > 0 ? (xs[1]! - xs[0]!) / 2 : 0;
  return (
    <figure class="review-graph">
      <svg class="winrate" data-testid="winrate" viewBox={`0 0 ${c.width} ${c.height}`} role="group" aria-label={t(lang, "reviewGraph")}>
        <rect class="bg" x={plot.left} y={plot.top} width={plot.right - plot.left} height={plot.bottom - plot.top} />
        <path class="area" d={c.area} />
        <path class="line" d={c.line} />
        <line class="half" x1={plot.left} y1={c.half} x2={plot.right} y2={c.half} />
        <text x={plot.left - 4} y={plot.top} text-anchor="end" dominant-baseline="middle">100%</text>
        <text x={plot.left - 4} y={c.half} text-anchor="end" dominant-baseline="middle">50%</text>
        <text x={plot.left - 4} y={plot.bottom} text-anchor="end" dominant-baseline="middle">0%</text>
        <text x={xs[1] ?? plot.left} y={c.height - 4} text-anchor="middle">1</text>
        {n > 1 ? (
          <text x={xs[n]!} y={c.height - 4} text-anchor="end">
            {n}
          </text>
        ) : null}
        {at !== undefined ? <line class="at" x1={xs[at]} y1={plot.top} x2={xs[at]} y2={plot.bottom} /> : null}
        {c.marks.map((m) => (
          <circle key={m.move} class="mistake" data-testid="mistake-mark" cx={m.x} cy={m.y} r={3.5} />
        ))}
        {/* One column a move, over the whole height: where a click or tap picks it. */}
        {xs.slice(1).map((x, i) => (
          <rect key={i} class="pick" data-move={i + 1} x={x - half} y={0} width={2 * half} height={c.height} onClick={() => p.go(i + 1)}>
            <title>{`${t(lang, "move")} ${i + 1}`}</title>
          </rect>
        ))}
      </svg>
      <figcaption class="muted small">{t(lang, "reviewGraphHint")}</figcaption>
    </figure>
  );
}

/** The biggest mistakes, biggest first; each picks its move. */
function Mistakes(p: { lang: Lang; lines: MoveLine[]; mistakes: number[]; at: number | undefined; go: (move: number) => void }): JSX.Element {
  const { lang } = p;
  const point = (q: string | undefined) => q ?? t(lang, "movePass");
  const shown = p.mistakes.map((k) => p.lines[k - 1]).filter((l): l is MoveLine => !!l);
  return (
    <div class="mistakes">
      <h4>{t(lang, "reviewMistakes")}</h4>
      {shown.length ? (
        <ol data-testid="mistakes">
          {shown.map((l) => (
            <li key={l.number}>
              <button class="plain" aria-current={p.at === l.number ? "true" : undefined} onClick={() => p.go(l.number)}>
                {tf(lang, "reviewMistake", {
                  n: String(l.number),
                  colour: colourName(lang, l.colour),
                  played: point(l.played),
                  best: point(l.best),
                  loss: String(l.loss),
                })}
              </button>
            </li>
          ))}
        </ol>
      ) : (
        <p class="muted">{t(lang, "reviewNoMistakes")}</p>
      )}
    </div>
  );
}
