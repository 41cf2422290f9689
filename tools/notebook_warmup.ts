/**
 * Loads everything the notebooks load from npm, once, so tools/notebook_cache.sh can see (under
 * strace) which files of the Deno cache they read: the library's entry modules, a vega-lite chart
 * rendered to SVG and PNG (vega, resvg and its WebAssembly), a plotly chart's bundle, and one
 * small TF.js matmul on this machine's adapter.
 */
import { session } from "../lib/mod.ts";
import { chartBundle } from "../lib/notebook/charts.ts";
import { openTfjs } from "../lib/peers/tfjs.ts";
import "../lib/cpu_bench.ts";
import "../lib/record.ts";
import "../lib/cpu.ts";

type AnyChart = Parameters<typeof chartBundle>[0];
const values = [{ x: 1, y: 2 }, { x: 2, y: 3 }];
const encoding = {
  x: { field: "x", type: "quantitative" },
  y: { field: "y", type: "quantitative" },
};
const spec = { data: { values }, mark: "point", encoding };
await chartBundle({ kind: "vega-lite", name: "warmup", spec } as AnyChart);
await chartBundle({
  kind: "plotly",
  name: "warmup",
  figure: { data: [{ type: "heatmap", z: [[1, 2], [3, 4]] }], layout: {} },
  fallback: spec,
} as AnyChart);
const tfjs = await openTfjs((await session()).gpu);
await tfjs.run({ m: 64, k: 64, n: 64 }, { reps: 1 });
tfjs.close();
console.log("notebook_warmup: loaded");
