// A game's record as an SGF file, downloaded (from the game page and a player's games).
import type { GameClient } from "./client.js";

export async function downloadSgf(client: GameClient, gameId: string): Promise<void> {
  const r = await client.exportSgf({ gameId });
  const url = URL.createObjectURL(new Blob([r.sgf], { type: "application/x-go-sgf" }));
  const a = document.createElement("a");
  a.href = url;
  a.download = `${gameId}.sgf`;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
