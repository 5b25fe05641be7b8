// The streams a page keeps open (a game, a tournament): reopened a second after a drop
// until they end or the page leaves.
import { failure } from "./client.js";

export const RECONNECT_MS = 1000;

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Runs `open` (one connection, to its end) again after each drop until it says "done" or
 * `signal` aborts. A failure that says there is nothing to watch (not found, or refused as
 * a malformed id) calls `gone` and stops, as waiting would not bring it; any other failure
 * calls `offline` and the stream is reopened.
 */
export async function keepWatching(
  signal: AbortSignal,
  open: () => Promise<"done" | "again">,
  on: { gone: () => void; offline: () => void },
): Promise<void> {
  while (!signal.aborted) {
    try {
      if ((await open()) === "done") return;
    } catch (e) {
      if (signal.aborted) return;
      const why = failure(e);
      if (why.kind === "not_found" || why.kind === "refused") {
        on.gone();
        return;
      }
      on.offline();
    }
    await sleep(RECONNECT_MS);
  }
}
