// The game page off the happy path, in a real browser against a real `weiqi serve`: the
// connection always in view and a move kept through a server restart, the opponent's
// presence and the abandonment claim, requests and refusals in words, the scoring view,
// the variant's words, a phone's confirm step on 19x19, the end of a byo-yomi game, the
// lobby's own games and sticky errors, rematch and the rating change. Screenshots of the
// main screens go to web/screenshots/.
import { expect, test, type Browser, type BrowserContext, type Page } from "@playwright/test";
import { mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Server } from "./server.js";
import { DESKTOP, PHONE as BASE_PHONE, createGame, join, moves, newPage, point } from "./pages.js";
import { signIn } from "./people.js";
import { createGameClient, requestId, TimeControlSchema, type GameClient } from "../../src/client.js";
import { create } from "@bufbuild/protobuf";

let server: Server;
const SHOTS = fileURLToPath(new URL("../../screenshots/", import.meta.url));

test.beforeAll(async () => {
  server = await Server.start();
  mkdirSync(SHOTS, { recursive: true });
});
test.afterAll(() => server?.stop());

const PHONE = { ...BASE_PHONE, deviceScaleFactor: 1 };
const page = (browser: Browser, opts: object = DESKTOP, on: Server = server) => newPage(browser, on, opts);

/** A game made and joined through the generated client from Node (as another app would),
 * its seats handed to the pages (Black the host); returns the id and both seats' clients. */
async function apiGame(pages: { host: Page; guest: Page }, settings: { boardSize?: number } = {}) {
  const tokens: Record<string, string> = {};
  const api = (seat: string): GameClient => createGameClient(server.url, () => tokens[seat]);
  const made = await api("none").createGame({
    settings: { boardSize: settings.boardSize ?? 9, timeControl: create(TimeControlSchema, { kind: { case: "none", value: {} } }), colorChoice: 1 },
    requestId: requestId(),
  });
  tokens.host = made.seatToken;
  const joined = await api("none").joinGame({ gameId: made.gameId, requestId: requestId() });
  tokens.guest = joined.seatToken;
  for (const [p, seat] of [[pages.host, "host"], [pages.guest, "guest"]] as const) {
    await p.goto("/");
    await p.evaluate(([id, token, s]) => localStorage.setItem(`weiqi.seat.${id}`, JSON.stringify({ token, seat: s })), [made.gameId, tokens[seat]!, seat]);
    await p.goto(`/#/game/${made.gameId}`);
  }
  return { id: made.gameId, host: api("host"), guest: api("guest") };
}

/** The whole board, coordinates included, inside the window without scrolling. */
async function boardFits(p: Page) {
  await p.evaluate(() => scrollTo(0, 0));
  const box = (await p.locator("svg.board").boundingBox())!;
  const vp = p.viewportSize()!;
  expect(box.x).toBeGreaterThanOrEqual(0);
  expect(box.y).toBeGreaterThanOrEqual(0);
  expect(box.x + box.width).toBeLessThanOrEqual(vp.width);
  expect(box.y + box.height).toBeLessThanOrEqual(vp.height);
}

test("connection: always in view; a move whose answer is lost in a restart, and one made while the server is down, each land once", async ({ browser }) => {
  const host = await page(browser);
  const guest = await page(browser);
  const id = await createGame(host, { tc: "byoYomi", main: "10", periods: "3", period: "30" });
  await join(guest, id);
  await host.goto(`/#/game/${id}`);
  for (const p of [host, guest]) await expect(p.getByTestId("connection")).toHaveText("Connected");
  await expect(host.getByTestId("presence-W")).toHaveText("online");
  await point(host, 2, 2).click();
  await moves([host, guest], 1);
  await boardFits(host);
  await host.screenshot({ path: `${SHOTS}/game-desktop.png` });

  // White's move reaches the server, which restarts before its answer gets back: the page
  // sends it again with the same request id and gets the first answer, not a second move.
  let first = true;
  let restarted: Promise<void> | undefined;
  await guest.route("**/weiqi.v1.GameService/Play", async (route) => {
    if (!first) return route.continue();
    first = false;
    await route.fetch(); // the server plays it; the answer is dropped below
    restarted = server.restart();
    await restarted;
    await route.abort("failed");
  });
  await point(guest, 6, 6).click();
  await moves([host, guest], 2);
  await expect(guest.getByTestId("message")).toHaveCount(0);
  // (The pages may see the move before the restart is over: the server is read after it.)
  await expect.poll(() => restarted !== undefined).toBe(true);
  await restarted;
  expect((await server.client().getGame({ gameId: id })).state!.moveNumber).toBe(2);

  // The server is down when Black plays: the move waits, shown as pending, the connection
  // shown lost in the clocks' area and in a banner in view; it goes when the server is back.
  server.crash();
  await expect(host.getByTestId("connection")).toHaveText("Offline", { timeout: 10_000 });
  await expect(host.getByTestId("connection")).toBeInViewport();
  await expect(host.getByTestId("offline-banner")).toBeInViewport();
  await point(host, 4, 4).click();
  await expect(host.getByTestId("pending")).toContainText("Move E5: not sent yet");
  await expect(host.getByTestId("pending-stone")).toBeVisible();
  await expect(host.getByTestId("message")).toHaveCount(0);
  await host.screenshot({ path: `${SHOTS}/game-offline-pending.png` });
  await server.restart();
  await moves([host, guest], 3);
  await expect(host.getByTestId("pending")).toHaveCount(0);
  await expect(host.getByTestId("offline-banner")).toHaveCount(0, { timeout: 10_000 });
  await expect(host.getByTestId("connection")).toHaveText("Connected");
  await expect(host.getByTestId("message")).toHaveCount(0);
  const s = (await server.client().getGame({ gameId: id })).state!;
  expect(s.moveNumber).toBe(3);
  expect(s.board[4]![4]).toBe("x");
});

test("presence: the opponent closes their tab; absence shown, a countdown, then the claim ends the game", async ({ browser }) => {
  test.setTimeout(120_000);
  // Absent 10 s (the grace) after the opponent was last seen; claimable 10 s later.
  const own = await Server.start({ WEIQI__ABANDON_AFTER_MS: "10000" });
  try {
    const host = await page(browser, DESKTOP, own);
    const guestCtx: BrowserContext = await browser.newContext({ ...DESKTOP, baseURL: own.url });
    const guest = await guestCtx.newPage();
    const watcher = await page(browser, DESKTOP, own);
    const id = await createGame(host);
    await join(guest, id);
    await host.goto(`/#/game/${id}`);
    await watcher.goto(`/#/game/${id}`);
    await point(host, 2, 2).click();
    await moves([host, guest, watcher], 1);
    for (const p of [host, watcher]) await expect(p.getByTestId("presence-W")).toHaveText("online");

    await guestCtx.close();
    // Absent once the grace is over (a state-only item on the stream), for the spectator too.
    for (const p of [host, watcher]) await expect(p.getByTestId("presence-W")).toContainText(/left \d+:\d\d ago/, { timeout: 20_000 });
    await expect(host.getByTestId("presence-B")).toHaveText("online");
    await expect(host.getByTestId("claim")).toContainText("You may claim the game in");
    await expect(watcher.getByTestId("claim")).toHaveCount(0);
    // Then the two choices.
    await expect(host.getByRole("button", { name: "Claim the win" })).toBeVisible({ timeout: 30_000 });
    await expect(host.getByRole("button", { name: "Call it a draw" })).toBeVisible();
    await host.screenshot({ path: `${SHOTS}/claim.png` });
    await host.getByRole("button", { name: "Claim the win" }).click();
    for (const p of [host, watcher]) {
      await expect(p.getByTestId("result")).toContainText("B+F");
      await expect(p.getByTestId("abandoned")).toHaveText("White left the game; Black claimed the win.");
    }
    await expect(host.getByTestId("claim")).toHaveCount(0);
    await watcher.screenshot({ path: `${SHOTS}/claim-result-spectator.png` });
  } finally {
    own.stop();
  }
});

test("requests and refusals: out of turn, occupied, suicide in words; undo and draw pending and answered on both sides; the declared end", async ({ browser }) => {
  const host = await page(browser);
  const guest = await page(browser);
  const id = await createGame(host);
  await join(guest, id);
  await host.goto(`/#/game/${id}`);
  await point(host, 4, 4).click();
  await moves([host, guest], 1);
  // Out of turn, and on an occupied point: said, not ignored.
  await point(host, 5, 5).click();
  await expect(host.getByTestId("message")).toHaveText(/It is your opponent's turn\./);
  await point(guest, 4, 4).click();
  await expect(guest.getByTestId("message")).toHaveText(/That point is occupied\./);
  await guest.getByTestId("message").getByRole("button", { name: "Dismiss" }).click();
  await expect(guest.getByTestId("message")).toHaveCount(0);

  // White takes the corner's neighbours; Black's corner stone would have no liberty.
  await point(guest, 1, 0).click();
  await moves([host, guest], 2);
  await point(host, 5, 5).click();
  await moves([host, guest], 3);
  await point(guest, 0, 1).click();
  await moves([host, guest], 4);
  await point(host, 0, 0).click();
  const msg = host.getByTestId("message");
  await expect(msg).toContainText("without liberties");
  await expect(msg).not.toContainText("(R");
  await expect(msg).toHaveAttribute("title", /suicide/);
  await host.screenshot({ path: `${SHOTS}/refusal.png` });

  // Black plays, then asks to take it back: pending for Black, asked of White; declined.
  await point(host, 6, 2).click();
  await moves([host, guest], 5);
  await expect(host.getByTestId("message")).toHaveCount(0);
  await host.getByRole("button", { name: "Request undo" }).click();
  await expect(host.getByTestId("undo-waiting")).toHaveText("Undo requested — waiting for your opponent.");
  await guest.getByRole("alertdialog").getByRole("button", { name: "Decline" }).click();
  for (const p of [host, guest]) await expect(p.getByTestId("notice")).toHaveText(/White declined the undo request\./);
  await expect(host.getByTestId("undo-waiting")).toHaveCount(0);
  // Asked again and accepted: both told, the move gone from the list.
  await host.getByRole("button", { name: "Request undo" }).click();
  await guest.getByRole("alertdialog").getByRole("button", { name: "Accept" }).click();
  for (const p of [host, guest]) await expect(p.getByTestId("notice")).toHaveText(/Undo accepted: Black's last move was taken back\./);
  await moves([host, guest], 4);

  // A draw offer, pending then declined.
  await host.getByRole("button", { name: "Offer a draw" }).click();
  await expect(host.getByTestId("draw-waiting")).toBeVisible();
  await guest.getByRole("alertdialog").getByRole("button", { name: "Decline" }).click();
  for (const p of [host, guest]) await expect(p.getByTestId("notice")).toHaveText(/White declined the draw offer\./);
  await expect(host.getByTestId("draw-waiting")).toHaveCount(0);

  // Black declares the end: listed and said as such, not as a plain pass.
  await host.getByRole("button", { name: "Declare the end" }).click();
  await moves([host, guest], 5);
  for (const p of [host, guest]) {
    await expect(p.getByTestId("moves").locator("li").last()).toHaveText("B declared the end");
    await expect(p.getByTestId("status")).toContainText("Black declared the end of play");
  }
});

test("the scoring view: the count shaded on the board and updated at every toggle, and both accept explicitly", async ({ browser }) => {
  const host = await page(browser);
  const guest = await page(browser);
  const watcher = await page(browser);
  const g = await apiGame({ host, guest });
  // Two walls: Black's on the D column, White's on the F column; a stone of each inside
  // the other's area.
  const m = (gameId: string) => ({ gameId, requestId: requestId() });
  for (let y = 0; y < 9; y++) {
    await g.host.play({ mutation: m(g.id), point: { x: 3, y } });
    await g.guest.play({ mutation: m(g.id), point: { x: 5, y } });
  }
  await g.host.play({ mutation: m(g.id), point: { x: 7, y: 4 } });
  await g.guest.play({ mutation: m(g.id), point: { x: 1, y: 4 } });
  await watcher.goto(`/#/game/${g.id}`);
  await moves([host, guest, watcher], 20);
  await host.getByRole("button", { name: "Pass" }).click();
  await moves([host, guest, watcher], 21);
  await guest.getByRole("button", { name: "Pass" }).click();
  for (const p of [host, guest, watcher]) {
    await expect(p.getByTestId("status")).toContainText("Scoring");
    await expect(p.getByTestId("score-line")).toBeVisible();
  }
  // The server's first proposal has both intruders dead: 27 + 9 each, W+7.5 with komi.
  const api = server.client();
  const first = (await api.getGame({ gameId: g.id })).state!.scoring!;
  for (const p of [host, guest, watcher]) {
    await expect(p.getByTestId("score-line")).toHaveText(`Black ${first.blackPoints} · White ${first.whitePoints} (area, before komi)`);
    await expect(p.getByTestId("score-text")).toHaveText(`With komi: ${first.text}`);
    await expect(point(p, 0, 0)).toHaveAttribute("data-owner", "B");
    await expect(point(p, 8, 8)).toHaveAttribute("data-owner", "W");
    await expect(point(p, 4, 4)).toHaveAttribute("data-owner", "-");
  }
  // Black says its stone in White's area lives: the count changes for everyone at once.
  const label = (await point(host, 7, 4).getAttribute("aria-label"))!;
  await point(host, 7, 4).click();
  const toggled = label.endsWith(", dead") ? "H5, black stone" : "H5, black stone, dead";
  for (const p of [host, guest, watcher]) await expect(point(p, 7, 4)).toHaveAttribute("aria-label", toggled);
  const second = (await api.getGame({ gameId: g.id })).state!.scoring!;
  expect(second.text).not.toBe(first.text);
  for (const p of [host, guest, watcher]) await expect(p.getByTestId("score-text")).toHaveText(`With komi: ${second.text}`);
  // Put back; nobody has accepted yet (a proposal is not its proposer's acceptance).
  await point(host, 7, 4).click();
  for (const p of [host, guest, watcher]) await expect(p.getByTestId("score-text")).toHaveText(`With komi: ${first.text}`);
  for (const p of [host, guest, watcher]) {
    await expect(p.getByTestId("accepted-B")).toHaveText("Black: not yet");
    await expect(p.getByTestId("accepted-W")).toHaveText("White: not yet");
  }
  await host.screenshot({ path: `${SHOTS}/scoring.png` });
  await host.getByTestId("score").getByRole("button", { name: "Accept" }).click();
  for (const p of [host, guest, watcher]) await expect(p.getByTestId("accepted-B")).toHaveText("Black: ✓ accepted");
  await expect(host.getByTestId("score").getByRole("button", { name: "Accepted" })).toBeDisabled();
  await guest.getByTestId("score").getByRole("button", { name: "Accept" }).click();
  for (const p of [host, guest, watcher]) await expect(p.getByTestId("result")).toContainText(`Result: ${first.text}`);
});

test("the variant: seat stones' turn, both bids and the agreed komi in words for players and spectators; the lobby row says so", async ({ browser }) => {
  const host = await page(browser);
  const guest = await page(browser);
  const watcher = await page(browser);
  const id = await createGame(host, { freeSeats: true });
  await guest.goto("/");
  const row = guest.locator(`li[data-game="${id}"]`);
  await expect(row).toContainText("Free seat stones, komi by sealed bids");
  await expect(row).not.toContainText("Your colour");
  await expect(row).not.toContainText("Komi 7.5");
  await join(guest, id);
  await host.goto(`/#/game/${id}`);
  await watcher.goto(`/#/game/${id}`);
  await expect(host.getByTestId("seat-stone-next")).toHaveText("Your turn: place a Black seat stone.");
  await expect(guest.getByTestId("seat-stone-next")).toHaveText("Next seat stone: Black, placed by the host.");
  await expect(watcher.getByTestId("seat-stone-next")).toHaveText("Next seat stone: Black, placed by the host.");
  // Out of turn: said.
  await point(guest, 4, 4).click();
  await expect(guest.getByTestId("message")).toHaveText(/It is your opponent's turn/);
  const stones: [Page, number, number][] = [[host, 2, 2], [guest, 6, 6], [host, 6, 2], [guest, 2, 6]];
  for (const [i, [p, x, y]] of stones.entries()) {
    if (i === 1) await expect(guest.getByTestId("seat-stone-next")).toHaveText("Your turn: place a White seat stone.");
    await point(p, x, y).click();
    await expect(point(watcher, x, y)).not.toHaveAttribute("aria-label", /empty/);
  }
  await expect(watcher.getByTestId("bids")).toContainText("Host's bid: not sealed yet");
  await host.locator('input[name="bid"]').fill("6.5");
  await host.getByRole("button", { name: "Seal bid" }).click();
  await expect(watcher.getByTestId("bids")).toContainText("Host's bid: sealed");
  await guest.locator('input[name="bid"]').fill("4.5");
  await guest.getByRole("button", { name: "Seal bid" }).click();
  for (const p of [host, guest, watcher]) {
    await expect(p.getByTestId("bids")).toContainText("Host's bid: 6.5");
    await expect(p.getByTestId("bids")).toContainText("Guest's bid: 4.5");
    await expect(p.getByTestId("komi-decided")).toContainText("Host bid 6.5, guest bid 4.5: the host plays Black and gives 6.5 komi.");
  }
  await expect(host.getByTestId("status")).toContainText("Your turn");
  await watcher.screenshot({ path: `${SHOTS}/variant.png` });
});

test("a phone, 390x844: the whole 19x19 board in view, and a tap proposes the move, a second tap plays it", async ({ browser }) => {
  const host = await page(browser);
  const phone = await page(browser, PHONE);
  const id = await createGame(host, { size: "19" });
  await join(phone, id);
  await host.goto(`/#/game/${id}`);
  await boardFits(host);
  await boardFits(phone);
  // On by default on a touch screen, and a setting.
  await phone.getByRole("button", { name: "Settings" }).tap();
  await expect(phone.locator('input[name="confirmMoves"]')).toBeChecked();
  await phone.getByRole("button", { name: "Settings" }).tap();
  await point(host, 3, 3).click();
  await moves([host, phone], 1);
  await boardFits(phone);
  // First tap: a candidate, nothing sent. A tap elsewhere moves it.
  await point(phone, 15, 3).tap();
  await expect(phone.getByTestId("candidate")).toBeVisible();
  await expect(phone.getByTestId("confirm-move").getByRole("button", { name: "Play Q16" })).toBeVisible();
  await point(phone, 15, 4).tap();
  await expect(phone.getByTestId("confirm-move").getByRole("button", { name: "Play Q15" })).toBeVisible();
  await moves([host, phone], 1);
  await phone.screenshot({ path: `${SHOTS}/game-phone.png` });
  // A second tap on the candidate plays it.
  await point(phone, 15, 4).tap();
  await moves([host, phone], 2);
  await expect(point(host, 15, 4)).toHaveAttribute("aria-label", "Q15, white stone");
  await expect(phone.getByTestId("candidate")).toHaveCount(0);
  // Or the Play button.
  await point(host, 15, 15).click();
  await moves([host, phone], 3);
  await point(phone, 3, 15).tap();
  await phone.getByTestId("confirm-move").getByRole("button", { name: "Play D4" }).tap();
  await moves([host, phone], 4);
  // The desktop (no touch) plays at once.
  await point(host, 9, 9).click();
  await moves([host, phone], 5);
});

test("byo-yomi to the flag: the last call leaves the screen and the flagged clock reads 0:00", async ({ browser }) => {
  const host = await page(browser);
  const guest = await page(browser);
  const id = await createGame(host, { tc: "byoYomi", main: "0", periods: "1", period: "12" });
  await join(guest, id);
  await host.goto(`/#/game/${id}`);
  await expect(guest.getByTestId("call")).toBeVisible({ timeout: 12_000 });
  for (const p of [host, guest]) await expect(p.getByTestId("result")).toContainText("W+T", { timeout: 20_000 });
  for (const p of [host, guest]) {
    await expect(p.getByTestId("call")).toHaveCount(0);
    await expect(p.getByTestId("clock-B").locator(".time")).toHaveText("0:00");
    await expect(p.getByTestId("periods-B")).toHaveCount(0);
    await expect(p.getByTestId("clock-B")).toContainText("lost on time");
  }
});

test("the lobby: the host's own open game offers Open and Cancel; an error stays until dismissed", async ({ browser }) => {
  const host = await page(browser);
  const other = await page(browser);
  const id = await createGame(host);
  await host.goto("/");
  const mine = host.locator(`li[data-game="${id}"]`);
  await expect(mine.getByRole("link", { name: "Open" })).toBeVisible();
  await expect(mine.getByRole("button", { name: /Join/ })).toHaveCount(0);
  // Someone else's view of it: Join.
  await other.goto("/");
  await expect(other.locator(`li[data-game="${id}"]`).getByRole("button", { name: /Join/ })).toBeVisible();
  // A join that cannot reach the server: said, and kept through the refreshes.
  await other.route("**/weiqi.v1.GameService/JoinGame", (r) => r.abort("failed"));
  await other.locator(`li[data-game="${id}"]`).getByRole("button", { name: /Join/ }).click();
  await expect(other.getByTestId("lobby-error")).toContainText("The server cannot be reached.");
  await other.waitForTimeout(4_500);
  await expect(other.getByTestId("lobby-error")).toContainText("The server cannot be reached.");
  await other.getByTestId("lobby-error").getByRole("button", { name: "Dismiss" }).click();
  await expect(other.getByTestId("lobby-error")).toHaveCount(0);
  // The host withdraws it: gone from both lists.
  await mine.getByRole("button", { name: "Cancel" }).click();
  await expect(host.locator(`li[data-game="${id}"]`)).toHaveCount(0);
  await expect(other.locator(`li[data-game="${id}"]`)).toHaveCount(0, { timeout: 5_000 });
  const s = (await server.client().getGame({ gameId: id })).state!;
  expect(s.phase).toBe(8); // finished: cancelled
});

test("after a rated game: the rating change, and a rematch challenge to the signed-in opponent", async ({ browser }) => {
  const hana = await page(browser);
  const ito = await page(browser);
  await signIn(hana, "Rin");
  await signIn(ito, "Sai");
  const gid = await createGame(hana, { rated: true });
  await join(ito, gid);
  await hana.goto(`/#/game/${gid}`);
  // (A game of fewer than two moves is not rated.)
  await point(hana, 2, 2).click();
  await moves([hana, ito], 1);
  await point(ito, 6, 6).click();
  await moves([hana, ito], 2);
  await ito.getByRole("button", { name: "Resign" }).click();
  await ito.getByRole("button", { name: "Yes" }).click();
  for (const p of [hana, ito]) await expect(p.getByTestId("result")).toContainText("B+R");
  await expect(hana.getByTestId("rating-change")).toContainText(/Rating: \d+ → \d+ \(\+\d+\)/, { timeout: 15_000 });
  await expect(ito.getByTestId("rating-change")).toContainText(/Rating: \d+ → \d+ \(-\d+\)/, { timeout: 15_000 });
  await hana.getByRole("button", { name: "Rematch" }).click();
  await expect(hana.getByTestId("message")).toContainText("Challenge sent to Sai.");
  await hana.screenshot({ path: `${SHOTS}/result-rematch.png` });
});
