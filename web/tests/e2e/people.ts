// Helpers for the players' and tournaments' browser tests: guests signed in through the
// page or made from Node, and rated games played quickly from Node (two moves, then a
// resignation), as another app of the service would.
import { expect, type Page } from "@playwright/test";
import { createGameClient, createPlayerClient, requestId, TimeControlSchema, ColorChoice } from "../../src/client.js";
import { create } from "@bufbuild/protobuf";
import type { Server } from "./server.js";

export interface Guest {
  id: string;
  name: string;
  token: string;
}

/** Signs in through the page's guest form; returns the guest as the page keeps it. */
export async function signIn(p: Page, name: string): Promise<Guest> {
  if (!p.url().startsWith("http")) await p.goto("/");
  await p.locator('input[name="guest-name"]').fill(name);
  await p.locator('form.sign-in button[type="submit"]').click();
  await expect(p.getByTestId("me")).toHaveText(name);
  return p.evaluate(() => JSON.parse(localStorage.getItem("weiqi.player")!) as Guest);
}

/** A guest made from Node. */
export async function guest(server: Server, name: string): Promise<Guest> {
  const r = await createPlayerClient(server.url).registerGuest({ name });
  return { id: r.player!.playerId, name: r.player!.name, token: r.token };
}

/** A page signed in as a guest made elsewhere (the app's stored record). */
export async function asGuest(p: Page, g: Guest, path = "/"): Promise<void> {
  await p.goto("/");
  await p.evaluate((rec) => localStorage.setItem("weiqi.player", JSON.stringify(rec)), g);
  // A reload, as the app reads the record when it starts (a new hash alone would not).
  await p.goto(path);
  await p.reload();
  await expect(p.getByTestId("me")).toHaveText(g.name);
}

/** A rated 9x9 game from Node: `black` hosts, two moves, then `loser` resigns. */
export async function ratedGame(server: Server, black: Guest, white: Guest, loser: Guest): Promise<string> {
  const seats: Record<string, string> = {};
  const as = (g: Guest) => createGameClient(server.url, (id) => seats[`${id}:${g.id}`], () => g.token);
  const made = await as(black).createGame({
    settings: {
      boardSize: 9,
      rated: true,
      colorChoice: ColorChoice.HOST_BLACK,
      timeControl: create(TimeControlSchema, { kind: { case: "none", value: {} } }),
    },
    requestId: requestId(),
  });
  const id = made.gameId;
  seats[`${id}:${black.id}`] = made.seatToken;
  seats[`${id}:${white.id}`] = (await as(white).joinGame({ gameId: id, requestId: requestId() })).seatToken;
  await as(black).play({ mutation: { gameId: id, requestId: requestId() }, point: { x: 2, y: 2 } });
  await as(white).play({ mutation: { gameId: id, requestId: requestId() }, point: { x: 6, y: 6 } });
  await as(loser).resign({ mutation: { gameId: id, requestId: requestId() } });
  return id;
}
