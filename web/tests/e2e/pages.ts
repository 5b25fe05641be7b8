// Helpers for the browser tests' pages: a page in its own browser context, and the game
// page driven as a player would (a game created from the lobby's form, joined from its
// row, points on the board, the move list).
import { expect, type Browser, type Page } from "@playwright/test";
import type { Server } from "./server.js";

export const DESKTOP = { viewport: { width: 1280, height: 800 } };
export const PHONE = { viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true };
/** web/screenshots/ (the tests run in web/). */
export const SHOTS = "screenshots";

export async function newPage(browser: Browser, server: Server, opts: object = DESKTOP): Promise<Page> {
  const ctx = await browser.newContext({ ...opts, baseURL: server.url });
  return ctx.newPage();
}

/** The lobby form's choices; unset ones keep the form's own, but a 9x9 board, Black for
 * the host and no clock. */
export interface GameForm {
  size?: string;
  tc?: string;
  main?: string;
  periods?: string;
  period?: string;
  /** The colour's label. */
  colour?: string;
  freeSeats?: boolean;
  rated?: boolean;
  /** The page is already at the lobby with other choices made in the form. */
  keepForm?: boolean;
}

/** Creates a game from the lobby's form; returns its id. */
export async function createGame(p: Page, form: GameForm = {}): Promise<string> {
  if (!form.keepForm) await p.goto("/");
  await p.locator('select[name="size"]').selectOption(form.size ?? "9");
  await p.locator('select[name="colour"]').selectOption({ label: form.colour ?? "Black" });
  await p.locator('select[name="tc"]').selectOption(form.tc ?? "none");
  if (form.main !== undefined) await p.locator('input[name="main"]').fill(form.main);
  if (form.periods !== undefined) await p.locator('input[name="periods"]').fill(form.periods);
  if (form.period !== undefined) await p.locator('input[name="period"]').fill(form.period);
  if (form.freeSeats) await p.locator('input[name="freeSeats"]').check();
  if (form.rated) await p.locator('input[name="rated"]').check();
  await p.getByRole("button", { name: "Create" }).click();
  await p.waitForURL(/#\/game\/.+/);
  return decodeURIComponent(p.url().split("#/game/")[1]!);
}

/** Joins the game from its row in the lobby. */
export async function join(p: Page, id: string): Promise<void> {
  await p.goto("/");
  await p.locator(`li[data-game="${id}"]`).getByRole("button", { name: /Join/ }).click();
  await p.waitForURL(new RegExp(`#/game/${id}$`));
}

/** The board's point at column `x`, row `y` from the top. */
export const point = (p: Page, x: number, y: number) => p.locator(`rect[data-x="${x}"][data-y="${y}"]`);

/** Waits until every page lists `n` moves. */
export async function moves(pages: Page[], n: number): Promise<void> {
  for (const p of pages) await expect(p.getByTestId("moves").locator("li")).toHaveCount(n);
}
