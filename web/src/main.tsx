// The app's shell: the header with the settings, and a hash router (#/ the lobby,
// #/game/<id> a game), so that a game's address can be shared and reloaded.
import { render, type JSX } from "preact";
import { useEffect, useMemo, useState } from "preact/hooks";
import { createGameClient, createPlayerClient, createTournamentClient, failure } from "./client.js";
import { ChallengeInbox } from "./challenges.js";
import { PlayerFeed } from "./feed.js";
import { Identity } from "./identity.js";
import { ProfilePage } from "./profile.js";
import { TournamentPage, TournamentsPage } from "./tournaments.js";
import { checked } from "./forms.js";
import { GamePage } from "./game.js";
import { t } from "./i18n.js";
import { Lobby } from "./lobby.js";
import { loadPlayer, loadPrefs, loadSeat, savePlayer, savePrefs, type PlayerRecord, type Prefs } from "./prefs.js";

type Route =
  | { page: "lobby" }
  | { page: "game"; id: string }
  | { page: "player"; id: string; challenge: boolean }
  | { page: "tournaments" }
  | { page: "tournament"; id: string };

function route(): Route {
  const h = location.hash;
  const m = /^#\/game\/([^/]+)$/.exec(h);
  if (m) return { page: "game", id: decodeURIComponent(m[1]!) };
  // #/player/<id>, or #/player/<id>/challenge with the challenge form open.
  const pl = /^#\/player\/([^/]+)(\/challenge)?$/.exec(h);
  if (pl) return { page: "player", id: decodeURIComponent(pl[1]!), challenge: !!pl[2] };
  if (h === "#/tournaments") return { page: "tournaments" };
  const tr = /^#\/tournament\/([^/]+)$/.exec(h);
  if (tr) return { page: "tournament", id: decodeURIComponent(tr[1]!) };
  return { page: "lobby" };
}

function App(): JSX.Element {
  const [prefs, setPrefs] = useState<Prefs>(loadPrefs);
  const [where, setWhere] = useState(route);
  const [showSettings, setShowSettings] = useState(false);
  // The service is this page's origin (weiqi serve serves both); `?api=` points elsewhere.
  const api = new URLSearchParams(location.search).get("api") ?? location.origin;
  const [player, setPlayer] = useState<PlayerRecord | undefined>(loadPlayer);
  const [guestName, setGuestName] = useState("");
  const [signInError, setSignInError] = useState("");
  // A seat's token acts in its game; the player's credential names who takes a seat.
  const client = useMemo(() => createGameClient(api, (id) => loadSeat(id)?.token, () => loadPlayer()?.token), [api]);
  const players = useMemo(() => createPlayerClient(api, () => loadPlayer()?.token), [api]);
  const tournaments = useMemo(() => createTournamentClient(api, () => loadPlayer()?.token), [api]);
  // One WatchPlayer stream for the whole app while signed in: it keeps the player online
  // (challengeable) and carries challenges, matches and games' ends to every page.
  const feed = useMemo(() => new PlayerFeed(players), [players]);
  useEffect(() => {
    if (!player) return;
    feed.open();
    return () => feed.close();
  }, [feed, player?.token]);
  const go = (id: string) => (location.hash = `#/game/${id}`);
  const signIn = async (e: Event) => {
    e.preventDefault();
    try {
      const r = await players.registerGuest({ name: guestName });
      const p = { id: r.player!.playerId, name: r.player!.name, token: r.token };
      savePlayer(p);
      setPlayer(p);
      setSignInError("");
    } catch (err) {
      // The typed name stays in the field to be edited.
      const f = failure(err);
      setSignInError(f.reason === "name_taken" ? t(prefs.lang, "nameTaken") : f.message);
    }
  };
  useEffect(() => {
    const on = () => setWhere(route());
    addEventListener("hashchange", on);
    return () => removeEventListener("hashchange", on);
  }, []);
  useEffect(() => {
    document.documentElement.lang = prefs.lang === "zh" ? "zh-CN" : "en";
    document.body.dataset.skin = prefs.skin;
  }, [prefs]);
  const update = (p: Partial<Prefs>) => {
    const next = { ...prefs, ...p };
    savePrefs(next);
    setPrefs(next);
  };
  const lang = prefs.lang;
  return (
    <>
      <header>
        <h1>
          <a href="#/">{t(lang, "title")}</a>
        </h1>
        <nav>
          {player ? <Identity players={players} feed={feed} id={player.id} name={player.name} lang={lang} /> : null}
          <a href="#/">{t(lang, "lobby")}</a>
          <a href="#/tournaments">{t(lang, "tournaments")}</a>
          <button aria-expanded={showSettings} onClick={() => setShowSettings(!showSettings)}>
            {t(lang, "settings")}
          </button>
        </nav>
      </header>
      {showSettings ? (
        <form class="settings" aria-label={t(lang, "settings")} onSubmit={(e) => e.preventDefault()}>
          <label>
            {t(lang, "skin")}
            <select name="skin" value={prefs.skin} onChange={(e) => update({ skin: (e.target as HTMLSelectElement).value as Prefs["skin"] })}>
              <option value="wood">{t(lang, "skinWood")}</option>
              <option value="flat">{t(lang, "skinFlat")}</option>
            </select>
          </label>
          <label class="check">
            <input type="checkbox" name="sound" checked={prefs.sound} onChange={checked((sound) => update({ sound }))} />
            {t(lang, "sound")}
          </label>
          <label class="check">
            <input
              type="checkbox"
              name="coordinates"
              checked={prefs.coordinates}
              onChange={checked((coordinates) => update({ coordinates }))}
            />
            {t(lang, "coordinates")}
          </label>
          <label class="check">
            <input
              type="checkbox"
              name="confirmMoves"
              checked={prefs.confirmMoves}
              onChange={checked((confirmMoves) => update({ confirmMoves }))}
            />
            {t(lang, "confirmMoves")}
          </label>
          <label>
            {t(lang, "language")}
            <select name="lang" value={lang} onChange={(e) => update({ lang: (e.target as HTMLSelectElement).value as Prefs["lang"] })}>
              <option value="en">English</option>
              <option value="zh">中文</option>
            </select>
          </label>
          {player ? (
            <button
              type="button"
              onClick={() => {
                savePlayer(undefined);
                setPlayer(undefined);
              }}
            >
              {t(lang, "signOut")}
            </button>
          ) : null}
        </form>
      ) : null}
      {!player ? (
        <form class="settings sign-in" aria-label={t(lang, "playAsGuest")} onSubmit={signIn}>
          <label>
            {t(lang, "guestName")}
            <input name="guest-name" value={guestName} maxLength={32} onInput={(e) => setGuestName((e.target as HTMLInputElement).value)} />
          </label>
          <button type="submit" disabled={!guestName.trim()}>
            {t(lang, "playAsGuest")}
          </button>
          {signInError ? (
            <span class="error" role="alert">
              {signInError}
            </span>
          ) : null}
        </form>
      ) : null}
      {player ? <ChallengeInbox players={players} client={client} feed={feed} me={player.id} lang={lang} go={go} /> : null}
      {where.page === "player" ? (
        <ProfilePage
          key={where.id}
          players={players}
          client={client}
          feed={player ? feed : undefined}
          me={player?.id}
          playerId={where.id}
          challenge={where.challenge}
          lang={lang}
        />
      ) : where.page === "tournaments" ? (
        <TournamentsPage tournaments={tournaments} signedIn={!!player} lang={lang} />
      ) : where.page === "tournament" ? (
        <TournamentPage key={where.id} tournaments={tournaments} players={players} me={player?.id} id={where.id} lang={lang} go={go} />
      ) : where.page === "game" ? (
        <GamePage key={where.id} client={client} players={players} prefs={prefs} gameId={where.id} />
      ) : (
        <Lobby client={client} players={players} feed={player ? feed : undefined} signedIn={!!player} lang={lang} go={go} />
      )}
    </>
  );
}

render(<App />, document.getElementById("app")!);
