// What the game tells as its events arrive: a stone's sound, the referee's byo-yomi call
// (C2) and a line for the other happenings (an undo declined, a score disputed).
import { useEffect, useRef, useState } from "preact/hooks";
import { Color, type Event } from "./client.js";
import { colourName, type Colour } from "./game-words.js";
import { t, tf } from "./i18n.js";
import type { Prefs } from "./prefs.js";
import { sayCall, stoneSound } from "./sound.js";
import { announcement, eventNotice, type Folded } from "./state.js";

/** Events older than this when they arrive are a replay (a reload, a reconnect): folded,
 * but not announced again. */
const FRESH_MS = 15_000;

export function useAnnouncements(prefs: Prefs, over: boolean) {
  const [call, setCall] = useState<{ color: Colour; text: string } | undefined>();
  const [notice, setNotice] = useState<string | undefined>();
  const prefsRef = useRef(prefs);
  prefsRef.current = prefs;

  // The last call leaves the screen with the game.
  useEffect(() => {
    if (over) setCall(undefined);
  }, [over]);

  const onEvent = (e: Event, f: Folded) => {
    const pr = prefsRef.current;
    const kind = e.kind;
    if (kind === "move_played" && pr.sound) stoneSound();
    const color: Colour = e.color === Color.BLACK ? "B" : "W";
    // The referee's call is about the player thinking: it goes when that player moves
    // or the game ends.
    if (kind === "game_ended") setCall(undefined);
    else if (kind === "move_played" || kind === "passed" || kind === "move_voided") {
      setCall((c) => (c && c.color === color ? undefined : c));
    }
    const c = announcement(e);
    if (c) {
      const words = pr.sound ? sayCall(pr.lang, c.seconds, c.count) : c.count !== undefined ? String(c.count) : `${c.seconds}s`;
      setCall({ color: c.color, text: `${c.color === "B" ? t(pr.lang, "black") : t(pr.lang, "white")}: ${words}` });
    }
    const serverNow = Date.now() + f.offsetMs;
    const n = eventNotice(e);
    if (n && Number(e.timeMs) >= serverNow - FRESH_MS) {
      setNotice(tf(pr.lang, n.key, { who: colourName(pr.lang, n.who) }));
    }
  };

  return { call, notice, dismissNotice: () => setNotice(undefined), onEvent };
}
