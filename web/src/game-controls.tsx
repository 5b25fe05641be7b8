// The seat's buttons under the board: in play Pass, Declare the end, Undo, Draw and
// Resign; the handicap's confirmation, the variant's bid, the tournament's check-in; and
// the record's download for everyone.
import type { JSX } from "preact";
import { Phase, type GameClient, type GameState } from "./client.js";
import { BidForm } from "./game-variant.js";
import type { Colour } from "./game-words.js";
import { t, type Lang } from "./i18n.js";
import type { useOutbox } from "./outbox.js";
import { downloadSgf } from "./sgf.js";

export function Controls(p: {
  lang: Lang;
  client: GameClient;
  gameId: string;
  s: GameState;
  me: Colour | undefined;
  myTurn: boolean;
  /** A move sent and not yet answered. */
  moving: boolean;
  /** The player's own requests waiting for an answer. */
  asked: ("undo" | "draw")[];
  /** Free handicap: the stones chosen, when this player places them. */
  handicap: { x: number; y: number }[] | undefined;
  /** The variant: this seat's bid to seal, when not yet sealed. */
  seal: ((komi: number) => Promise<void>) | undefined;
  send: ReturnType<typeof useOutbox>["send"];
  resign: () => void;
}): JSX.Element {
  const { lang, client, s, me, myTurn, moving, send } = p;
  return (
    <div class="controls">
      {me && s.phase === Phase.PLAYING ? (
        <>
          <button disabled={!myTurn || moving} onClick={() => send((m) => client.pass({ mutation: m }), s.moveNumber, { label: t(lang, "pass") })}>
            {t(lang, "pass")}
          </button>
          <button
            disabled={!myTurn || moving}
            onClick={() => send((m) => client.declareEnd({ mutation: m }), s.moveNumber, { label: t(lang, "declareEnd") })}
          >
            {t(lang, "declareEnd")}
          </button>
          <button disabled={p.asked.includes("undo")} onClick={() => send((m) => client.requestUndo({ mutation: m }), undefined, { label: t(lang, "undo") })}>
            {t(lang, "undo")}
          </button>
          <button disabled={p.asked.includes("draw")} onClick={() => send((m) => client.offerDraw({ mutation: m }), undefined, { label: t(lang, "draw") })}>
            {t(lang, "draw")}
          </button>
          <button class="danger" onClick={p.resign}>
            {t(lang, "resign")}
          </button>
        </>
      ) : null}
      {p.handicap ? (
        <button disabled={p.handicap.length !== s.settings?.handicap} onClick={() => send((m) => client.placeHandicap({ mutation: m, stones: p.handicap! }))}>
          {t(lang, "confirmPlacement")}
        </button>
      ) : null}
      {p.seal ? <BidForm lang={lang} seal={p.seal} /> : null}
      {me && s.phase === Phase.SCHEDULED ? <button onClick={() => send((m) => client.checkIn({ mutation: m }))}>{t(lang, "checkIn")}</button> : null}
      {s.forfeitAtMs !== undefined ? (
        <span class="deadline">
          {t(lang, "forfeitAt")} {new Date(Number(s.forfeitAtMs)).toLocaleTimeString()}
        </span>
      ) : null}
      <button onClick={() => downloadSgf(client, p.gameId)}>{t(lang, "sgf")}</button>
    </div>
  );
}
