// The outbox: nothing the player does is lost to the network. A call that cannot reach
// the server is kept, shown as pending, and sent again with the same request id (the
// server answers a retry with its first answer) until the connection returns.
import { useEffect, useRef, useState } from "preact/hooks";
import { failure, requestId, type CommandResult, type Failure } from "./client.js";
import { backoffMs, publishedPolicy } from "./retry.js";

/** Waits between tries as the published retry policy says, and never gives up while the
 * page is open. */
const RETRY = publishedPolicy();

/** A call made and not yet answered. */
export interface Pending {
  id: number;
  /** What it is, in words ("Move D5", "Pass"). */
  label: string;
  /** A move's stone, drawn on the board meanwhile. */
  stone?: { x: number; y: number; color: "B" | "W" };
  /** Whether the server has been unreachable for it at least once. */
  failed: boolean;
}

/** What a call is, for the pending list; a call without it is not listed. */
export type What = { label: string; stone?: Pending["stone"] };

export type Mutation = { gameId: string; requestId: string; expectedMoveNumber?: number };

type Call = () => Promise<{ result?: CommandResult }>;

/** Failures worth sending again: the server unreachable or restarting. A server error with
 * a reason of its own (a corrupt game) would only fail again. */
export function transient(why: Failure): boolean {
  return why.kind === "network" && (why.reason === "" || why.reason === "storage_unavailable" || why.reason === "shutting_down");
}

export interface OutboxEvents {
  /** A call is about to be sent. */
  sending: () => void;
  /** A call's answer. */
  answered: (result: CommandResult | undefined) => void;
  offline: (off: boolean) => void;
  /** A call refused, or failed in a way a retry would not mend. */
  refused: (why: Failure, e: unknown) => Promise<void> | void;
}

export function useOutbox(gameId: string, events: OutboxEvents) {
  const [pending, setPending] = useState<Pending[]>([]);
  const on = useRef(events);
  on.current = events;
  /** Calls waiting to be sent again, woken when the connection returns. */
  const wakers = useRef<(() => void)[]>([]);
  const alive = useRef(true);
  const nextPending = useRef(0);

  const wake = () => {
    for (const w of wakers.current.splice(0)) w();
  };

  useEffect(() => {
    alive.current = true;
    return () => {
      alive.current = false;
      wake();
    };
  }, []);

  // A page closed with a call still unsent would lose it: the browser asks first.
  useEffect(() => {
    if (pending.length === 0) return;
    const ask = (e: BeforeUnloadEvent) => e.preventDefault();
    addEventListener("beforeunload", ask);
    return () => removeEventListener("beforeunload", ask);
  }, [pending.length > 0]);

  /** Waits `ms`, or less when the connection comes back. */
  const retryAfter = (ms: number) =>
    new Promise<void>((r) => {
      const done = () => {
        clearTimeout(timer);
        r();
      };
      const timer = setTimeout(done, ms);
      wakers.current.push(done);
    });

  /** Sends a call, retrying network failures until it is answered (listed as pending
   * meanwhile when `what` says what it is). */
  async function act(call: Call, what?: What) {
    on.current.sending();
    const entry: Pending = { id: ++nextPending.current, label: what?.label ?? "", stone: what?.stone, failed: false };
    if (what) setPending((ps) => [...ps, entry]);
    try {
      for (let attempt = 1; alive.current; attempt++) {
        try {
          const r = await call();
          on.current.answered(r.result);
          on.current.offline(false);
          return;
        } catch (e) {
          const why = failure(e);
          if (!transient(why)) return on.current.refused(why, e);
          on.current.offline(true);
          if (!entry.failed) {
            entry.failed = true;
            setPending((ps) => ps.map((q) => (q.id === entry.id ? { ...entry } : q)));
          }
          await retryAfter(backoffMs(RETRY, Math.min(attempt, RETRY.maxAttempts)));
        }
      }
    } finally {
      if (what) setPending((ps) => ps.filter((q) => q.id !== entry.id));
    }
  }

  const mutation = (expected?: number): Mutation => ({ gameId, requestId: requestId(), expectedMoveNumber: expected });

  /** A call on the game with its request id made once, so every retry reuses it. */
  const send = (fn: (m: Mutation) => Promise<{ result?: CommandResult }>, expected?: number, what?: What) => {
    const m = mutation(expected);
    return act(() => fn(m), what);
  };

  return { pending, act, send, mutation, wake };
}
