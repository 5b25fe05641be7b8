// The app in a real browser (Debian's chromium) against a real `weiqi serve`: two players
// and a spectator in separate browser contexts, a phone-sized touch screen, clocks, the
// referee's refusals, and a server that crashes mid-game.
import { expect, test, type Browser, type Page } from "@playwright/test";
import { mkdirSync } from "node:fs";
import { Server } from "./server.js";
import { DESKTOP, PHONE as BIG_PHONE, createGame, join, moves, newPage, point } from "./pages.js";
import { signIn } from "./people.js";
import { createGameClient, createPlayerClient, requestId, TimeControlSchema } from "../../src/client.js";
import { create } from "@bufbuild/protobuf";

let server: Server;
const SHOTS = "../target/web-screenshots";

test.beforeAll(async () => {
  server = await Server.start();
  mkdirSync(SHOTS, { recursive: true });
});
test.afterAll(() => server?.stop());

// A smaller phone than the other specs', as the screenshots' names say.
const PHONE = { ...BIG_PHONE, viewport: { width: 360, height: 640 } };
const page = (browser: Browser, opts: object = DESKTOP) => newPage(browser, server, opts);

test("two players play 9x9 to the end, score it, and a spectator follows live and after a reload", async ({ browser }) => {
  const host = await page(browser);
  const guest = await page(browser, PHONE);
  await guest.goto("/");
  await guest.screenshot({ path: `${SHOTS}/lobby-360x640.png` });
  const id = await createGame(host);
  await expect(host.getByTestId("status")).toContainText("Waiting for an opponent");
  await host.goto("/");
  await expect(host.locator(`li[data-game="${id}"]`)).toBeVisible();
  await host.screenshot({ path: `${SHOTS}/lobby-1280x800.png` });
  await join(guest, id);
  await host.goto(`/#/game/${id}`);
  const watcher = await page(browser);
  await watcher.goto(`/#/game/${id}`);
  await expect(watcher.getByTestId("status")).toContainText("Watching");

  // Black (the host) by keyboard: the cursor starts at the centre, one step left.
  await expect(host.getByTestId("status")).toContainText("Your turn");
  await host.getByRole("application").focus();
  await host.keyboard.press("ArrowLeft");
  await host.keyboard.press("Enter");
  await moves([host, guest, watcher], 1);
  await expect(point(watcher, 3, 4)).toHaveAttribute("aria-label", "D5, black stone");
  // White (the guest) by touch on a phone.
  await point(guest, 6, 6).tap();
  await moves([host, guest, watcher], 2);
  await point(host, 2, 2).click();
  await moves([host, guest, watcher], 3);
  await host.screenshot({ path: `${SHOTS}/game-1280x800.png` });
  await guest.screenshot({ path: `${SHOTS}/game-360x640.png` });
  await guest.getByRole("button", { name: "Pass" }).tap();
  await moves([host, guest, watcher], 4);
  await host.getByRole("button", { name: "Pass" }).click();
  await moves([host, guest, watcher], 5);
  await expect(host.getByTestId("status")).toContainText("Scoring");

  // The server's proposal is on the board; the host toggles the white stone.
  const api = server.client();
  const before = (await api.getGame({ gameId: id })).state!.deadStones.length;
  const label = (await point(host, 6, 6).getAttribute("aria-label"))!;
  await point(host, 6, 6).click();
  const toggled = label.endsWith(", dead") ? "G3, white stone" : "G3, white stone, dead";
  await expect(point(host, 6, 6)).toHaveAttribute("aria-label", toggled);
  await expect(point(guest, 6, 6)).toHaveAttribute("aria-label", toggled);
  await expect(point(watcher, 6, 6)).toHaveAttribute("aria-label", toggled);
  expect((await api.getGame({ gameId: id })).state!.deadStones.length).not.toBe(before);
  await host.screenshot({ path: `${SHOTS}/scoring-1280x800.png` });
  await guest.screenshot({ path: `${SHOTS}/scoring-360x640.png` });

  await host.getByRole("button", { name: "Accept" }).click();
  await guest.getByRole("button", { name: "Accept" }).tap();
  const result = (await api.getGame({ gameId: id })).state!.result!;
  await expect.poll(async () => (await api.getGame({ gameId: id })).state!.result?.text).toBeTruthy();
  const final = (await api.getGame({ gameId: id })).state!.result!;
  void result;
  for (const p of [host, guest, watcher]) {
    await expect(p.getByTestId("result")).toContainText(`Result: ${final.text}`);
    await expect(p.getByTestId("result")).toContainText(`Black ${final.blackPoints} · White ${final.whitePoints}`);
  }
  await host.screenshot({ path: `${SHOTS}/result-1280x800.png` });

  // A reload resumes: the same moves, the same result, the seat kept.
  await watcher.reload();
  await moves([watcher], 5);
  await expect(watcher.getByTestId("result")).toContainText(final.text);
  await host.reload();
  await expect(host.getByTestId("player-B")).toContainText("(you)");
  await moves([host], 5);
});

test("byo-yomi: the periods count down and the server's flag shows the time loss", async ({ browser }) => {
  const host = await page(browser);
  const guest = await page(browser);
  const id = await createGame(host, { tc: "byoYomi", main: "0", periods: "2", period: "3" });
  await join(guest, id);
  await host.goto(`/#/game/${id}`);
  // Black (the host) never moves: two periods of 3 s, then the flag (the lag allowance on top).
  await expect(guest.getByTestId("periods-B")).toHaveText("× 2");
  await expect(guest.getByTestId("periods-B")).toHaveText("× 1", { timeout: 6_000 });
  for (const p of [host, guest]) {
    await expect(p.getByTestId("clock-B")).toContainText("lost on time", { timeout: 10_000 });
    await expect(p.getByTestId("result")).toContainText("W+T");
  }
});

test("the referee's byo-yomi calls (C2) reach the page, spoken with sound on", async ({ browser }) => {
  const host = await page(browser);
  const guest = await page(browser);
  await guest.goto("/");
  await guest.evaluate(() => localStorage.setItem("weiqi.prefs", JSON.stringify({ sound: true, lang: "en" })));
  // One last period of 20 s: the server calls at 10 s left, then counts 1, 2. (The first
  // call 10 s in leaves a page loaded under load time to be watching: with a 12 s period
  // it came 2 s in, and a page that subscribed after 3 s would get it with the count 1 in one
  // replay and show only the latter.)
  const id = await createGame(host, { tc: "byoYomi", main: "0", periods: "1", period: "20" });
  await join(guest, id);
  // Each call shows for about a second: looked at every 50 ms (a plain `toHaveText` backs
  // off to one look a second and can miss one).
  const call = (text: string, timeout: number) =>
    expect
      .poll(async () => (await guest.getByTestId("call").allTextContents()).join("").trim(), {
        timeout,
        intervals: [50],
      })
      .toBe(text);
  await call("Black: 10 seconds", 15_000);
  await call("Black: 1", 3_000);
  await call("Black: 2", 3_000);
});

test("a ko recapture shows the server's reason and changes nothing", async ({ browser }) => {
  const host = await page(browser);
  const guest = await page(browser);
  const id = await createGame(host);
  await join(guest, id);
  await host.goto(`/#/game/${id}`);
  // Black surrounds (1,1) on three sides, White (2,1); Black fills (2,1), White takes it.
  const seq: [Page, number, number][] = [
    [host, 1, 0], [guest, 2, 0], [host, 0, 1], [guest, 3, 1], [host, 1, 2], [guest, 2, 2], [host, 2, 1], [guest, 1, 1],
  ];
  for (const [i, [p, x, y]] of seq.entries()) {
    await point(p, x, y).click();
    await moves([host, guest], i + 1);
  }
  await expect(point(host, 2, 1)).toHaveAttribute("aria-label", "C8, empty");
  // Black retakes at once: the ko rule refuses it.
  await point(host, 2, 1).click();
  await expect(host.getByTestId("message")).toContainText(/ko/i);
  await expect(point(host, 2, 1)).toHaveAttribute("aria-label", "C8, empty");
  await moves([host, guest], 8);
  await expect(host.getByTestId("status")).toContainText("Your turn");
});

test("a game that does not exist, and a seat whose token is no longer valid", async ({ browser }) => {
  const p = await page(browser);
  await p.goto("/#/game/no-such-game");
  await expect(p.getByRole("alert")).toContainText("There is no game with this id.");

  // A game made through the generated client from Node, as another app would.
  const api = server.client();
  const made = await api.createGame({
    settings: { boardSize: 9, timeControl: create(TimeControlSchema, { kind: { case: "none", value: {} } }), colorChoice: 1 },
    requestId: requestId(),
  });
  await api.joinGame({ gameId: made.gameId, requestId: requestId() });
  await p.goto("/");
  await p.evaluate(
    ([id]) => localStorage.setItem(`weiqi.seat.${id}`, JSON.stringify({ token: "expired-or-forged", seat: "host" })),
    [made.gameId],
  );
  await p.goto(`/#/game/${made.gameId}`);
  await expect(p.getByTestId("status")).toContainText("Your turn");
  await point(p, 4, 4).click();
  await expect(p.getByTestId("message")).toContainText("no longer valid");
  await expect(p.getByTestId("status")).toContainText("Watching");
  await expect(point(p, 4, 4)).toHaveAttribute("aria-label", "E5, empty");
});

test("a server that crashes mid-game: both pages say so, reconnect, and play on", async ({ browser }) => {
  const host = await page(browser);
  const guest = await page(browser);
  const id = await createGame(host);
  await join(guest, id);
  await host.goto(`/#/game/${id}`);
  await point(host, 4, 4).click();
  await moves([host, guest], 1);
  server.crash();
  await expect(guest.getByText("Connection lost. Reconnecting")).toBeVisible({ timeout: 10_000 });
  await server.restart();
  await expect(guest.getByText("Connection lost. Reconnecting")).toBeHidden({ timeout: 10_000 });
  await point(guest, 2, 2).click();
  await moves([host, guest], 2);
  await expect(host.getByTestId("status")).toContainText("Your turn");
});

test("settings: flat high-contrast skin, Chinese text, no coordinates; kept across a reload", async ({ browser }) => {
  const p = await page(browser);
  await p.goto("/");
  await p.getByRole("button", { name: "Settings" }).click();
  await p.locator('select[name="skin"]').selectOption("flat");
  await p.locator('input[name="coordinates"]').uncheck();
  await p.locator('select[name="lang"]').selectOption("zh");
  await expect(p.getByRole("heading", { name: "创建对局" })).toBeVisible();
  await p.reload();
  await expect(p.locator("body")).toHaveAttribute("data-skin", "flat");
  await expect(p.getByRole("heading", { name: "创建对局" })).toBeVisible();
});

test("the lobby names a signed-in host and marks rated games", async ({ browser }) => {
  const guest = await createPlayerClient(server.url).registerGuest({ name: "Alice" });
  const api = createGameClient(server.url, undefined, () => guest.token);
  const made = await api.createGame({ settings: { boardSize: 9, rated: true, colorChoice: 1 }, requestId: requestId() });
  expect(made.state?.hostPlayer?.name).toBe("Alice");
  const p = await page(browser);
  await p.goto("/");
  const row = p.locator(`li[data-game="${made.gameId}"]`);
  await expect(row).toContainText("Alice");
  await expect(row).toContainText("Rated");
});

test("two guests sign in, play a rated game, and the leaderboard shows their new ratings", async ({ browser }) => {
  const hana = await page(browser);
  const ito = await page(browser, PHONE);
  await signIn(hana, "Hana");
  await signIn(ito, "Ito");
  const id = await createGame(hana, { rated: true });
  await join(ito, id);
  await hana.goto(`/#/game/${id}`);
  await expect(hana.getByTestId("player-B")).toContainText("Hana");
  await expect(ito.getByTestId("player-W")).toContainText("Ito");
  await point(hana, 2, 2).click();
  await moves([hana, ito], 1);
  await point(ito, 6, 6).tap();
  await moves([hana, ito], 2);
  await hana.getByRole("button", { name: "Resign" }).click();
  await hana.getByRole("button", { name: "Yes" }).click();
  await expect(ito.getByTestId("result")).toContainText("W+R");
  await ito.goto("/");
  const board = ito.getByTestId("leaderboard").locator("li");
  await expect(board.first()).toContainText("Ito");
  await expect(board.nth(1)).toContainText("Hana");
  await expect(board.first()).toContainText(/1[5-9]\d\d \d+k/);
});

test("quick play: two guests press the button and land in the same rated game", async ({ browser }) => {
  const kai = await page(browser);
  const lin = await page(browser, PHONE);
  await signIn(kai, "Kai");
  await signIn(lin, "Lin");
  // One seeks and cancels: nothing is left behind.
  await kai.getByRole("button", { name: /Play rated 9×9/ }).click();
  await expect(kai.getByTestId("seeking")).toBeVisible();
  await kai.getByTestId("seeking").getByRole("button", { name: "Cancel" }).click();
  await expect(kai.getByTestId("seeking")).toHaveCount(0);
  // Both seek: paired into one game, each in their own seat.
  await kai.getByRole("button", { name: /Play rated 9×9/ }).click();
  await lin.getByRole("button", { name: /Play rated 9×9/ }).click();
  await kai.waitForURL(/#\/game\/.+/);
  await lin.waitForURL(/#\/game\/.+/);
  expect(kai.url().split("#/game/")[1]).toBe(lin.url().split("#/game/")[1]);
  for (const p of [kai, lin]) {
    await expect(p.getByTestId("player-B")).toContainText(/Kai|Lin/);
    await expect(p.getByTestId("player-W")).toContainText(/Kai|Lin/);
  }
  // Whoever is Black plays; both boards show it.
  const black = (await kai.getByTestId("player-B").textContent())?.includes("Kai") ? kai : lin;
  await point(black, 4, 4).click();
  await moves([kai, lin], 1);
});

test("the free-seats variant: four seat stones anywhere, sealed bids, the higher bid plays Black with its komi", async ({ browser }) => {
  const host = await page(browser);
  const guest = await page(browser);
  await host.goto("/");
  await host.locator('input[name="freeSeats"]').check();
  const id = await createGame(host, { keepForm: true });
  await join(guest, id);
  await host.goto(`/#/game/${id}`);
  await expect(host.getByTestId("status")).toContainText("Seat stones");
  // Black (host), White (guest), Black, White: anywhere, the first line included.
  const stones: [Page, number, number][] = [[host, 0, 0], [guest, 4, 4], [host, 6, 2], [guest, 2, 6]];
  for (const [p, x, y] of stones) {
    await expect(p.getByTestId("status")).toContainText(/Seat stones|Bids/);
    await point(p, x, y).click();
    await expect(point(host, x, y)).not.toHaveAttribute("aria-label", /empty/);
  }
  await expect(host.getByTestId("status")).toContainText("Bids");
  await host.locator('input[name="bid"]').fill("7.5");
  await host.getByRole("button", { name: "Seal bid" }).click();
  await guest.locator('input[name="bid"]').fill("5.5");
  await guest.getByRole("button", { name: "Seal bid" }).click();
  // Both reveal by themselves once both are sealed; the host bid more: Black, komi 7.5.
  await expect(host.getByTestId("status")).toContainText("Your turn");
  await expect(guest.getByTestId("status")).toContainText("Opponent");
  const state = await createGameClient(server.url).getGame({ gameId: id });
  expect(state.state?.settings?.komi).toBe(7.5);
  expect([state.state?.hostBid, state.state?.guestBid]).toEqual([7.5, 5.5]);
  await point(host, 4, 2).click();
  await moves([host, guest], 1);
});
