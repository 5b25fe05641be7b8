// The game's lines that ask or tell: the opponent's request to answer, the player's own
// request waiting, the resignation's confirmation, and dismissable messages.
import type { ComponentChildren, JSX } from "preact";
import { t, type Key, type Lang } from "./i18n.js";

/** The opponent's pending request (undo or draw) and the player's two answers. */
export function Ask(p: { lang: Lang; question: Key; answer: (accept: boolean) => void }): JSX.Element {
  return (
    <div class="ask" role="alertdialog" aria-label={t(p.lang, p.question)}>
      {t(p.lang, p.question)}
      <button onClick={() => p.answer(true)}>{t(p.lang, "accept")}</button>
      <button onClick={() => p.answer(false)}>{t(p.lang, "decline")}</button>
    </div>
  );
}

/** The player's own requests, waiting for the opponent's answer. */
export function Waiting(p: { lang: Lang; requests: ("undo" | "draw")[] }): JSX.Element {
  return (
    <>
      {p.requests.map((r) => (
        <p key={r} class="info" role="status" data-testid={`${r}-waiting`}>
          {t(p.lang, r === "undo" ? "undoWaiting" : "drawWaiting")}
        </p>
      ))}
    </>
  );
}

/** Resigning asks first. */
export function ConfirmResign(p: { lang: Lang; yes: () => void; no: () => void }): JSX.Element {
  const { lang } = p;
  return (
    <div class="ask" role="alertdialog" aria-label={t(lang, "resignConfirm")}>
      {t(lang, "resignConfirm")}
      <button class="danger" onClick={p.yes}>
        {t(lang, "yes")}
      </button>
      <button onClick={p.no}>{t(lang, "no")}</button>
    </div>
  );
}

/** A line that stays until dismissed (or replaced). */
export function Dismissable(p: {
  class: string;
  role: "alert" | "status";
  testid: string;
  title?: string;
  lang: Lang;
  dismiss: () => void;
  children: ComponentChildren;
}): JSX.Element {
  return (
    <p class={`${p.class} dismissable`} role={p.role} data-testid={p.testid} title={p.title}>
      <span>{p.children}</span>
      <button class="close" aria-label={t(p.lang, "dismiss")} title={t(p.lang, "dismiss")} onClick={p.dismiss}>
        ×
      </button>
    </p>
  );
}
