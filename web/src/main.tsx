// The app's shell: the header with the settings, and a hash router (#/ the lobby,
// #/game/<id> a game), so that a game's address can be shared and reloaded.
import { render, type JSX } from "preact";
import { useEffect, useMemo, useState } from "preact/hooks";
import { createGameClient } from "./client.js";
import { GamePage } from "./game.js";
import { t } from "./i18n.js";
import { Lobby } from "./lobby.js";
import { loadPrefs, loadSeat, savePrefs, type Prefs } from "./prefs.js";

function route(): { page: "lobby" } | { page: "game"; id: string } {
  const m = /^#\/game\/([^/]+)$/.exec(location.hash);
  return m ? { page: "game", id: decodeURIComponent(m[1]!) } : { page: "lobby" };
}

function App(): JSX.Element {
  const [prefs, setPrefs] = useState<Prefs>(loadPrefs);
  const [where, setWhere] = useState(route);
  const [showSettings, setShowSettings] = useState(false);
  // The service is this page's origin (weiqi serve serves both); `?api=` points elsewhere.
  const api = new URLSearchParams(location.search).get("api") ?? location.origin;
  const client = useMemo(() => createGameClient(api, (id) => loadSeat(id)?.token), [api]);
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
          <a href="#/">{t(lang, "lobby")}</a>
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
            <input type="checkbox" name="sound" checked={prefs.sound} onChange={(e) => update({ sound: (e.target as HTMLInputElement).checked })} />
            {t(lang, "sound")}
          </label>
          <label class="check">
            <input
              type="checkbox"
              name="coordinates"
              checked={prefs.coordinates}
              onChange={(e) => update({ coordinates: (e.target as HTMLInputElement).checked })}
            />
            {t(lang, "coordinates")}
          </label>
          <label>
            {t(lang, "language")}
            <select name="lang" value={lang} onChange={(e) => update({ lang: (e.target as HTMLSelectElement).value as Prefs["lang"] })}>
              <option value="en">English</option>
              <option value="zh">中文</option>
            </select>
          </label>
        </form>
      ) : null}
      {where.page === "game" ? (
        <GamePage key={where.id} client={client} prefs={prefs} gameId={where.id} />
      ) : (
        <Lobby client={client} lang={lang} go={(id) => (location.hash = `#/game/${id}`)} />
      )}
    </>
  );
}

render(<App />, document.getElementById("app")!);
