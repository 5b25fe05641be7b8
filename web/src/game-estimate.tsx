// The score estimate during a game (EstimateScore, OGS's "estimate score"): a button that
// asks the server, and the answer shaded on the board until the game moves on.
import { useState } from "preact/hooks";
import type { JSX } from "preact";
import { failure, type GameClient } from "./client.js";
import { t, tf, type Lang } from "./i18n.js";

/** An estimate of the game at `seq`: each point's ownership (-1 White .. +1 Black, row by
 * row), the stones that look dead, and the result it gives. */
export interface Shown {
  seq: number;
  ownership: number[];
  dead: { x: number; y: number }[];
  text: string;
  black: number;
  white: number;
}

/** The estimate shown, if it is of the game as it is now (a move makes it stale). */
export function useEstimate(client: GameClient, gameId: string, seq: number) {
  const [shown, setShown] = useState<Shown>();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState("");
  const ask = async () => {
    setBusy(true);
    setError("");
    try {
      const r = await client.estimateScore({ gameId });
      setShown({
        seq: Number(r.seq),
        ownership: r.ownership,
        dead: r.deadStones.map((p) => ({ x: p.x, y: p.y })),
        text: r.text,
        black: r.blackPoints,
        white: r.whitePoints,
      });
    } catch (e) {
      const f = failure(e);
      setError(f.reason === "quota_exceeded" ? "estimateQuota" : f.message);
    } finally {
      setBusy(false);
    }
  };
  const current = shown && shown.seq === seq ? shown : undefined;
  return { shown: current, busy, error, ask, hide: () => setShown(undefined) };
}

export function EstimatePanel(p: {
  lang: Lang;
  estimate: ReturnType<typeof useEstimate>;
}): JSX.Element {
  const { lang, estimate: e } = p;
  return (
    <div class="estimate" data-testid="estimate">
      {e.shown ? (
        <>
          <span data-testid="estimate-text">
            {tf(lang, "estimateLine", { text: e.shown.text, b: String(e.shown.black), w: String(e.shown.white) })}
          </span>{" "}
          <button class="secondary" onClick={e.hide}>
            {t(lang, "hideEstimate")}
          </button>
        </>
      ) : (
        <button class="secondary" disabled={e.busy} onClick={() => void e.ask()}>
          {t(lang, "estimateScore")}
        </button>
      )}
      {e.error ? (
        <span class="error" role="alert">
          {e.error === "estimateQuota" ? t(lang, "estimateQuota") : e.error}
        </span>
      ) : null}
    </div>
  );
}
