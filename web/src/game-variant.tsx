// The free-seats variant (seed 002): seat stones placed in turn, then sealed komi bids;
// the higher bid plays Black with its komi.
import { useState } from "preact/hooks";
import type { JSX } from "preact";
import { Phase, type GameState } from "./client.js";
import { num } from "./forms.js";
import { colourName, type Colour } from "./game-words.js";
import { t, tf, type Lang } from "./i18n.js";
import { bidOutcome } from "./state.js";

/** For players and spectators alike: whose seat stone is next, the bids as they are
 * sealed and revealed, and how colours and komi were decided. */
export function VariantPanel(p: { lang: Lang; s: GameState; seat: "host" | "guest" | undefined; nextStone: Colour }): JSX.Element {
  const { lang, s } = p;
  const seatWord = (x: "host" | "guest") => t(lang, x === "host" ? "hostSeat" : "guestSeat");
  const stoneSeat = p.nextStone === "B" ? "host" : "guest";
  const outcome = bidOutcome(s);
  const bid = (x: "host" | "guest") => {
    const v = x === "host" ? s.hostBid : s.guestBid;
    const sealed = x === "host" ? s.hostBidSealed : s.guestBidSealed;
    return v !== undefined ? String(v) : t(lang, sealed ? "bidSealed" : "bidNotSealed");
  };
  return (
    <div class="variant" data-testid="variant">
      {s.phase === Phase.SEAT_STONES ? (
        <p data-testid="seat-stone-next">
          {p.seat === stoneSeat
            ? tf(lang, "seatStoneYours", { colour: colourName(lang, p.nextStone) })
            : tf(lang, "seatStoneNext", { colour: colourName(lang, p.nextStone), seat: seatWord(stoneSeat) })}
        </p>
      ) : null}
      {s.phase !== Phase.SEAT_STONES && s.phase !== Phase.WAITING_FOR_OPPONENT ? (
        <ul class="bids" data-testid="bids">
          <li>
            {t(lang, "hostBid")}: {bid("host")}
          </li>
          <li>
            {t(lang, "guestBid")}: {bid("guest")}
          </li>
        </ul>
      ) : null}
      {outcome ? (
        <p data-testid="komi-decided">
          {tf(lang, outcome.byLot ? "bidDecidedLot" : "bidDecided", {
            h: String(outcome.hostBid),
            g: String(outcome.guestBid),
            black: seatWord(outcome.black),
            komi: String(outcome.komi),
          })}{" "}
          <strong>
            {t(lang, "komi")} {outcome.komi}
          </strong>
        </p>
      ) : null}
    </div>
  );
}

/** A komi bid (what this player would give as Black), sealed. */
export function BidForm(p: { lang: Lang; seal: (komi: number) => Promise<void> }): JSX.Element {
  const [komi, setKomi] = useState(6.5);
  return (
    <form
      class="bid"
      onSubmit={(e) => {
        e.preventDefault();
        void p.seal(komi);
      }}
    >
      <label>
        {t(p.lang, "bidLabel")}
        <input type="number" name="bid" step="0.5" value={komi} onInput={num(setKomi)} />
      </label>
      <button type="submit">{t(p.lang, "sealBid")}</button>
    </form>
  );
}
