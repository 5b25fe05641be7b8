// Builds the bundle the server embeds: dist/index.html, dist/app.js, dist/app.css.
// Deterministic (pinned esbuild, no timestamps), so CI can check dist/ is current.
import { build } from "esbuild";
import { copyFileSync, mkdirSync } from "node:fs";

mkdirSync("dist", { recursive: true });
await build({
  entryPoints: ["src/main.tsx"],
  bundle: true,
  format: "esm",
  target: "es2022",
  minify: true,
  legalComments: "none",
  jsx: "automatic",
  jsxImportSource: "preact",
  outfile: "dist/app.js",
  logLevel: "warning",
});
copyFileSync("static/index.html", "dist/index.html");
copyFileSync("static/app.css", "dist/app.css");
