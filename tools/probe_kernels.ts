/**
 * Device probe for the kernel ladder. Validates (float64 reference) and times with GPU
 * timestamps; cuBLAS in the same run when it is there. Imports only lib/ (the GPU host has no
 * package registry).
 *
 *   deno run -A tools/probe_kernels.ts --out DIR [--quick] [--ladder]
 *
 * Default (round 2): padding cost on odd shapes (10 with an unpadded C against round 1's padded
 * C), the probe-only variants (kernels/probes/*.wgsl, registered here only), TN 16, a multi-shape
 * autotune of 11_autotune, and 10/11 at 4096, 8192 and the odd shapes. --ladder adds every step
 * at 4096 first. Writes DIR/probe.json (every result) and DIR/<device-slug>.json (the tuning
 * record), and prints a table last. --quick uses small sizes (a dry run on the software adapter).
 */
import { autotune } from "../lib/autotune.ts";
import { acquireGpu, deviceSlug } from "../lib/gpu.ts";
import { paddedTiledModel } from "../lib/kernels/cost.ts";
import { doubleBuffer } from "../lib/kernels/ladder.ts";
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
const budgetMs = quick ? 20 : 300;
/** Odd shapes and, for each, the aligned shape its ratio is taken against. */
const oddPairs: [Shape, Shape][] = quick
  ? [[square(255), square(256)], [square(257), square(256)], [
    { m: 100, k: 300, n: 77 },
    { m: 128, k: 256, n: 64 },
  ]]
  : [[square(4095), square(4096)], [square(4097), square(4096)], [
    { m: 1000, k: 3000, n: 777 },
    { m: 1024, k: 3072, n: 768 },
  ]];
const [rectOdd, rectAligned] = oddPairs[2];
/** The rectangular odd shape with N rounded to 4: no padding at all (isolates its cost). */
const rectNoPad = { ...rectOdd, n: Math.ceil(rectOdd.n / 4) * 4 };
const VEC4 = { m: 1, n: 4, k: 4 };

// Probe-only variants of 10 (not registered; kernels/probes/*.wgsl).
const paddedC: KernelSpec = {
  ...doubleBuffer,
  file: "probes/probe_10_padded_c.wgsl",
  unpaddedC: false,
  model: (s, p) => paddedTiledModel(s, p.BM, p.BN, VEC4),
};
const fmaVariant: KernelSpec = { ...doubleBuffer, file: "probes/probe_10_fma.wgsl" };
/** 11's file (10 with TN, the columns per invocation, as a knob) at fixed parameters. */
const tnSpec: KernelSpec = { ...findKernel("11_autotune")!, deviceParams: undefined };

async function probe(spec: KernelSpec | string, shape: Shape, params?: Params, label?: string) {
  if (typeof spec === "string") spec = kernel(spec);
  label ??= spec.id;
  const name = label;
  const r = await runKernel(gpu, spec, shape, { params, budgetMs, checkRows: 8 });
  rows.push({
    label: name,
    kernel: spec.id,
    shape: shapeLabel(shape),
    gflops: r.gflops,
    medianMs: r.medianMs,
    relErr: r.relErr,
    validated: r.validated,
    params: r.params,
    error: r.error,
  });
  console.error(
    `${name.padEnd(34)} ${shapeLabel(shape).padEnd(14)} ` +
      (r.validated
        ? `${r.gflops!.toFixed(0).padStart(7)} GFLOP/s ${r.medianMs!.toFixed(4)} ms ` +
          `err ${r.relErr.toExponential(1)}`
        : `FAILED ${r.error}`),
  );
  save();
  return r.validated ? r.gflops! : 0;
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

const allShapes = [square(big), square(bigger), ...oddPairs.flat(), rectNoPad];
const distinct = [...new Map(allShapes.map((s) => [shapeLabel(s), s])).values()];
for (const shape of distinct) probeCublas(shape);

// 0. (--ladder) every step at 4096.
if (args.includes("--ladder")) {
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
}

// 1. Padding: 10 with an unpadded C (runner pads A and B only) against round 1's padded C.
for (const shape of [square(big), ...oddPairs.flatMap(([odd]) => [odd]), rectAligned, rectNoPad]) {
  await probe("10_double_buffer", shape);
  await probe(paddedC, shape, undefined, "10 padded C (round 1)");
}

// 2. Peak variants at 4096, each next to 10 with the same parameters.
const tiles: Params[] = [
  { BM: 128, BN: 128, BK: 8, PAD: 1 },
  { BM: 128, BN: 256, BK: 16, PAD: 0 },
  { BM: 64, BN: 128, BK: 8, PAD: 0 },
];
let best10 = 0;
let bestFma = 0;
for (const p of tiles) {
  const tag = `${p.BM}x${p.BN}x${p.BK}p${p.PAD}`;
  best10 = Math.max(best10, await probe("10_double_buffer", square(big), p, `10 ${tag}`));
  bestFma = Math.max(bestFma, await probe(fmaVariant, square(big), p, `10 fma ${tag}`));
}
let bestWide: { gflops: number; params?: Params } = { gflops: 0 };
await probe(tnSpec, square(big), { ...tnSpec.params }, "10 TN=8 (11's file) 128x128x8p1");
for (const BM of [64, 128, 256]) {
  for (const BN of [128, 256]) {
    for (const BK of [8, 16]) {
      for (const PAD of [0, 1]) {
        const p = { ...tnSpec.params, BM, BN, BK, PAD, TN: 16 };
        if (tnSpec.invalid!(p)) continue;
        const g = await probe(tnSpec, square(big), p, `10 wide 8x16 ${BM}x${BN}x${BK}p${PAD}`);
        if (g > bestWide.gflops) bestWide = { gflops: g, params: p };
      }
    }
  }
}
console.error(
  `best 10 ${best10.toFixed(0)}, fma ${bestFma.toFixed(0)}, wide ${bestWide.gflops.toFixed(0)}`,
);

// 3. Autotune 11 over 4096, 4097 and the rectangular odd shape (geometric mean).
// 11's space holds TN (8, 16) since run 3 showed TN 16 ahead at 4096.
const tuned = kernel("11_autotune");
const record = await autotune(gpu, tuned, square(big), {
  alsoShapes: [oddPairs[1][0], rectOdd],
  shortlist: quick ? 3 : 8,
  budgetMs: quick ? 20 : 150,
  log: (l) => console.error(l),
  commit: Deno.env.get("GEMM_COMMIT") ?? "unknown",
  save: !quick,
});
Deno.writeTextFileSync(`${outDir}/${slug}.json`, JSON.stringify(record, null, 2) + "\n");
const bestParams = record.best.params;
const shortlistLines: string[] = [];
// The shortlist's odd/aligned ratios (4097 and the rectangle need their aligned neighbours).
for (const [i, t] of record.trials.filter((t) => t.others).entries()) {
  const aligned = await probe(tuned, rectAligned, t.params, `shortlist ${i}`);
  const [at4097, atRect] = t.others!.map((o) => o.gflops ?? 0);
  shortlistLines.push(
    `shortlist ${i} ${JSON.stringify(t.params)} score ${t.score?.toFixed(0)}: ` +
      `4097/4096 ${(at4097 / t.gflops!).toFixed(2)}, rect ${(atRect / aligned).toFixed(2)}`,
  );
}
console.error(`autotune best: ${JSON.stringify(bestParams)} score ${record.best.score}`);

// 4. The tuned kernel (and the best wide variant) at 4096, 8192 and every odd/aligned shape.
const tunedLabel = "11_autotune";
for (const shape of distinct) {
  if (shapeLabel(shape) === shapeLabel(square(bigger))) await probe("10_double_buffer", shape);
  await probe(tuned, shape, bestParams, tunedLabel);
}
if (bestWide.params) {
  const wideShapes = [square(bigger), ...oddPairs.map(([odd]) => odd), rectAligned];
  for (const shape of wideShapes) await probe(tnSpec, shape, bestWide.params, "10 wide best");
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
// Odd/aligned ratios of each label (same kernel, same parameters).
const at = (label: string, s: Shape) =>
  rows.find((r) => r.label === label && r.shape === shapeLabel(s) && r.validated)?.gflops;
for (const label of [...new Set(rows.map((r) => r.label))]) {
  const ratios = oddPairs.map(([odd, aligned]) => {
    const [o, a] = [at(label, odd), at(label, aligned)];
    return o && a ? `${shapeLabel(odd)} ${(o / a).toFixed(2)}` : undefined;
  }).filter((x) => x);
  if (ratios.length) console.log(`ratio ${label.padEnd(28)} ${ratios.join("  ")}`);
}
for (const line of shortlistLines) console.log(line);
console.log(
  `best 10 ${best10.toFixed(0)}, fma ${bestFma.toFixed(0)}, wide ${bestWide.gflops.toFixed(0)}`,
);
console.log(`tuned: ${JSON.stringify(bestParams)}`);
