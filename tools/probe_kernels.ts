/**
 * Device probe for the kernel ladder: validates and times every kernel at 4096 (and the fast
 * ones at 8192 and on odd shapes), autotunes 11_autotune, and measures cuBLAS in the same run
 * when it is there. Imports only lib/ (the GPU host has no package registry).
 *
 *   deno run -A tools/probe_kernels.ts --out DIR [--quick]
 *
 * Writes DIR/probe.json (every result) and DIR/<device-slug>.json (the tuning record), and
 * prints a table last. --quick uses small sizes (for a dry run on the software adapter).
 */
import { autotune } from "../lib/autotune.ts";
import { acquireGpu, deviceSlug } from "../lib/gpu.ts";
import { type Shape, shapeLabel } from "../lib/matrix.ts";
import { openCublas } from "../lib/peers/cublas.ts";
import { findKernel, type KernelSpec, type Params } from "../lib/registry.ts";
import { runKernel } from "../lib/runner.ts";

const args = Deno.args;
const outDir = args.includes("--out") ? args[args.indexOf("--out") + 1] : "/tmp/probe";
const quick = args.includes("--quick");
await Deno.mkdir(outDir, { recursive: true });

const gpu = await acquireGpu();
const slug = deviceSlug(gpu.summary);
const started = new Date().toISOString();
console.error(`device: ${gpu.summary.description} (${slug}), ${started}`);

interface Row {
  label: string;
  kernel: string;
  shape: string;
  gflops?: number;
  medianMs?: number;
  relErr: number;
  validated: boolean;
  params?: Params;
  error?: string;
}
const rows: Row[] = [];
const save = () =>
  Deno.writeTextFileSync(
    `${outDir}/probe.json`,
    JSON.stringify({ device: gpu.summary, started, rows }, null, 1),
  );

const kernel = (id: string): KernelSpec => findKernel(id)!;
const square = (n: number): Shape => ({ m: n, k: n, n });
const big = quick ? 256 : 4096;
const bigger = quick ? 384 : 8192;
const oddShapes: Shape[] = quick
  ? [square(255), square(257), { m: 100, k: 300, n: 77 }]
  : [square(4095), square(4097), { m: 1000, k: 3000, n: 777 }, { m: 1024, k: 3072, n: 768 }];

async function probe(id: string, shape: Shape, params?: Params, label = id) {
  const r = await runKernel(gpu, kernel(id), shape, { params, budgetMs: 300, checkRows: 8 });
  rows.push({
    label,
    kernel: id,
    shape: shapeLabel(shape),
    gflops: r.gflops,
    medianMs: r.medianMs,
    relErr: r.relErr,
    validated: r.validated,
    params: r.params,
    error: r.error,
  });
  console.error(
    `${label.padEnd(34)} ${shapeLabel(shape).padEnd(14)} ` +
      (r.validated
        ? `${r.gflops!.toFixed(0).padStart(7)} GFLOP/s  err ${r.relErr.toExponential(1)}`
        : `FAILED ${r.error}`),
  );
  save();
}

const cublas = quick ? "skipped (--quick)" : openCublas();
function probeCublas(shape: Shape) {
  if (typeof cublas === "string") return;
  try {
    const r = cublas.run(shape, { budgetMs: 300 });
    rows.push({
      label: "cuBLAS",
      kernel: "cublas",
      shape: shapeLabel(shape),
      gflops: r.gflops,
      medianMs: r.medianMs,
      relErr: r.relErr,
      validated: r.validated,
    });
    console.error(`cuBLAS ${shapeLabel(shape)}: ${r.gflops?.toFixed(0)} GFLOP/s`);
  } catch (e) {
    console.error(`cuBLAS failed: ${(e as Error).message}`);
  }
  save();
}
if (typeof cublas === "string") console.error(cublas);

// 1. The ladder at 4096.
probeCublas(square(big));
for (
  const id of [
    "02_naive",
    "03_coalesce",
    "04_tiled",
    "05_blocktile_1d",
    "06_blocktile_2d",
    "06_blocktile_2d_local_array",
    "07_vectorize",
    "08_bank_conflicts",
    "09_subgroup_tiling",
    "10_double_buffer",
    "12_f16",
    "12_f16_storage",
  ]
) await probe(id, square(big));
await probe("04_tiled", square(big), { TILE: 32 }, "04_tiled TILE=32");
await probe("08_bank_conflicts", square(big), { PAD: 0 }, "08_bank_conflicts PAD=0");
await probe("10_double_buffer", square(big), { GROUP_M: 8 }, "10_double_buffer GROUP_M=8");

// 2. Autotune the double-buffered kernel, then the tuned kernel everywhere.
const tuned = kernel("11_autotune");
const record = await autotune(gpu, tuned, square(big), {
  log: (l) => console.error(l),
  commit: Deno.env.get("GEMM_COMMIT") ?? "unknown",
  save: !quick,
});
Deno.writeTextFileSync(`${outDir}/${slug}.json`, JSON.stringify(record, null, 2) + "\n");
console.error(
  `autotune best: ${JSON.stringify(record.best.params)} ${record.best.gflops?.toFixed(0)}`,
);
await probe("11_autotune", square(big));

// 3. 8192 and odd shapes for the fast kernels.
probeCublas(square(bigger));
for (
  const id of [
    "07_vectorize",
    "08_bank_conflicts",
    "09_subgroup_tiling",
    "10_double_buffer",
    "11_autotune",
    "12_f16",
  ]
) {
  await probe(id, square(bigger));
}
for (const shape of oddShapes) {
  probeCublas(shape);
  for (const id of ["10_double_buffer", "11_autotune", "12_f16"]) {
    await probe(id, shape);
  }
}

// The table last, so the tail of the output carries it.
const ref = new Map(rows.filter((r) => r.kernel === "cublas").map((r) => [r.shape, r.gflops]));
console.log(`\n${gpu.summary.description} ${started}`);
console.log("label                              shape            GFLOP/s  xcuBLAS  relErr");
for (const r of rows) {
  const c = ref.get(r.shape);
  console.log(
    `${r.label.padEnd(34)} ${r.shape.padEnd(14)} ` +
      (r.validated
        ? `${r.gflops!.toFixed(0).padStart(8)}  ${
          c ? (r.gflops! / c).toFixed(2).padStart(6) : "     -"
        }` +
          `  ${r.relErr.toExponential(1)}`
        : `  FAILED ${r.error?.slice(0, 60)}`),
  );
}
console.log(`tuned: ${JSON.stringify(record.best.params)}`);
