// A tournament in real browsers against a real `weiqi serve`: created from the app,
// listed, registered for by two guests, started by its organizer; its standings and
// knockout bracket shown live, a board watched by a spectator, and a player's own board
// opened with their seat (check-in, then a resignation moves the standings on).
import { expect, test } from "@playwright/test";
import { mkdirSync } from "node:fs";
import { Server } from "./server.js";
import { SHOTS, newPage } from "./pages.js";
import { signIn } from "./people.js";

let server: Server;

test.beforeAll(async () => {
  server = await Server.start();
  mkdirSync(SHOTS, { recursive: true });
});
test.afterAll(() => server?.stop());

test("a tournament: listed, two guests register, started, standings and bracket shown, a board watched and played", async ({ browser }) => {
  test.setTimeout(120_000);
  const ada = await newPage(browser, server);
  const ben = await newPage(browser, server);
  await signIn(ada, "Ada");
  await signIn(ben, "Ben");

  // Ada creates it from the app: one group of two, then a knockout (a final).
  await ada.getByRole("link", { name: "Tournaments" }).click();
  await ada.locator('input[name="t-name"]').fill("Spring Cup");
  await ada.locator('select[name="t-groups"]').selectOption("1");
  await ada.locator('input[name="t-group-size"]').fill("2");
  await ada.locator('input[name="t-main"]').fill("5");
  await ada.getByRole("button", { name: "Create" }).click();
  await ada.waitForURL(/#\/tournament\/.+/);
  const page = ada.getByTestId("tournament");
  await expect(page.getByRole("heading", { level: 2 })).toContainText("Spring Cup");
  await expect(page.getByRole("heading", { level: 2 })).toContainText("Registration");
  await expect(ada.getByTestId("tournament-settings")).toContainText("9×9");
  await expect(ada.getByTestId("tournament-settings")).toContainText("Organizer: Ada");
  await page.getByRole("button", { name: "Register" }).click();
  await expect(ada.getByTestId("entrants")).toContainText("Ada");

  // Ben finds it in the list and registers; Ada's page hears of it live.
  await ben.goto("/#/tournaments");
  const row = ben.getByTestId("tournament-list").locator("li", { hasText: "Spring Cup" });
  await expect(row).toContainText("Registration");
  await row.getByRole("link", { name: "Spring Cup" }).click();
  await ben.getByRole("button", { name: "Register" }).click();
  await expect(ben.getByText("You are registered.")).toBeVisible();
  await expect(ada.getByTestId("entrants").locator("li")).toHaveCount(2);
  // Only the organizer may start it.
  await expect(ben.getByRole("button", { name: "Start" })).toHaveCount(0);
  await ada.getByRole("button", { name: "Start" }).click();

  // Running: the group's standings, the bracket (the final still to be decided), round 1.
  for (const p of [ada, ben]) {
    await expect(p.getByTestId("tournament").getByRole("heading", { level: 2 })).toContainText("Running");
    await expect(p.getByTestId("standings-A")).toContainText("Ada");
    await expect(p.getByTestId("standings-A")).toContainText("Ben");
    await expect(p.getByTestId("bracket").locator(".match")).toHaveCount(1);
    await expect(p.getByTestId("bracket")).toContainText("to be decided");
  }
  const board = ada.getByTestId("round-1").locator("li");
  await expect(board).toHaveCount(1);
  await expect(board).toContainText("Ada");
  await expect(board).toContainText("Ben");
  const gameId = (await board.getAttribute("data-game"))!;

  // A spectator watches the board from the tournament's page.
  const eve = await newPage(browser, server);
  await eve.goto("/#/tournaments");
  await eve.getByTestId("tournament-list").getByRole("link", { name: "Spring Cup" }).click();
  await expect(eve.getByRole("button", { name: "Register" })).toHaveCount(0);
  await eve.getByTestId("round-1").getByRole("link", { name: "Watch" }).click();
  await expect(eve).toHaveURL(new RegExp(`#/game/${gameId}$`));
  // Before the start the status says so; either way the spectator holds no seat.
  await expect(eve.getByTestId("status")).toContainText(/Scheduled start|Watching/);
  await expect(eve.locator('[data-testid="player-B"], [data-testid="player-W"]')).toHaveText([/Ada|Ben/, /Ada|Ben/]);
  await expect(eve.getByText("(you)")).toHaveCount(0);

  // Each player opens their own board with their seat and checks in.
  for (const p of [ada, ben]) {
    await p.getByTestId("round-1").getByRole("button", { name: "Play" }).click();
    await expect(p).toHaveURL(new RegExp(`#/game/${gameId}$`));
    await expect(p.locator('[data-testid^="player-"]', { hasText: "(you)" })).toHaveCount(1);
    const checkIn = p.getByRole("button", { name: "Check in" });
    if (await checkIn.isVisible()) await checkIn.click();
  }
  // Whoever is Black resigns at once (not their turn needed): White wins the group game.
  const black = (await ada.getByTestId("player-B").textContent())?.includes("(you)") ? ada : ben;
  const white = black === ada ? ben : ada;
  const winner = black === ada ? "Ben" : "Ada";
  await expect(black.getByRole("button", { name: "Resign" })).toBeEnabled({ timeout: 15_000 });
  await black.getByRole("button", { name: "Resign" }).click();
  await black.getByRole("button", { name: "Yes" }).click();
  await expect(white.getByTestId("result")).toContainText("W+R");

  // The standings move on by themselves; the final is paired in the bracket.
  await ada.goto(`/#/tournament/${encodeURIComponent(await tournamentId(eve, gameId, ada))}`);
  const standings = ada.getByTestId("standings-A").locator("tbody tr");
  await expect(standings.first()).toContainText(winner, { timeout: 15_000 });
  await expect(standings.first()).toContainText("3");
  await expect(ada.getByTestId("round-1")).toContainText("White wins");
  await expect(ada.getByTestId("bracket")).not.toContainText("to be decided", { timeout: 15_000 });
  await expect(ada.getByTestId("bracket").getByRole("link", { name: "Watch" })).toHaveCount(1);
  await ada.screenshot({ path: `${SHOTS}/tournament.png`, fullPage: true });
});

/** The tournament's id from Ada's history (she came from its page). */
async function tournamentId(_eve: unknown, _gameId: string, ada: import("@playwright/test").Page): Promise<string> {
  await ada.goBack();
  await ada.waitForURL(/#\/tournament\/.+/);
  return decodeURIComponent(ada.url().split("#/tournament/")[1]!);
}
