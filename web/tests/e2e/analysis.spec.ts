// Analysis in the app: the score estimate during a game, shaded on the board for players
// and spectators, gone when the game moves on.
import { expect, test } from "@playwright/test";
import { Server } from "./server.js";
import { SHOTS, createGame, join, moves, newPage, point } from "./pages.js";

let server: Server;
test.beforeAll(async () => {
  server = await Server.start();
});
test.afterAll(() => server?.stop());

test("the estimate shades each side's area and the dead stones, and a move clears it", async ({ browser }) => {
  const host = await newPage(browser, server);
  const guest = await newPage(browser, server);
  const id = await createGame(host);
  await join(guest, id);
  await host.goto(`/#/game/${id}`);
  const watcher = await newPage(browser, server);
  await watcher.goto(`/#/game/${id}`);
  // Black walls off the left (column C), White the right (column G); Black drops a stone
  // into White's side.
  const stones: [number, number][] = [];
  for (let y = 0; y < 9; y++) stones.push([2, y], [6, y]);
  stones.push([8, 4]);
  let n = 0;
  for (const [x, y] of stones) {
    const p = n % 2 === 0 ? host : guest;
    await point(p, x, y).click();
    n += 1;
    await moves([p], n);
  }
  await moves([watcher], n);

  await watcher.getByRole("button", { name: "Estimate score" }).click();
  await expect(watcher.getByTestId("estimate-text")).toContainText(/Estimate: [BW]\+/);
  await expect(point(watcher, 0, 0)).toHaveAttribute("data-estimate", "B");
  await expect(point(watcher, 7, 8)).toHaveAttribute("data-estimate", "W");
  await expect(point(watcher, 8, 4)).toHaveAttribute("aria-label", "J5, black stone, dead");
  await watcher.screenshot({ path: `${SHOTS}/estimate.png` });

  // White moves: the estimate was of the position before; it goes.
  await point(guest, 4, 4).click();
  await moves([watcher], n + 1);
  await expect(watcher.getByTestId("estimate-text")).toHaveCount(0);
  await expect(point(watcher, 0, 0)).not.toHaveAttribute("data-estimate", /.+/);
  await expect(watcher.getByRole("button", { name: "Estimate score" })).toBeEnabled();
});
