/**
 * Does step 05 gain from its 8 outputs per invocation, or from the other changes that came with
 * them (lab: not part of the product)? Step 05's kernel with `TM` (outputs per invocation, a `const`
 * in its WGSL) rewritten to 1 (`oneOutput`): one sum, one store. Each variant is validated against
 * the float64 reference and timed at 4096 as the bench times it, at fixed `BK` 8:
 *   - the same 32 x 32 tile with `TM` 8 and 1 (128 and 1,024 invocations): only the outputs per
 *     invocation change, and with them how many invocations share the tile;
 *   - the same 256 invocations with `TM` 8 (128 x 16) and 1 (16 x 16): only the outputs per
 *     invocation change, and with them the tile.
 * Writes DIR/outputs.json.
 *
 *   deno run -A lab/outputs_per_invocation.ts --out DIR [--quick]
 */
import { compileWgsl, type Gpu, loadKernelSource } from "../lib/gpu.ts";
import type { Shape } from "../lib/matrix.ts";
import type { Measured } from "../lib/record.ts";
import { validateThenTime } from "../lib/measure.ts";
import { findKernel, numericsOf, type Params } from "../lib/registry.ts";
import { BoundProblem } from "../lib/runner.ts";
import { timePasses, type TimingOptions } from "../lib/timing.ts";
import { probeRecord, startProbe } from "./probe_record.ts";

/** Step 05's WGSL with one output per invocation: `TM` 1, one scalar sum, one store. */
export function oneOutput(code: string): string {
  const swaps: [string | RegExp, string][] = [
    ["const TM: u32 = 8u;", "const TM: u32 = 1u;"],
    [/var acc0 = vec4<f32>\(0\.0\);\s*var acc1 = vec4<f32>\(0\.0\);/, "var acc = 0.0;"],
    [
      /acc0 \+= b \* vec4<f32>\([^;]*\);\s*acc1 \+= b \* vec4<f32>\([^;]*\);/,
      "acc += b * As[a];",
    ],
    [/store\(row, c, acc0\.x\);[\s\S]*store\(row \+ 7u, c, acc1\.w\);/, "store(row, c, acc);"],
  ];
  let out = code;
  for (const [from, to] of swaps) {
    const next = out.replace(from, to);
    if (next === out) throw new Error(`step 05's kernel has no ${from}`);
    out = next;
  }
  return out;
}

/**
 * Step 05's kernel compiled from `code` (its WGSL or `oneOutput`'s) at `params`, validated on
 * `shape` against the float64 reference, then, given `timing`, timed; the validated-then-timed row.
 */
export async function measureVariant(
  gpu: Gpu,
  code: string,
  params: Params,
  shape: Shape,
  label: string,
  timing?: TimingOptions,
) {
  const spec = findKernel("blocktile_1d")!;
  const pipeline = await gpu.device.createComputePipelineAsync({
    label,
    layout: "auto",
    compute: {
      module: await compileWgsl(gpu, code, label),
      entryPoint: spec.entryPoint,
      constants: params,
    },
  });
  // The launch plan reads the step's workgroup size as BM * BN / 8; at TM 1 the WGSL's own
  // THREADS (BM * BN) sets it, and the grid (one workgroup per BM x BN tile) is the same.
  const kernel = { spec, params, pipeline };
  let problem: BoundProblem | undefined;
  try {
    const row: Omit<Measured, "seed"> = { ...shape, relErr: NaN, validated: false };
    return await validateThenTime(row, {
      numerics: numericsOf(spec, params),
      label,
      compute: async (a, b) => {
        problem = await BoundProblem.create(gpu, kernel, shape, a, b);
        return await problem.compute();
      },
      time: timing && (() => timePasses(gpu, (pass) => problem!.encode(pass), timing)),
    });
  } finally {
    problem?.destroy();
  }
}

if (import.meta.main) {
  const { outDir, quick, gpu, started, commit } = await startProbe("/tmp/outputs");
  const n = quick ? 256 : 4096;
  const shape: Shape = { m: n, k: n, n };
  const spec = findKernel("blocktile_1d")!;
  const eight = await loadKernelSource(spec.file);
  const one = oneOutput(eight);
  const variants: { label: string; tm: 1 | 8; params: Params }[] = [
    { label: "TM 8, 64 x 64 (the step)", tm: 8, params: { BM: 64, BN: 64, BK: 8 } },
    { label: "TM 8, 32 x 32", tm: 8, params: { BM: 32, BN: 32, BK: 8 } },
    { label: "TM 1, 32 x 32", tm: 1, params: { BM: 32, BN: 32, BK: 8 } },
    { label: "TM 8, 128 x 16", tm: 8, params: { BM: 128, BN: 16, BK: 8 } },
    { label: "TM 1, 16 x 16", tm: 1, params: { BM: 16, BN: 16, BK: 8 } },
  ];
  const { rows, save } = probeRecord<Record<string, unknown>>(`${outDir}/outputs.json`, {
    device: gpu.summary.description,
    started,
    commit,
    shape: n,
  });
  for (const v of variants) {
    const code = v.tm === 8 ? eight : one;
    const r = await measureVariant(gpu, code, v.params, shape, v.label, { budgetMs: 300 });
    const row = {
      label: v.label,
      tm: v.tm,
      params: v.params,
      invocations: v.params.BM * v.params.BN / v.tm,
      validated: r.validated,
      relErr: r.relErr,
      medianMs: r.medianMs,
      spread: r.medianMs && (r.maxMs! - r.minMs!) / r.medianMs,
      reps: r.reps,
      gflops: r.gflops,
      ...(r.error ? { error: r.error } : {}),
    };
    rows.push(row);
    console.error(JSON.stringify(row));
    save();
  }
}
