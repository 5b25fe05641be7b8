// The game page's words that follow from the state alone: the status line, a move list's
// line, how an abandoned game ended, a seat's player. Pure, for the unit tests.
import { Color, Phase, type GameState } from "./gen/weiqi/v1/game_pb.js";
import { t, tf, type Key, type Lang } from "./i18n.js";
import { presenceOf, seatOf, type MoveEntry } from "./state.js";

export type Colour = "B" | "W";

export const colourName = (lang: Lang, c: Colour) => t(lang, c === "B" ? "black" : "white");

/** A move list line's words: the point, or what the turn was instead. */
export function moveText(lang: Lang, m: MoveEntry): string {
  const words: Record<string, Key> = { pass: "movePass", end: "moveEnd", void: "moveVoid" };
  return words[m.text] ? t(lang, words[m.text]!) : m.text;
}

/** An abandoned game in words: who left, and what the one who stayed chose. */
export function abandonedWords(lang: Lang, s: GameState): string {
  const winner = s.result?.winner;
  if (winner === Color.BLACK || winner === Color.WHITE) {
    const w: Colour = winner === Color.BLACK ? "B" : "W";
    return tf(lang, "abandonedWin", { loser: colourName(lang, w === "B" ? "W" : "B"), winner: colourName(lang, w) });
  }
  // A draw does not say who left; the presence does, while the one who left stays away.
  const gone = (["B", "W"] as const).filter((c) => presenceOf(s, c)?.present === false);
  return gone.length === 1 ? tf(lang, "abandonedDraw", { loser: colourName(lang, gone[0]!) }) : t(lang, "abandonedDrawUnknown");
}

/** The signed-in player playing `c`, if any. */
export function playerName(s: GameState, c: Colour): string | undefined {
  const seat = seatOf(s, c);
  return seat && (seat === "host" ? s.hostPlayer : s.guestPlayer)?.name;
}

/** The line above the controls: the phase, or in play whose turn and the move number. */
export function statusLine(lang: Lang, s: GameState, me: Colour | undefined, myTurn: boolean, last: MoveEntry | undefined): string {
  const phases: Partial<Record<Phase, Key>> = {
    [Phase.WAITING_FOR_OPPONENT]: "waiting",
    [Phase.SEAT_STONES]: "seatStonesPhase",
    [Phase.BIDDING]: "biddingPhase",
    [Phase.NIGIRI]: "nigiriPhase",
    [Phase.PLACING_HANDICAP]: "placeHandicap",
    [Phase.SCHEDULED]: "scheduled",
    [Phase.ADJOURNED]: "adjourned",
    [Phase.SCORING]: "scoring",
  };
  const k = phases[s.phase];
  if (k) return t(lang, k);
  if (s.phase === Phase.PLAYING) {
    const who = t(lang, me === undefined ? "spectating" : myTurn ? "yourTurn" : "opponentsTurn");
    // A declared end is a pass that asks the opponent to end play: said as such.
    const ended = last?.text === "end" ? ` · ${tf(lang, "noticeDeclaredEnd", { who: colourName(lang, last.color) })}` : "";
    return `${who} · ${t(lang, "move")} ${s.moveNumber}${ended}`;
  }
  return "";
}
