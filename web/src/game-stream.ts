// A game's state, folded from WatchGame (resumed from the last event seen after a reload
// or a dropped connection) and from the answers to the player's calls.
import { useEffect, useRef, useState } from "preact/hooks";
import { Phase, type CommandResult, type Event, type GameClient } from "./client.js";
import { loadRecord, saveRecord } from "./prefs.js";
import { empty, fold, foldResult, foldState, type Folded } from "./state.js";
import { keepWatching } from "./watch.js";

export interface StreamEvents {
  /** A new event (told once, whether the stream or a call's answer brings it first), with
   * the record after it. */
  event: (e: Event, f: Folded) => void;
  /** The server is reachable again. */
  back: () => void;
}

export function useGameStream(client: GameClient, gameId: string, events: StreamEvents) {
  const [f, setF] = useState<Folded>(() => ({ ...empty(), ...(loadRecord(gameId) ?? {}) }));
  const fRef = useRef(f);
  fRef.current = f;
  const [offline, setOffline] = useState(false);
  const [notFound, setNotFound] = useState(false);
  const on = useRef(events);
  on.current = events;

  const apply = (g: Folded) => {
    fRef.current = g;
    setF(g);
    saveRecord(gameId, g);
  };

  /** Folds a call's answer. */
  const answered = (result: CommandResult | undefined) => {
    const before = fRef.current.seq;
    apply(foldResult(fRef.current, result, Date.now()));
    for (const e of result?.events ?? []) if (Number(e.seq) > before) on.current.event(e, fRef.current);
  };

  /** The state asked for again (after a call refused as stale). */
  const refresh = async () => {
    const got = await client.getGame({ gameId }).catch(() => undefined);
    if (got?.state) apply(foldState(fRef.current, got.state, Date.now()));
  };

  // Reconnects until the game ends.
  useEffect(() => {
    const abort = new AbortController();
    void keepWatching(
      abort.signal,
      async () => {
        const got = await client.getGame({ gameId }, { signal: abort.signal });
        if (got.state) apply(foldState(fRef.current, got.state, Date.now()));
        setOffline(false);
        setNotFound(false);
        on.current.back();
        const stream = client.watchGame({ gameId, sinceSeq: BigInt(fRef.current.seq) }, { signal: abort.signal });
        for await (const r of stream) {
          setOffline(false);
          if (!r.state) continue;
          const before = fRef.current;
          // An item without an event is a change outside the log (a seat's presence).
          apply(fold(before, r.event, r.state, Date.now()));
          if (r.event && Number(r.event.seq) > before.seq) on.current.event(r.event, fRef.current);
        }
        return fRef.current.state?.phase === Phase.FINISHED ? "done" : "again";
      },
      { gone: () => setNotFound(true), offline: () => setOffline(true) },
    );
    return () => abort.abort();
  }, [client, gameId]);

  return { f, offline, setOffline, notFound, answered, refresh };
}
