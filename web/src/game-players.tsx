// The two players beside the board: who plays which colour, whether each is here (the
// presence), the clocks and captures; the connection above them; and, when the opponent
// has left a game in play, the countdown to claiming it and the claim.
import type { JSX } from "preact";
import { Color, Phase, type GameState } from "./client.js";
import { playerName, type Colour } from "./game-words.js";
import { t, tf, type Lang } from "./i18n.js";
import { displayClock, formatMs, presenceOf, presenceView, seatOf, type Folded, type PresenceView } from "./state.js";

export function Players(p: {
  lang: Lang;
  f: Folded;
  s: GameState;
  me: Colour | undefined;
  offline: boolean;
  /** Local time now, and the server's. */
  now: number;
  serverNow: number;
}): JSX.Element {
  const { lang, f, s, me, offline } = p;
  const toMove: Colour = s.toMove === Color.BLACK ? "B" : "W";
  const seatFor = (c: Colour) => (me === c ? ` (${t(lang, "you")})` : "");
  return (
    <div class="players">
      <p class={`conn ${offline ? "off" : "on"}`} data-testid="connection" role="status">
        <span class="conn-dot" aria-hidden="true" />
        {t(lang, offline ? "offline" : "connected")}
      </p>
      {(["B", "W"] as const).map((c) => {
        const cv = displayClock(f, c, p.now);
        const caps = c === "B" ? s.blackCaptures : s.whiteCaptures;
        const toMoveHere = s.phase === Phase.PLAYING && toMove === c;
        const pv = presenceView(presenceOf(s, c), p.serverNow);
        return (
          <section
            key={c}
            class={`player ${c === "B" ? "black" : "white"}${toMoveHere ? " to-move" : ""}`}
            aria-label={`${t(lang, c === "B" ? "black" : "white")}${seatFor(c)}`}
            data-testid={`player-${c}`}
          >
            <h3>
              <span class={`dot ${c === "B" ? "black" : "white"}`} aria-hidden="true" />
              {t(lang, c === "B" ? "black" : "white")}
              {playerName(s, c) ? ` · ${playerName(s, c)}` : ""}
              {seatFor(c)}
              {toMoveHere ? <span class="muted"> · {t(lang, "toMove")}</span> : null}
            </h3>
            {pv.known && seatOf(s, c) ? (
              // (Offline, this is only the last known presence: shown faded.)
              <span class={`presence ${pv.present ? "here" : "gone"}${offline ? " stale" : ""}`} data-testid={`presence-${c}`}>
                <span class="presence-dot" aria-hidden="true" />
                {pv.present ? t(lang, "online") : tf(lang, "leftAgo", { ago: formatMs(pv.awayMs) })}
              </span>
            ) : null}
            <div class={`clock${cv.low ? " low" : ""}${cv.running ? " running" : ""}${cv.flagged ? " flagged" : ""}`} data-testid={`clock-${c}`} role="timer">
              <span class="time">{cv.text}</span>
              {cv.detail ? <span class="detail" data-testid={`periods-${c}`}>{cv.overtime ? `× ${cv.detail}` : cv.detail}</span> : null}
              {cv.flagged ? <span class="flag">{t(lang, "lostOnTime")}</span> : null}
            </div>
            <div class="muted">
              {t(lang, "captures")}: {caps}
            </div>
          </section>
        );
      })}
    </div>
  );
}

/** The opponent has left: how long ago and until the claim, then the win or a draw. */
export function ClaimPanel(p: { lang: Lang; away: PresenceView; claim: (draw: boolean) => void }): JSX.Element {
  const { lang, away } = p;
  return (
    <div class="claim" role="alert" data-testid="claim">
      {away.claimInMs! > 0 ? (
        <>
          {tf(lang, "opponentLeft", { ago: formatMs(away.awayMs) })} {tf(lang, "claimIn", { time: formatMs(away.claimInMs!) })}
        </>
      ) : (
        <>
          {t(lang, "claimNow")}
          <button onClick={() => p.claim(false)}>{t(lang, "claimWin")}</button>
          <button class="secondary" onClick={() => p.claim(true)}>
            {t(lang, "claimDraw")}
          </button>
        </>
      )}
    </div>
  );
}
