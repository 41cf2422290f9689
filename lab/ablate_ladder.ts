/**
 * Where each ladder kernel's time goes, measured by leaving parts out (lab: not part of the
 * product). Each kernel is first validated against the float64 reference and timed as the bench
 * times it; then the same kernel is timed again whole, then without its global loads (each read of
 * A and B replaced by a value made from its index: lib/ablation.ts), then also without its
 * barriers, its stores to workgroup memory and its reads of it (each replaced as the loads
 * were): what is left is the multiply-adds and the index arithmetic. Only the whole kernel computes C; the other rows are timings of kernels that are
 * wrong on purpose. Writes DIR/ablation.json in data/ablation/'s format.
 *
 *   deno run -A lab/ablate_ladder.ts --out DIR [--quick] [--kernels a,b,...] [--params JSON]
 *
 * --params: parameters for some of the kernels named, as {"name": {"BM": 128, ...}}; a kernel given
 * parameters is validated and taken apart at them (its plan otherwise), recorded with `config`
 * "name PARAMS".
 * --quick: 256 x 256 x 256 (a dry run on the software adapter).
 */
import {
  ablatedSource,
  type Ablation,
  type AblationFile,
  type AblationStage,
  type LeftOut,
} from "../lib/ablation.ts";
import { acquireGpu, compileWgsl, loadKernelSource } from "../lib/gpu.ts";
import type { Shape } from "../lib/matrix.ts";
import { findKernel, type KernelSpec, type Params } from "../lib/registry.ts";
import { BoundProblem, runKernel } from "../lib/runner.ts";
import { currentCommit } from "../lib/record.ts";
import { timePasses } from "../lib/timing.ts";

const args = Deno.args;
const option = (name: string) => args.includes(name) ? args[args.indexOf(name) + 1] : undefined;
const outDir = option("--out") ?? "/tmp/ablate";
const quick = args.includes("--quick");
/** The ladder's steps and the written-out controls of 06, 07 and 09. */
const LADDER = [
  "naive",
  "coalesce",
  "coalesce_unrolled",
  "tiled",
  "blocktile_1d",
  "blocktile_2d",
  "blocktile_2d_written_out",
  "vectorize",
  "vectorize_written_out",
  "bank_conflicts",
  "subgroup_tiling",
  "subgroup_tiling_written_out",
  "double_buffer",
  "autotune",
  "generated",
  "f16",
  "f16_storage",
];
const names = option("--kernels")?.split(",") ?? LADDER;
const chosen = JSON.parse(option("--params") ?? "{}") as Record<string, Params>;
const n = quick ? 256 : 4096;
const shape: Shape = { m: n, k: n, n };
const flops = 2 * n * n * n;

await Deno.mkdir(outDir, { recursive: true });
const gpu = await acquireGpu();
const started = new Date().toISOString();
const commit = await currentCommit();
console.error(`device: ${gpu.summary.description}, ${started}, commit ${commit}`);

/** The kernel's pipeline from its WGSL with `leftOut` taken out (nothing: the kernel itself). */
async function pipelineWithout(spec: KernelSpec, params: Params, leftOut: LeftOut[]) {
  const code = spec.generate ? spec.generate(params) : await loadKernelSource(spec.file);
  const module = await compileWgsl(gpu, ablatedSource(code, leftOut), `${spec.file} ablated`);
  return gpu.device.createComputePipelineAsync({
    label: `${spec.id} without ${leftOut.join(", ") || "nothing"}`,
    layout: "auto",
    compute: { module, entryPoint: spec.entryPoint, constants: spec.generate ? {} : params },
  });
}

async function ablate(spec: KernelSpec): Promise<Ablation | undefined> {
  const whole = await runKernel(gpu, spec, shape, { params: chosen[spec.name] });
  if (!whole.validated) {
    console.error(`${spec.name}: not validated (${whole.error}); not taken apart`);
    return undefined;
  }
  const params = whole.params;
  const source = spec.generate ? spec.generate(params) : await loadKernelSource(spec.file);
  const cumulative: [string, LeftOut[]][] = [["nothing (the whole kernel)", []]];
  const parts: [string, LeftOut][] = [["the global loads", "global loads"]];
  if (source.includes("workgroupBarrier();")) parts.push(["the barriers", "barriers"]);
  if (source.includes("var<workgroup>")) {
    parts.push(["the stores to workgroup memory", "workgroup stores"]);
    parts.push(["the reads of workgroup memory", "workgroup reads"]);
  }
  for (const [label, part] of parts) cumulative.push([label, [...cumulative.at(-1)![1], part]]);
  const stages: AblationStage[] = [];
  for (const [leftOut, takenOut] of cumulative) {
    const pipeline = await pipelineWithout(spec, params, takenOut);
    const problem = await BoundProblem.random(gpu, { spec, params, pipeline }, shape);
    try {
      const t = await timePasses(gpu, (pass) => problem.encode(pass), { budgetMs: 300 });
      const previous = stages.at(-1);
      stages.push({
        leftOut,
        ms: t.medianMs,
        gflopsEquivalent: flops / (t.medianMs * 1e6),
        ...(previous ? { costMs: previous.ms - t.medianMs } : {}),
        spread: (t.maxMs - t.minMs) / t.medianMs,
        reps: t.reps,
      });
    } finally {
      problem.destroy();
    }
  }
  console.error(
    `${spec.name.padEnd(30)} validated ${whole.gflops!.toFixed(0)} GFLOP/s (err ` +
      `${whole.relErr.toExponential(1)}); ` +
      stages.map((s) => `${s.leftOut}: ${s.gflopsEquivalent.toFixed(0)}`).join("; "),
  );
  return {
    device: gpu.summary.description,
    started,
    commit,
    shape: String(n),
    config: chosen[spec.name] ? `${spec.name} ${JSON.stringify(chosen[spec.name])}` : spec.name,
    kernel: spec.name,
    params,
    validated: { gflops: whole.gflops!, relErr: whole.relErr },
    stages,
  };
}

const file: AblationFile = { schema: 1, ablations: [] };
for (const name of names) {
  const spec = findKernel(name);
  if (!spec) throw new Error(`no kernel ${name}`);
  const a = await ablate(spec);
  if (a) file.ablations.push(a);
  await Deno.writeTextFile(`${outDir}/ablation.json`, JSON.stringify(file, null, 1) + "\n");
}
