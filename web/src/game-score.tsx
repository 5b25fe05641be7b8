// The end of a game: scoring (the server's count, the acceptances, Accept and Dispute),
// the result in words, and after a rated game the player's rating change and a rematch.
import { useEffect, useState } from "preact/hooks";
import type { JSX } from "preact";
import { EndReason, Phase, type GameState, type PlayerClient } from "./client.js";
import { abandonedWords, colourName, type Colour } from "./game-words.js";
import { t, tf, type Lang } from "./i18n.js";
import { ratingChangeFor } from "./state.js";
import { sleep } from "./watch.js";

export type RatingChange = ReturnType<typeof ratingChangeFor>;

/** A finished rated game: the player's rating before and after it (the ratings are
 * updated just after the game ends, so asked again a few times). */
export function useRatingChange(players: PlayerClient | undefined, s: GameState | undefined, playerId: string | undefined, gameId: string): RatingChange {
  const [rating, setRating] = useState<RatingChange>();
  const over = s?.phase === Phase.FINISHED;
  useEffect(() => {
    if (!over || !s?.settings?.rated || !players || !playerId) return;
    let stop = false;
    void (async () => {
      for (let i = 0; i < 10 && !stop; i++) {
        const h = await players.getRatingHistory({ playerId, boardSize: s.settings?.boardSize || 19, limit: 20 }).catch(() => undefined);
        const c = h && ratingChangeFor(h.changes, gameId);
        if (c) return setRating(c);
        await sleep(1000);
      }
    })();
    return () => {
      stop = true;
    };
  }, [over, playerId]);
  return rating;
}

/** Scoring: the server's count under the dead stones on the table (updated at every
 * toggle), each side's acceptance, and the explicit Accept and Dispute. */
export function ScorePanel(p: {
  lang: Lang;
  s: GameState;
  me: Colour | undefined;
  myAccepted: boolean;
  accept: () => void;
  dispute: () => void;
}): JSX.Element {
  const { lang, s } = p;
  const v = s.scoring;
  return (
    <div class="score" data-testid="score">
      {v ? (
        <>
          <strong>{t(lang, "scoreCount")}: </strong>
          <span data-testid="score-line">{tf(lang, "scoreLine", { b: String(v.blackPoints), w: String(v.whitePoints) })}</span>
          <div data-testid="score-text">{tf(lang, "scoreWithKomi", { text: v.text })}</div>
        </>
      ) : null}
      <ul class="acceptances">
        {(["B", "W"] as const).map((c) => {
          const ok = c === "B" ? s.blackAccepted : s.whiteAccepted;
          return (
            <li key={c} class={ok ? "ok" : ""} data-testid={`accepted-${c}`}>
              {colourName(lang, c)}: {ok ? `✓ ${t(lang, "accepted")}` : t(lang, "notYetAccepted")}
            </li>
          );
        })}
      </ul>
      {p.me && p.myAccepted ? <p class="muted">{t(lang, "youAccepted")}</p> : null}
      {p.me ? (
        <div class="controls">
          <button disabled={p.myAccepted} onClick={p.accept}>
            {t(lang, p.myAccepted ? "acceptedButton" : "acceptScore")}
          </button>
          <button class="secondary" onClick={p.dispute}>
            {t(lang, "disputeScore")}
          </button>
        </div>
      ) : null}
    </div>
  );
}

/** The result, how the game ended, the rating change and, when offered, a rematch. */
export function ResultPanel(p: { lang: Lang; s: GameState; rating: RatingChange; rematch?: () => void }): JSX.Element | null {
  const { lang, s, rating } = p;
  const result = s.result;
  if (!result) return null;
  return (
    <div class="result" data-testid="result">
      <strong>
        {t(lang, "result")}: {result.text}
      </strong>
      {result.reason === EndReason.SCORE ? (
        <div>
          {t(lang, "area")}: {t(lang, "black")} {result.blackPoints} · {t(lang, "white")} {result.whitePoints}
        </div>
      ) : null}
      {result.reason === EndReason.TIME ? <div>{t(lang, "byTime")}</div> : null}
      {result.reason === EndReason.RESIGNATION ? <div>{t(lang, "byResignation")}</div> : null}
      {result.reason === EndReason.DRAW_BY_AGREEMENT ? <div>{t(lang, "drawByAgreement")}</div> : null}
      {result.reason === EndReason.ABANDONED ? <div data-testid="abandoned">{abandonedWords(lang, s)}</div> : null}
      {rating ? (
        <div data-testid="rating-change">
          {tf(lang, "ratingChange", {
            before: String(rating.before),
            after: String(rating.after),
            delta: rating.delta >= 0 ? `+${rating.delta}` : String(rating.delta),
          })}
        </div>
      ) : null}
      {p.rematch ? (
        <button class="rematch" onClick={p.rematch}>
          {t(lang, "rematch")}
        </button>
      ) : null}
    </div>
  );
}
