// A real `weiqi serve` for the browser tests (WEIQI_BIN, built by cargo): started on free
// ports with a fresh data folder, crashed and restarted on the same ports when a test asks.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { createGameClient, type GameClient } from "../../src/client.js";

export class Server {
  private child: ChildProcess | undefined;
  /** Settles when the last launched process has exited (its ports and lock released). */
  private exited: Promise<void> = Promise.resolve();
  readonly dir = mkdtempSync(join(tmpdir(), "weiqi-web-e2e-"));
  grpc = "127.0.0.1:0";
  web = "127.0.0.1:0";
  url = "";

  static async start(env: Record<string, string> = {}): Promise<Server> {
    const s = new Server();
    await s.launch(env);
    return s;
  }

  async launch(env: Record<string, string> = {}): Promise<void> {
    const bin = process.env.WEIQI_BIN;
    if (!bin) throw new Error("WEIQI_BIN must name the weiqi binary (cli/tests/e2e_web.rs sets it)");
    const child = spawn(
      bin,
      ["serve", "--listen", this.grpc, "--web-listen", this.web, "--metrics-listen", "", "--data-dir", this.dir],
      {
        stdio: ["ignore", "pipe", "inherit"],
        env: {
          ...process.env,
          WEIQI__LOG_LEVEL: "warn",
          WEIQI__LIMITS__CREATES_PER_MINUTE: "0",
          WEIQI__LIMITS__WATCH_STREAMS_PER_CLIENT: "0",
          // Reviews of a few seconds, not the default 1000 simulations a position.
          WEIQI__REVIEW__VISITS: "200",
          // A built bundle to serve instead of the binary's own (WEIQI_WEB_DIR, e.g. web/dist
          // while working on the app without rebuilding the server).
          WEIQI__WEB_DIR: process.env.WEIQI_WEB_DIR ?? "",
          ...env,
        },
      },
    );
    this.child = child;
    this.exited = new Promise((r) => child.once("exit", () => r()));
    // A launch that prints no address (a port still held, the data folder locked) fails
    // here, not later with a page that cannot load.
    this.url = "";
    const lines = createInterface({ input: child.stdout! });
    for await (const line of lines) {
      const grpc = /^listening on (.+)$/.exec(line);
      if (grpc) this.grpc = grpc[1]!;
      const web = /^web app on http:\/\/(.+)\/$/.exec(line);
      if (web) {
        this.web = web[1]!;
        this.url = `http://${this.web}`;
        break;
      }
    }
    if (!this.url) throw new Error("weiqi serve did not start its web app");
  }

  /** Kills the process with no shutdown, as a crash would. */
  crash(): void {
    this.child?.kill("SIGKILL");
    this.child = undefined;
  }

  /** The same server again: same data folder, same ports, once the old process is gone. */
  async restart(): Promise<void> {
    this.crash();
    await this.exited;
    await this.launch();
  }

  stop(): void {
    this.crash();
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** The generated client from Node, as another app would use it (gRPC-Web over fetch). */
  client(token?: (gameId: string) => string | undefined): GameClient {
    return createGameClient(this.url, token);
  }
}
