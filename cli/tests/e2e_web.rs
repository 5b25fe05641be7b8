//! The player's web app in a real browser: runs `web/`'s Playwright suite (the unit tests
//! of the client-side state, then the app in Debian's chromium against this build's
//! `weiqi serve`, which the suite starts, crashes and restarts itself). Needs
//! `npm ci --prefix web` and a chromium (`CHROMIUM_PATH`, default `/usr/bin/chromium`);
//! skipped without them unless `WEIQI_REQUIRE_BROWSER=1` (as `.ci/run` sets).

use std::path::Path;
use std::process::Command;

#[test]
fn web_app_in_a_real_browser() {
    let web = Path::new(env!("CARGO_MANIFEST_DIR")).join("../web");
    let required = std::env::var("WEIQI_REQUIRE_BROWSER").is_ok_and(|v| v == "1");
    let chromium = std::env::var("CHROMIUM_PATH").unwrap_or_else(|_| "/usr/bin/chromium".into());
    let playwright = web.join("node_modules/.bin/playwright");
    if !playwright.exists() || !Path::new(&chromium).exists() {
        assert!(
            !required,
            "WEIQI_REQUIRE_BROWSER=1 but {} or {chromium} is missing (npm ci --prefix web; apt-get install chromium)",
            playwright.display()
        );
        eprintln!(
            "skipping the browser tests: no {} or no {chromium}",
            playwright.display()
        );
        return;
    }
    let status = Command::new(&playwright)
        .arg("test")
        .current_dir(&web)
        .env("WEIQI_BIN", env!("CARGO_BIN_EXE_weiqi"))
        .env("CHROMIUM_PATH", &chromium)
        .env("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")
        .status()
        .expect("run playwright");
    assert!(
        status.success(),
        "the web app's tests failed (see their output above; traces under target/web-test-results)"
    );
}
