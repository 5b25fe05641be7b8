// Builds the bundle the server embeds: dist/index.html, dist/app.js, dist/app.css,
// dist/favicon.svg, and the script and stylesheet compressed (brotli .br and gzip .gz,
// both at their best levels, sent as the browser accepts). Deterministic (pinned esbuild,
// no timestamps: gzip's header time is 0), so CI can check dist/ is current.
import { build } from "esbuild";
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";

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
copyFileSync("static/favicon.svg", "dist/favicon.svg");
for (const f of ["dist/app.js", "dist/app.css"]) {
  const body = readFileSync(f);
  writeFileSync(`${f}.gz`, gzipSync(body, { level: 9 }));
  writeFileSync(
    `${f}.br`,
    brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: body.length } }),
  );
}
