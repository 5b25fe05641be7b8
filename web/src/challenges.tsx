// Challenges between signed-in players: the form on a profile that sends one, and the
// inbox shown on every page, which tells the challenged player of it (Accept / Decline),
// and tells the challenger the answer (an accepted challenge takes both to the game; the
// challenger hosts it, the accepter is the guest). Both come from the app's one feed.
import { useEffect, useRef, useState } from "preact/hooks";
import { create } from "@bufbuild/protobuf";
import type { JSX } from "preact";
import {
  ChallengeStatus,
  ColorChoice,
  DeclineReason,
  GameSettingsSchema,
  RefereeMode,
  TimeControlSchema,
  failure,
  type ChallengeInfo,
  type GameClient,
  type GameSettings,
  type PlayerClient,
} from "./client.js";
import { takeSeat, type PlayerFeed } from "./feed.js";
import { BoardSizeSelect } from "./forms.js";
import { t, tf, type Key, type Lang } from "./i18n.js";
import { describe } from "./lobby.js";
import { saveSeat } from "./prefs.js";

/** What the challenge form asks. */
export interface ChallengeChoice {
  size: 9 | 13 | 19;
  mainMin: number;
  periods: number;
  periodS: number;
  rated: boolean;
  colour: ColorChoice;
}

export const DEFAULT_CHALLENGE: ChallengeChoice = { size: 9, mainMin: 10, periods: 3, periodS: 30, rated: true, colour: ColorChoice.RANDOM };

/** The game's settings for a challenge (as the lobby's form builds them): Chinese rules,
 * komi 7.5, byo-yomi, no handicap; the colour is the challenger's. */
export function challengeSettings(c: ChallengeChoice): GameSettings {
  return create(GameSettingsSchema, {
    boardSize: c.size,
    rules: "chinese",
    komi: 7.5,
    handicap: 0,
    timeControl: create(TimeControlSchema, {
      kind: {
        case: "byoYomi",
        value: { mainMs: BigInt(Math.round(c.mainMin * 60_000)), periods: c.periods, periodMs: BigInt(c.periodS * 1000) },
      },
    }),
    colorChoice: c.colour,
    mode: RefereeMode.CASUAL,
    rated: c.rated,
  });
}

const REASONS: [DeclineReason, Key][] = [
  [DeclineReason.GENERIC, "declineGeneric"],
  [DeclineReason.LATER, "declineLater"],
  [DeclineReason.BOARD_SIZE, "declineBoardSize"],
  [DeclineReason.KOMI, "declineKomi"],
  [DeclineReason.RULES, "declineRules"],
  [DeclineReason.TIME_CONTROL, "declineTimeControl"],
  [DeclineReason.HANDICAP, "declineHandicap"],
  [DeclineReason.RATED, "declineRated"],
  [DeclineReason.CASUAL, "declineCasual"],
  [DeclineReason.TOO_MANY_GAMES, "declineTooManyGames"],
  [DeclineReason.NO_BOTS, "declineNoBots"],
  [DeclineReason.COLOR, "declineColor"],
];

/** A decline's reason in words (GENERIC for one the app does not know). */
export function reasonWords(lang: Lang, r: DeclineReason): string {
  return t(lang, REASONS.find(([x]) => x === r)?.[1] ?? "declineGeneric");
}

/** The form on another player's profile. */
export function ChallengeForm(p: {
  players: PlayerClient;
  lang: Lang;
  opponent: { id: string; name: string };
  onSent: (c: ChallengeInfo | undefined) => void;
}): JSX.Element {
  const { lang } = p;
  const [c, setC] = useState<ChallengeChoice>(DEFAULT_CHALLENGE);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState("");
  const set = (k: keyof ChallengeChoice) => (e: Event) => {
    const el = e.target as HTMLInputElement;
    setC({ ...c, [k]: el.type === "checkbox" ? el.checked : Number(el.value) });
  };
  const send = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    try {
      const r = await p.players.challenge({ playerId: p.opponent.id, settings: challengeSettings(c) });
      setError("");
      p.onSent(r.challenge);
    } catch (err) {
      const f = failure(err);
      setError(f.reason === "opponent_offline" ? tf(lang, "opponentOffline", { name: p.opponent.name }) : f.message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="create challenge-form" aria-label={`${t(lang, "challenge")} ${p.opponent.name}`} onSubmit={send}>
      <label>
        {t(lang, "boardSize")}
        <BoardSizeSelect name="challenge-size" value={c.size} onChange={(size) => setC({ ...c, size: size as ChallengeChoice["size"] })} />
      </label>
      <label>
        {t(lang, "mainMinutes")}
        <input name="challenge-main" type="number" min="0" step="1" value={c.mainMin} onInput={set("mainMin")} />
      </label>
      <label>
        {t(lang, "periods")}
        <input name="challenge-periods" type="number" min="1" value={c.periods} onInput={set("periods")} />
      </label>
      <label>
        {t(lang, "periodSeconds")}
        <input name="challenge-period" type="number" min="1" value={c.periodS} onInput={set("periodS")} />
      </label>
      <label>
        {t(lang, "colour")}
        <select name="challenge-colour" value={c.colour} onChange={set("colour")}>
          <option value={ColorChoice.RANDOM}>{t(lang, "random")}</option>
          <option value={ColorChoice.HOST_BLACK}>{t(lang, "black")}</option>
          <option value={ColorChoice.HOST_WHITE}>{t(lang, "white")}</option>
        </select>
      </label>
      <label class="check">
        <input type="checkbox" name="challenge-rated" checked={c.rated} onChange={set("rated")} />
        {t(lang, "rated")}
      </label>
      <button type="submit" disabled={busy}>
        {t(lang, "sendChallenge")}
      </button>
      {error ? (
        <p class="error" role="alert">
          {error}
        </p>
      ) : null}
    </form>
  );
}

interface Notice {
  id: string;
  text: string;
  /** A game to open from the notice. */
  gameId?: string;
}

/**
 * The inbox on every page while signed in: open challenges received (Accept / Decline with
 * a reason), the player's own waiting (Cancel), and notices of answers. Also opens the
 * game when the challenger's challenge is accepted, and announces a tournament game.
 */
export function ChallengeInbox(p: {
  players: PlayerClient;
  client: GameClient;
  feed: PlayerFeed;
  me: string;
  lang: Lang;
  go: (gameId: string) => void;
}): JSX.Element | null {
  const { lang, me } = p;
  const [received, setReceived] = useState<ChallengeInfo[]>([]);
  const [sent, setSent] = useState<ChallengeInfo[]>([]);
  const [notices, setNotices] = useState<Notice[]>([]);
  const [reasons, setReasons] = useState<Record<string, DeclineReason>>({});
  const [error, setError] = useState("");
  const goRef = useRef(p.go);
  goRef.current = p.go;

  useEffect(() => {
    let alive = true;
    const notify = (n: Notice) => setNotices((ns) => [...ns.filter((x) => x.id !== n.id), n]);
    const drop = (id: string) => {
      setReceived((cs) => cs.filter((c) => c.challengeId !== id));
      setSent((cs) => cs.filter((c) => c.challengeId !== id));
    };
    // Those already open (after a reload), then the feed's changes.
    const load = () =>
      p.players
        .listChallenges({})
        .then((r) => {
          if (!alive) return;
          const open = r.challenges.filter((c) => c.status === ChallengeStatus.OPEN);
          setReceived(open.filter((c) => c.challenged?.playerId === me));
          setSent(open.filter((c) => c.challenger?.playerId === me));
        })
        .catch(() => undefined);
    void load();
    const off = p.feed.on((ev) => {
      const e = ev.event;
      if (e.case === "subscribed") void load();
      else if (e.case === "challengeReceived") {
        const c = e.value;
        if (c.challenger?.playerId === me) setSent((cs) => [...cs.filter((x) => x.challengeId !== c.challengeId), c]);
        else setReceived((cs) => [...cs.filter((x) => x.challengeId !== c.challengeId), c]);
      } else if (e.case === "challengeAnswered") {
        const c = e.value;
        drop(c.challengeId);
        const mine = c.challenger?.playerId === me;
        const other = (mine ? c.challenged?.name : c.challenger?.name) ?? "";
        if (mine && c.status === ChallengeStatus.ACCEPTED && c.gameId) {
          // The challenger hosts the game: its seat, then the board.
          takeSeat(p.players, c.gameId, me)
            .then(() => alive && goRef.current(c.gameId))
            .catch((err) => alive && setError(failure(err).message));
        } else if (mine && c.status === ChallengeStatus.DECLINED) {
          notify({ id: c.challengeId, text: tf(lang, "challengeDeclined", { name: other, reason: reasonWords(lang, c.declineReason) }) });
        } else if (mine && c.status === ChallengeStatus.EXPIRED) {
          notify({ id: c.challengeId, text: tf(lang, "challengeExpired", { name: other }) });
        } else if (!mine && c.status === ChallengeStatus.CANCELLED) {
          notify({ id: c.challengeId, text: tf(lang, "challengeCancelled", { name: other }) });
        }
      } else if (e.case === "gameStarted") {
        // A tournament's board (challenges and quick play open their games themselves):
        // announced unless the player is already there.
        const gameId = e.value.gameId;
        if (location.hash === `#/game/${gameId}`) return;
        p.client
          .getGame({ gameId })
          .then((g) => {
            if (alive && g.state?.settings?.mode === RefereeMode.TOURNAMENT && location.hash !== `#/game/${gameId}`)
              notify({ id: gameId, text: t(lang, "tournamentGameReady"), gameId });
          })
          .catch(() => undefined);
      }
    });
    return () => {
      alive = false;
      off();
    };
  }, [p.feed, me, lang]);

  // A game's notice goes once the player is at that game, however they got there.
  useEffect(() => {
    const on = () => setNotices((ns) => ns.filter((n) => !n.gameId || location.hash !== `#/game/${n.gameId}`));
    addEventListener("hashchange", on);
    return () => removeEventListener("hashchange", on);
  }, []);

  const answer = async (c: ChallengeInfo, accept: boolean) => {
    try {
      const r = await p.players.answerChallenge({
        challengeId: c.challengeId,
        accept,
        reason: accept ? DeclineReason.UNSPECIFIED : (reasons[c.challengeId] ?? DeclineReason.GENERIC),
      });
      setReceived((cs) => cs.filter((x) => x.challengeId !== c.challengeId));
      setError("");
      if (accept && r.gameId && r.seatToken) {
        // The accepter is the game's guest.
        saveSeat(r.gameId, { token: r.seatToken, seat: "guest" });
        p.go(r.gameId);
      }
    } catch (err) {
      setReceived((cs) => cs.filter((x) => x.challengeId !== c.challengeId));
      setError(failure(err).message);
    }
  };

  const cancel = async (c: ChallengeInfo) => {
    try {
      await p.players.cancelChallenge({ challengeId: c.challengeId });
      setSent((cs) => cs.filter((x) => x.challengeId !== c.challengeId));
    } catch (err) {
      setError(failure(err).message);
    }
  };

  const open = async (n: Notice) => {
    setNotices((ns) => ns.filter((x) => x.id !== n.id));
    if (!n.gameId) return;
    await takeSeat(p.players, n.gameId, me).catch(() => false);
    p.go(n.gameId);
  };

  if (!received.length && !sent.length && !notices.length && !error) return null;
  return (
    <aside class="inbox" aria-label={t(lang, "challenge")} data-testid="inbox">
      {received.map((c) => (
        <div class="toast" role="alert" key={c.challengeId} data-challenge={c.challengeId}>
          <strong>{tf(lang, "challengeFrom", { name: c.challenger?.name ?? "" })}</strong>
          <span class="muted">
            {c.settings ? `${c.settings.boardSize}×${c.settings.boardSize} · ${describe(lang, c.settings)}` : ""}
          </span>
          <span class="row">
            <button onClick={() => answer(c, true)}>{t(lang, "accept")}</button>
            <select
              name="decline-reason"
              aria-label={t(lang, "declineReason")}
              value={reasons[c.challengeId] ?? DeclineReason.GENERIC}
              onChange={(e) => setReasons({ ...reasons, [c.challengeId]: Number((e.target as HTMLSelectElement).value) })}
            >
              {REASONS.map(([r, k]) => (
                <option key={r} value={r}>
                  {t(lang, k)}
                </option>
              ))}
            </select>
            <button class="danger" onClick={() => answer(c, false)}>
              {t(lang, "decline")}
            </button>
          </span>
        </div>
      ))}
      {sent.map((c) => (
        <div class="toast" role="status" key={c.challengeId} data-testid="challenge-sent">
          <span>{tf(lang, "challengeWaiting", { name: c.challenged?.name ?? "" })}</span>
          <button type="button" onClick={() => cancel(c)}>
            {t(lang, "cancel")}
          </button>
        </div>
      ))}
      {notices.map((n) => (
        <div class="toast" role="alert" key={n.id} data-testid="notice">
          <span>{n.text}</span>
          <span class="row">
            {n.gameId ? <button onClick={() => open(n)}>{t(lang, "playGame")}</button> : null}
            <button type="button" class="plain" onClick={() => setNotices((ns) => ns.filter((x) => x.id !== n.id))}>
              {t(lang, "dismiss")}
            </button>
          </span>
        </div>
      ))}
      {error ? (
        <div class="toast error" role="alert">
          {error}{" "}
          <button type="button" class="plain" onClick={() => setError("")}>
            {t(lang, "dismiss")}
          </button>
        </div>
      ) : null}
    </aside>
  );
}
