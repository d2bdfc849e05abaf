// Builds static/vendor/plotly-portal.min.js from the pinned plotly.js sources (package-lock.json)
// with the same esbuild settings plotly.js uses for its own dist files: `make plotly-bundle`.
// The output is committed, so a machine without Node still serves it; collectstatic gives it a
// hashed name and a gzip copy like every other static file.
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";

import * as esbuild from "esbuild";
import { environmentPlugin } from "esbuild-plugin-environment";
import { glsl } from "esbuild-plugin-glsl";
import InlineCSSPlugin from "esbuild-plugin-inline-css";

const require = createRequire(import.meta.url);
const { version } = JSON.parse(readFileSync(require.resolve("plotly.js/package.json"), "utf8"));

await esbuild.build({
  entryPoints: ["jsbuild/plotly-portal.js"],
  outfile: "static/vendor/plotly-portal.min.js",
  format: "iife",
  globalName: "Plotly",
  bundle: true,
  minify: true,
  legalComments: "none",
  banner: { js: `/* plotly.js v${version} (MIT licence, Plotly, Inc.), partial bundle: ` +
                "scatter, scattergl, bar, box, heatmap, table. Built by jsbuild/build-plotly.mjs */" },
  plugins: [InlineCSSPlugin(), glsl({ minify: true }), environmentPlugin({ NODE_DEBUG: false })],
  // as in plotly.js's esbuild-config.js: one regl, and the browser stream for its Node users
  alias: { regl: "@plotly/regl", stream: "stream-browserify" },
  define: { global: "window", "define.amd": "false" },
  target: "es2016",
  logLevel: "warning",
});

// The portal draws no geo charts, and it loads nothing from a CDN: plotly's default topojson URL
// (used by geo charts only) points at the site's own folder instead of cdn.plot.ly.
const out = "static/vendor/plotly-portal.min.js";
writeFileSync(out, readFileSync(out, "utf8")
  .replace('"https://cdn.plot.ly/un/"', '"/static/vendor/topojson/"')
  .replace("the topojson files are fetched from cdn.plot.ly.",
           "the topojson files are fetched from the site's own static folder."));
