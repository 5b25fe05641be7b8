// Two projects: `unit` (the client-side state, no browser) and `e2e` (the app in Debian's
// chromium against a running `weiqi serve` at WEIQI_WEB_URL; started by
// cli/tests/e2e_web.rs). No browser is downloaded: CHROMIUM_PATH or /usr/bin/chromium.
import { defineConfig } from "@playwright/test";

export default defineConfig({
  timeout: 60_000,
  workers: 1,
  reporter: [["list"]],
  outputDir: "../target/web-test-results",
  projects: [
    { name: "unit", testDir: "tests/unit" },
    {
      name: "e2e",
      testDir: "tests/e2e",
      use: {
        baseURL: process.env.WEIQI_WEB_URL ?? "http://127.0.0.1:8080",
        browserName: "chromium",
        launchOptions: {
          executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
          args: ["--no-sandbox", "--disable-dev-shm-usage"],
        },
        trace: "retain-on-failure",
      },
    },
  ],
});
