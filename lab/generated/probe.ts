/**
 * Step 12 on a GPU host: each transform of the generator alone and together at one tile
 * configuration, and with AHEAD where the loop is written out (data/transforms/<device>.json,
 * for notebook 12), beside step 11 and cuBLAS,
 * then the autotuner's search of the generated kernel (data/tuning/<device>/generated.json).
 * Every row is validated against float64 before it is timed.
 *   deno run -A lab/generated/probe.ts [--no-search] [--sizes=4096,8192]   (OUT=<dir>; GEMM_COMMIT)
 */
import { autotune } from "../../lib/search.ts";
import { acquireGpu, deviceSlug } from "../../lib/gpu.ts";
import type { Shape } from "../../lib/matrix.ts";
import { openCublas } from "../../lib/peers/cublas.ts";
import { findKernel } from "../../lib/registry.ts";
import { kernelParams, runKernel } from "../../lib/runner.ts";
import type { MeasuredRow, TransformRecord } from "../../lib/transforms.ts";
import { tuningUrl } from "../../lib/tuning.ts";

const out = Deno.env.get("OUT") ?? "/tmp";
const commit = Deno.env.get("GEMM_COMMIT") ?? "unknown";
const gpu = await acquireGpu();
const log = (s: string) => console.error(`[${(performance.now() / 1000).toFixed(0)}s] ${s}`);
const label = (s: Shape) => `${s.m}x${s.k}x${s.n}`;
const generated = findKernel("generated")!;
const autotuned = findKernel("autotune")!;
// Step 11's fastest point at 4096 on the H200: the configuration the transforms are measured at.
const params = { BM: 128, BN: 256, BK: 16, TN: 16, PAD: 0, GROUP_M: 8, AHEAD: 0 };
const sizesArg = Deno.args.find((a) => a.startsWith("--sizes="));
const sizes = sizesArg ? sizesArg.slice("--sizes=".length).split(",").map(Number) : [4096, 8192];
const shapes = sizes.map((n) => ({ m: n, k: n, n }));

const record: TransformRecord = {
  schema: 1,
  device: gpu.summary,
  date: new Date().toISOString(),
  commit,
  params,
  variants: [],
  autotune: [],
  cublas: [],
};
const save = () =>
  Deno.writeTextFileSync(`${out}/${deviceSlug(gpu.summary)}.json`, JSON.stringify(record, null, 1));

async function measure(spec: typeof generated, shape: Shape, p: Record<string, number>) {
  const r = await runKernel(gpu, spec, shape, { params: p, budgetMs: 300, checkRows: 8 });
  log(
    `${spec.name} ${label(shape)} ${JSON.stringify(p)}: ${
      r.validated ? r.gflops!.toFixed(0) : r.error
    }`,
  );
  if (!r.validated) throw new Error(`${spec.id} failed validation at ${label(shape)}: ${r.error}`);
  return { shape, gflops: r.gflops!, medianMs: r.medianMs!, relErr: r.relErr };
}

const cublas = openCublas();
for (const shape of shapes) {
  if (typeof cublas !== "string") {
    const r = await cublas.run(shape, {});
    log(`cublas ${label(shape)}: ${r.gflops?.toFixed(0)}`);
    if (r.validated) {
      record.cublas.push({ shape, gflops: r.gflops!, medianMs: r.medianMs!, relErr: r.relErr! });
    }
  }
  const tuned = kernelParams(gpu, autotuned, undefined, shape);
  record.autotune.push({ ...await measure(autotuned, shape, tuned), params: tuned });
  for (const UNROLL of [0, 1]) {
    for (const NESTED of [0, 1]) {
      for (const LITERAL_BUFFER of [0, 1]) {
        const transforms = { UNROLL, NESTED, LITERAL_BUFFER };
        const row: MeasuredRow = await measure(generated, shape, { ...params, ...transforms });
        record.variants.push({ ...row, transforms });
        save();
      }
    }
  }
  // AHEAD (the next k step's fragment reads issued early) needs the written-out loop: each such
  // combination again with it, in the same run.
  for (const NESTED of [0, 1]) {
    for (const LITERAL_BUFFER of [0, 1]) {
      const transforms = { UNROLL: 1, NESTED, LITERAL_BUFFER, AHEAD: 1 };
      const row: MeasuredRow = await measure(generated, shape, { ...params, ...transforms });
      record.variants.push({ ...row, transforms });
      save();
    }
  }
}
save();

if (!Deno.args.includes("--no-search")) {
  const t = await autotune(gpu, generated, shapes[0], {
    budgetMs: 100,
    checkRows: 4,
    commit,
    alsoShapes: [{ m: 2048, k: 2048, n: 2048 }, { m: 1000, k: 3000, n: 777 }, {
      m: 4097,
      k: 4097,
      n: 4097,
    }],
    shortlist: 6,
    log,
  });
  log(`search: winner ${JSON.stringify(t.best.params)}`);
  await Deno.copyFile(tuningUrl(gpu.summary, generated.name), `${out}/tuning-generated.json`);
}
log("done");
