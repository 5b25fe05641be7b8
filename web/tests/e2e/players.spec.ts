// Players in a real browser against a real `weiqi serve`: unique guest names, the
// signed-in player's rating in the header, a player's profile (ratings, the rating chart,
// their games a page at a time), and challenges between two browsers (accepted: both in
// the game; declined: the challenger told why).
import { expect, test } from "@playwright/test";
import { mkdirSync } from "node:fs";
import { Server } from "./server.js";
import { DESKTOP, PHONE, SHOTS, newPage } from "./pages.js";
import { asGuest, guest, ratedGame, signIn } from "./people.js";
import { createGameClient } from "../../src/client.js";

let server: Server;

test.beforeAll(async () => {
  server = await Server.start();
  mkdirSync(SHOTS, { recursive: true });
});
test.afterAll(() => server?.stop());

test("two guests choose the same name: the second is told in words, edits it, and gets in", async ({ browser }) => {
  const first = await newPage(browser, server);
  await signIn(first, "Mei");
  const second = await newPage(browser, server);
  await second.goto("/");
  const name = second.locator('input[name="guest-name"]');
  // The same name in other case and with spaces around it is still taken.
  await name.fill("  mei ");
  await second.locator('form.sign-in button[type="submit"]').click();
  await expect(second.locator("form.sign-in").getByRole("alert")).toHaveText("That name is taken — choose another.");
  await expect(name).toHaveValue("  mei ");
  await expect(second.getByTestId("me")).toHaveCount(0);
  await name.fill("Mei Lan");
  await second.locator('form.sign-in button[type="submit"]').click();
  await expect(second.getByTestId("me")).toHaveText("Mei Lan");
  await expect(second.locator("form.sign-in")).toHaveCount(0);
});

test("the header shows the player's rating with ? after one rated game, and links to their profile", async ({ browser }) => {
  const hana = await newPage(browser, server);
  const ito = await newPage(browser, server);
  const h = await signIn(hana, "Hana2");
  const i = await signIn(ito, "Ito2");
  // No rating, so no rank, before any rated game.
  await expect(hana.getByTestId("my-rating")).toHaveCount(0);
  // The game from Node; the pages hear of its end on their feed and read the new rating.
  await ratedGame(server, h, i, h);
  await expect(ito.getByTestId("my-rating")).toHaveText(/^ · 1[5-9]\d\d · \d+k\?$/);
  await expect(hana.getByTestId("my-rating")).toHaveText(/^ · 1[0-4]\d\d · \d+k\?$/);
  await expect(ito.locator("header .me")).toHaveText(/^Ito2 · 1[5-9]\d\d · \d+k\?$/);
  await expect(ito.getByTestId("leaderboard")).toContainText("Ito2");
  await ito.screenshot({ path: `${SHOTS}/lobby.png` });
  await ito.getByTestId("me").click();
  await expect(ito).toHaveURL(new RegExp(`#/player/${encodeURIComponent(i.id)}$`));
  await expect(ito.getByTestId("profile")).toContainText("Ito2");
  await expect(ito.getByTestId("ratings").locator('tr[data-size="9"]')).toContainText(/\d+k\?/);
});

test("the lobby on a phone, signed in: the leaderboard's names link to profiles, ranks with ?", async ({ browser }) => {
  const a = await guest(server, "Noor");
  const b = await guest(server, "Oskar");
  await ratedGame(server, a, b, b);
  const p = await newPage(browser, server, PHONE);
  await asGuest(p, a);
  const row = p.getByTestId("leaderboard").locator("li", { hasText: "Noor" });
  await expect(row).toContainText(/\d+k\?/);
  await p.screenshot({ path: `${SHOTS}/lobby-phone.png`, fullPage: false });
  await row.getByRole("link", { name: "Noor" }).click();
  await expect(p).toHaveURL(new RegExp(`#/player/${encodeURIComponent(a.id)}$`));
  await expect(p.getByTestId("profile")).toContainText("Noor");
});

test("a profile: ratings with ?, the rating chart, and the finished games a page at a time with their SGF", async ({ browser }) => {
  const pia = await guest(server, "Pia");
  const quinn = await guest(server, "Quinn");
  // 22 games: Pia (Black) wins the even-numbered ones (a page of 20, then 2 more).
  const ids: string[] = [];
  for (let n = 0; n < 22; n++) ids.push(await ratedGame(server, pia, quinn, n % 2 ? pia : quinn));
  // Seen by Quinn, signed in: the header names Quinn, the page offers a challenge.
  const p = await newPage(browser, server, DESKTOP);
  await asGuest(p, quinn, `/#/player/${encodeURIComponent(pia.id)}`);
  await expect(p.getByRole("button", { name: "Challenge" })).toBeVisible();
  const profile = p.getByTestId("profile");
  await expect(profile.getByRole("heading", { level: 2 })).toContainText("Pia");
  await expect(profile.locator(".mark")).toHaveText(["guest"]);
  const nine = profile.getByTestId("ratings").locator('tr[data-size="9"]');
  await expect(nine).toContainText(/\d{3,4} \d+[kd]\??/);
  await expect(nine.locator("td").nth(3)).toHaveText("22");
  // The chart: 23 points (the start, then each game), both axes labelled.
  const chart = profile.getByTestId("history-9").locator("svg");
  await expect(chart.locator("circle.pt")).toHaveCount(23);
  await expect(chart.locator("path.band")).toHaveCount(1);
  await expect(chart).toContainText("Rated games");
  await expect(chart).toContainText("Rating");
  // The games, newest first; 20, then the rest after "More". (The picture is taken once
  // they, or the words of a failure to list them, are there.)
  const games = profile.getByTestId("player-games").locator("li");
  await expect(games.first().or(profile.getByRole("alert"))).toBeVisible();
  await p.screenshot({ path: `${SHOTS}/profile.png` });
  await expect(profile.getByRole("alert")).toHaveCount(0);
  await expect(games).toHaveCount(20);
  await expect(games.first()).toHaveAttribute("data-game", ids[21]!);
  await expect(games.first()).toContainText("Quinn");
  await expect(games.first()).toContainText("Lost W+R");
  await expect(games.nth(1)).toContainText("Won B+R");
  await profile.getByRole("button", { name: "More" }).click();
  await expect(games).toHaveCount(22);
  await expect(profile.getByRole("button", { name: "More" })).toHaveCount(0);
  await expect(games.last()).toHaveAttribute("data-game", ids[0]!);
  // Its SGF downloads; its row opens the game.
  const sgf = (await createGameClient(server.url).exportSgf({ gameId: ids[0]! })).sgf;
  const [download] = await Promise.all([p.waitForEvent("download"), games.last().getByRole("button", { name: "Download SGF" }).click()]);
  expect(download.suggestedFilename()).toBe(`${ids[0]}.sgf`);
  const { readFileSync } = await import("node:fs");
  expect(readFileSync((await download.path())!, "utf8")).toBe(sgf);
  await games.last().getByRole("link", { name: "Open" }).click();
  await expect(p).toHaveURL(new RegExp(`#/game/${ids[0]}$`));
  await expect(p.getByTestId("result")).toContainText("B+R");
});

test("a profile whose games cannot be listed says so in words", async ({ browser }) => {
  const p = await newPage(browser, server);
  const rae = await guest(server, "Rae");
  // A page token the server never gave is refused: the app shows the failure, not a blank.
  await p.route("**/weiqi.v1.PlayerService/ListPlayerGames", (r) => r.fulfill({ status: 200, headers: { "content-type": "application/grpc-web+proto", "grpc-status": "12", "grpc-message": "not here" }, body: "" }));
  await p.goto(`/#/player/${encodeURIComponent(rae.id)}`);
  await expect(p.getByTestId("profile").getByRole("alert")).toContainText("The games could not be loaded: not here");
});

test("a challenge from a profile, accepted in the other browser: both land in the game", async ({ browser }) => {
  const sol = await newPage(browser, server);
  const tao = await newPage(browser, server);
  const s = await signIn(sol, "Sol");
  const t = await signIn(tao, "Tao");
  // Tao is elsewhere in the app (a tournament list); the inbox shows there too.
  await tao.goto("/#/tournaments");
  await sol.goto(`/#/player/${encodeURIComponent(t.id)}`);
  await sol.getByRole("button", { name: "Challenge" }).click();
  const form = sol.locator("form.challenge-form");
  await form.locator('select[name="challenge-size"]').selectOption("13");
  await form.locator('input[name="challenge-main"]').fill("5");
  await form.locator('input[name="challenge-periods"]').fill("2");
  await form.locator('input[name="challenge-period"]').fill("20");
  await form.locator('select[name="challenge-colour"]').selectOption({ label: "Black" });
  await form.getByRole("button", { name: "Send challenge" }).click();
  await expect(sol.getByTestId("challenge-sent")).toContainText("Challenge sent to Tao");
  const toast = tao.getByTestId("inbox").locator("[data-challenge]");
  await expect(toast).toContainText("Sol challenges you");
  await expect(toast).toContainText("13×13");
  await expect(toast).toContainText("5:00 + 2×20s");
  await expect(toast).toContainText("Your colour: White");
  await tao.screenshot({ path: `${SHOTS}/challenge.png` });
  await toast.getByRole("button", { name: "Accept" }).click();
  await tao.waitForURL(/#\/game\/.+/);
  await sol.waitForURL(/#\/game\/.+/);
  const id = tao.url().split("#/game/")[1]!;
  expect(sol.url().split("#/game/")[1]).toBe(id);
  await expect(sol.getByTestId("player-B")).toContainText("Sol");
  await expect(sol.getByTestId("player-B")).toContainText("(you)");
  await expect(tao.getByTestId("player-W")).toContainText("(you)");
  await expect(sol.getByTestId("status")).toContainText("Your turn");
  // Both seats act: Sol (Black, the host) plays, Tao answers.
  await sol.locator('rect[data-x="3"][data-y="3"]').click();
  await expect(tao.getByTestId("moves").locator("li")).toHaveCount(1);
  await tao.locator('rect[data-x="9"][data-y="9"]').click();
  await expect(sol.getByTestId("moves").locator("li")).toHaveCount(2);
  void s;
});

test("a declined challenge: the challenger is told the reason in words", async ({ browser }) => {
  const uma = await newPage(browser, server);
  const vic = await newPage(browser, server);
  await signIn(uma, "Uma");
  const v = await signIn(vic, "Vic");
  await uma.goto(`/#/player/${encodeURIComponent(v.id)}/challenge`);
  await uma.locator("form.challenge-form").getByRole("button", { name: "Send challenge" }).click();
  const toast = vic.getByTestId("inbox").locator("[data-challenge]");
  await expect(toast).toContainText("Uma challenges you");
  await toast.locator('select[name="decline-reason"]').selectOption({ label: "wants another board size" });
  await toast.getByRole("button", { name: "Decline" }).click();
  await expect(toast).toHaveCount(0);
  await expect(uma.getByTestId("notice")).toContainText("Vic declined your challenge: wants another board size");
  await expect(uma.getByTestId("challenge-sent")).toHaveCount(0);
  await expect(uma).toHaveURL(/#\/player\//);
});

test("a challenge to a player who is not online is refused in words", async ({ browser }) => {
  const away = await guest(server, "Wen");
  const p = await newPage(browser, server);
  await signIn(p, "Xia");
  await p.goto(`/#/player/${encodeURIComponent(away.id)}/challenge`);
  await p.locator("form.challenge-form").getByRole("button", { name: "Send challenge" }).click();
  await expect(p.locator("form.challenge-form").getByRole("alert")).toHaveText(
    "Wen is not online: a challenge needs the player to have the app open.",
  );
});
