// The signed-in player's feed (PlayerService.WatchPlayer): one stream for the whole app,
// open while signed in, because the server counts a player with a stream as online and
// refuses challenges to anyone offline. The header, the challenge inbox and quick play
// listen to it; a dropped stream is reopened after the last event seen, so nothing is
// missed or told twice.
import { failure, type PlayerClient, type WatchPlayerResponse } from "./client.js";
import { saveSeat } from "./prefs.js";
import { RECONNECT_MS, sleep } from "./watch.js";

export type FeedListener = (ev: WatchPlayerResponse) => void;

export class PlayerFeed {
  private listeners = new Set<FeedListener>();
  private stop: AbortController | undefined;
  private seq = 0n;
  private live = false;
  private waiters: (() => void)[] = [];

  constructor(private players: PlayerClient) {}

  /** Opens the stream (again after a drop) until `close`. */
  open(): void {
    if (this.stop) return;
    const stop = new AbortController();
    this.stop = stop;
    this.seq = 0n;
    void (async () => {
      while (!stop.signal.aborted) {
        try {
          for await (const ev of this.players.watchPlayer({ afterSeq: this.seq }, { signal: stop.signal })) {
            if (ev.event.case === "subscribed") {
              this.live = true;
              for (const w of this.waiters.splice(0)) w();
            } else if (ev.seq > this.seq) this.seq = ev.seq;
            else continue; // a replayed event already told
            for (const l of [...this.listeners]) l(ev);
          }
        } catch {
          // Dropped (or the server restarting): reopened below.
        }
        this.live = false;
        if (!stop.signal.aborted) await sleep(RECONNECT_MS);
      }
    })();
  }

  close(): void {
    this.stop?.abort();
    this.stop = undefined;
    this.live = false;
  }

  /** Calls `l` with every event from now on; returns the unsubscribe. */
  on(l: FeedListener): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }

  /** Tells the listeners of an event the app made itself (a challenge it sent, which the
   * server's feed does not echo to the challenger). */
  tell(ev: WatchPlayerResponse): void {
    for (const l of [...this.listeners]) l(ev);
  }

  /** Resolves once the stream is live (the player counts as online). */
  whenLive(signal?: AbortSignal): Promise<void> {
    if (this.live) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.waiters.push(resolve);
      signal?.addEventListener("abort", () => reject(new DOMException("aborted", "AbortError")));
    });
  }
}

/**
 * Takes the caller's seat in a game the server paired or created for them (an accepted
 * challenge, a tournament board): the token from GetSeat, kept as the host's or guest's
 * seat as the game's state says. Returns false when the caller holds no seat there.
 */
export async function takeSeat(players: PlayerClient, gameId: string, me: string): Promise<boolean> {
  const r = await withRetry(() => players.getSeat({ gameId }));
  if (!r.seatToken) return false;
  const seat = r.state?.hostPlayer?.playerId === me ? "host" : "guest";
  saveSeat(gameId, { token: r.seatToken, seat });
  return true;
}

const SEAT_TRIES = 6;
const SEAT_RETRY_MS = 250;

/** A call about a game the server has just paired, asked again while the server answers
 * "conflict" (ABORTED: the game was being written at that moment, as just after a
 * challenge is accepted), "no game" (announced a moment before it is stored) or the
 * network fails. */
export async function withRetry<T>(call: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (e) {
      const f = failure(e);
      const again = f.reason === "conflict" || f.kind === "not_found" || f.kind === "network";
      if (attempt >= SEAT_TRIES || !again) throw e;
      await sleep(SEAT_RETRY_MS * attempt);
    }
  }
}
