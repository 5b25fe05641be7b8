// The engine's review after a game: asked for from the finished game's page, its progress
// shown, then Black's win rate as a graph and the biggest mistakes; a move picked on the
// graph, in the list or with the arrow keys shows the board as it was then, with the
// engine's choice, until "Back to the end". Anyone opening the game later gets the stored
// review at once; a server with no room for another review says when to come back.
import { expect, test, type Page } from "@playwright/test";
import { create } from "@bufbuild/protobuf";
import { ColorChoice, TimeControlSchema, requestId } from "../../src/client.js";
import { Server } from "./server.js";
import { PHONE, SHOTS, createGame, join, moves, newPage, point } from "./pages.js";

let server: Server;
test.beforeAll(async () => {
  server = await Server.start();
});
test.afterAll(() => server?.stop());

/** Black ignores the capture that decides a race (move 15, J9 instead of B5) and White
 * takes it, two black stones with it: the game of the server's own review test
 * (cli/tests/e2e_review.rs). */
const BLUNDER = ["A6", "A5", "B6", "B4", "C5", "A4", "C4", "A3", "B3", "A7", "A2", "B7", "G5", "C6", "J9", "B5"];
const at = (v: string): [number, number] => ["ABCDEFGHJ".indexOf(v[0]!), 9 - Number(v.slice(1))];

/** Keeps every text the page's review progress shows (a review of a few positions can be
 * over between two looks of an `expect`). */
async function recordProgress(p: Page): Promise<() => Promise<string[]>> {
  await p.evaluate(() => {
    const seen: string[] = [];
    (window as unknown as { seen: string[] }).seen = seen;
    new MutationObserver(() => {
      const text = document.querySelector('[data-testid="review-progress"]')?.textContent;
      if (text && seen.at(-1) !== text) seen.push(text);
    }).observe(document.body, { subtree: true, childList: true, characterData: true });
  });
  return () => p.evaluate(() => (window as unknown as { seen: string[] }).seen);
}

/** A game finished from Node: two moves, then Black resigns. */
async function finishedGame(server: Server): Promise<string> {
  const seats: Record<string, string> = {};
  let as = "";
  const c = server.client((id) => seats[`${id}:${as}`]);
  const made = await c.createGame({
    settings: { boardSize: 9, colorChoice: ColorChoice.HOST_BLACK, timeControl: create(TimeControlSchema, { kind: { case: "none", value: {} } }) },
    requestId: requestId(),
  });
  const id = made.gameId;
  seats[`${id}:B`] = made.seatToken;
  seats[`${id}:W`] = (await c.joinGame({ gameId: id, requestId: requestId() })).seatToken;
  for (const [k, point] of [{ x: 2, y: 2 }, { x: 6, y: 6 }].entries()) {
    as = k % 2 === 0 ? "B" : "W";
    await c.play({ mutation: { gameId: id, requestId: requestId() }, point });
  }
  as = "B";
  await c.resign({ mutation: { gameId: id, requestId: requestId() } });
  return id;
}

test("a finished game's review: progress, the win-rate graph, the mistakes, the board at a move", async ({ browser }) => {
  const host = await newPage(browser, server);
  const guest = await newPage(browser, server);
  const id = await createGame(host);
  await join(guest, id);
  await host.goto(`/#/game/${id}`);
  for (const [k, v] of BLUNDER.entries()) {
    const p = k % 2 === 0 ? host : guest;
    await point(p, ...at(v)).click();
    await moves([p], k + 1);
  }
  // The game in play has no review panel.
  await expect(host.getByTestId("review")).toHaveCount(0);
  await host.getByRole("button", { name: "Resign" }).click();
  await host.getByRole("button", { name: "Yes" }).click();
  await expect(host.getByTestId("result")).toContainText("W+R");

  // No review stored: the button starts one, its progress shown as it goes.
  const seen = await recordProgress(host);
  await host.getByRole("button", { name: "Review this game" }).click();
  const graph = host.getByTestId("winrate");
  await expect(graph).toBeVisible({ timeout: 30_000 });
  expect((await seen()).some((t) => /^Reviewing… \d+ of 17 positions$/.test(t)), (await seen()).join(" | ")).toBe(true);
  await expect(host.getByTestId("review-progress")).toHaveCount(0);
  await expect(host.getByRole("button", { name: "Review this game" })).toHaveCount(0);

  // The biggest mistake first, in board coordinates, marked on the graph too.
  const mistakes = host.getByTestId("mistakes").locator("li");
  await expect(mistakes.first()).toHaveText(/^Move 15: Black J9, engine B5 — lost \d+%$/);
  await expect(graph.getByTestId("mistake-mark")).toHaveCount(await mistakes.count());

  // A click on the graph at move 15: the board as it was then, J9 just played, the
  // engine's B5 marked, the two stones White took afterwards still there.
  await graph.locator('[data-move="15"]').click();
  await expect(host.getByTestId("review-move")).toHaveText(/^Move 15 of 16: Black J9, lost \d+% · Black \d+%$/);
  await expect(host.getByTestId("best-move")).toHaveAttribute("data-point", "B5");
  await expect(point(host, ...at("B5"))).toHaveAttribute("aria-label", "B5, empty, engine's choice");
  await expect(point(host, ...at("A6"))).toHaveAttribute("aria-label", "A6, black stone");
  await expect(point(host, ...at("J9"))).toHaveAttribute("aria-label", "J9, black stone");
  await expect(host.locator("circle.last-move")).toHaveAttribute("cx", String(at("J9")[0]));
  await host.screenshot({ path: `${SHOTS}/review.png` });

  // The arrow keys step through the moves; the last one is White's capture.
  await host.keyboard.press("ArrowLeft");
  await expect(host.getByTestId("review-move")).toContainText("Move 14 of 16: White C6");
  await expect(point(host, ...at("J9"))).toHaveAttribute("aria-label", "J9, empty");
  await host.keyboard.press("ArrowRight");
  await host.keyboard.press("ArrowRight");
  await expect(host.getByTestId("review-move")).toContainText("Move 16 of 16: White B5");
  await expect(point(host, ...at("A6"))).toHaveAttribute("aria-label", "A6, empty");

  // Back to the end: the final position, no marker.
  await host.getByRole("button", { name: "Back to the end" }).click();
  await expect(host.getByTestId("review-move")).toHaveCount(0);
  await expect(host.getByTestId("best-move")).toHaveCount(0);
  await expect(point(host, ...at("B5"))).toHaveAttribute("aria-label", "B5, white stone");

  // A mistake in the list picks its move too.
  await mistakes.first().getByRole("button").click();
  await expect(host.getByTestId("review-move")).toContainText("Move 15 of 16");
  await expect(host.getByTestId("best-move")).toHaveAttribute("data-point", "B5");

  // A spectator on a phone opening the game later: the stored review at once.
  const phone = await newPage(browser, server, PHONE);
  await phone.goto(`/#/game/${id}`);
  await expect(phone.getByTestId("winrate")).toBeVisible();
  await expect(phone.getByRole("button", { name: "Review this game" })).toHaveCount(0);
  await phone.getByTestId("winrate").locator('[data-move="15"]').tap();
  await expect(phone.getByTestId("review-move")).toContainText("Move 15 of 16");
  await expect(phone.getByTestId("best-move")).toHaveAttribute("data-point", "B5");
  await phone.getByTestId("review").scrollIntoViewIfNeeded();
  await phone.screenshot({ path: `${SHOTS}/review-phone.png` });
  await phone.getByRole("button", { name: "Back to the end" }).tap();
  await expect(phone.getByTestId("best-move")).toHaveCount(0);
});

test("a server with no room for another review says so, and when to try again", async ({ browser }) => {
  // One review at a time and none waiting; the first one long.
  const busy = await Server.start({ WEIQI__REVIEW__WORKERS: "1", WEIQI__REVIEW__QUEUE: "0", WEIQI__REVIEW__VISITS: "100000" });
  const stop = new AbortController();
  try {
    const first = await finishedGame(busy);
    const second = await finishedGame(busy);
    // The first game's review takes the one worker (its stream stays open).
    const running = busy.client().reviewGame({ gameId: first }, { signal: stop.signal })[Symbol.asyncIterator]();
    await running.next();
    const p = await newPage(browser, busy);
    await p.goto(`/#/game/${second}`);
    await p.getByRole("button", { name: "Review this game" }).click();
    await expect(p.getByTestId("review-error")).toHaveText(/^The server is busy reviewing other games: try again in \d+ seconds\.$/);
    await expect(p.getByRole("button", { name: "Review this game" })).toBeEnabled();
    await expect(p.getByTestId("review-progress")).toHaveCount(0);
  } finally {
    stop.abort();
    busy.stop();
  }
});
