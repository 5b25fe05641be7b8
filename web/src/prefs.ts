// What the browser keeps: the player's settings, each game's seat token (so a reload keeps
// the seat), the nigiri secret until it is revealed, and each game's folded record (so a
// reload resumes from the last event seen).
import type { Lang } from "./i18n.js";
import type { Folded } from "./state.js";

export interface Prefs {
  skin: "wood" | "flat";
  sound: boolean;
  coordinates: boolean;
  lang: Lang;
  /** On 13x13 and 19x19, a tap proposes a move and a second tap (or Confirm) plays it. */
  confirmMoves: boolean;
}

const PREFS = "weiqi.prefs";

/** A stored JSON value; none when absent, unreadable, or storage is disabled. */
function read<T>(storage: Storage, key: string): T | undefined {
  try {
    const s = storage.getItem(key);
    return s ? (JSON.parse(s) as T) : undefined;
  } catch {
    return undefined;
  }
}

export function loadPrefs(): Prefs {
  const lang: Lang = navigator.language?.startsWith("zh") ? "zh" : "en";
  // A finger covers several points of a big board on a phone: confirm there by default.
  const touch = globalThis.matchMedia?.("(pointer: coarse)").matches ?? false;
  const defaults: Prefs = { skin: "wood", sound: false, coordinates: true, lang, confirmMoves: touch };
  return { ...defaults, ...read<Partial<Prefs>>(localStorage, PREFS) };
}

export function savePrefs(p: Prefs): void {
  localStorage.setItem(PREFS, JSON.stringify(p));
}

export interface SeatRecord {
  token: string;
  seat: "host" | "guest";
  /** The host's nigiri secret, until revealed. */
  nigiri?: { stones: number; nonce: string };
  /** The variant: this seat's sealed komi bid and its nonce, until revealed. */
  bid?: { komi: number; nonce: string };
}

const seatKey = (id: string) => `weiqi.seat.${id}`;

export function loadSeat(gameId: string): SeatRecord | undefined {
  return read(localStorage, seatKey(gameId));
}

export function saveSeat(gameId: string, seat: SeatRecord): void {
  localStorage.setItem(seatKey(gameId), JSON.stringify(seat));
}

export function forgetSeat(gameId: string): void {
  localStorage.removeItem(seatKey(gameId));
}

/** The part of a folded record worth keeping across a reload (the state comes fresh); a
 * record kept by an older app has no setup. */
type Kept = Pick<Folded, "seq" | "moves"> & Partial<Pick<Folded, "setup">>;
const recordKey = (id: string) => `weiqi.record.${id}`;

export function loadRecord(gameId: string): Kept | undefined {
  return read(sessionStorage, recordKey(gameId));
}

export function saveRecord(gameId: string, f: Folded): void {
  try {
    sessionStorage.setItem(recordKey(gameId), JSON.stringify({ seq: f.seq, moves: f.moves, setup: f.setup }));
  } catch {
    // Storage full or disabled: a reload then replays from the start, which is only slower.
  }
}

/** The signed-in player (a guest account), kept in the browser. */
export interface PlayerRecord {
  id: string;
  name: string;
  token: string;
}

const PLAYER = "weiqi.player";

export function loadPlayer(): PlayerRecord | undefined {
  return read(localStorage, PLAYER);
}

export function savePlayer(p: PlayerRecord | undefined): void {
  if (p) localStorage.setItem(PLAYER, JSON.stringify(p));
  else localStorage.removeItem(PLAYER);
}
