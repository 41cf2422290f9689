/**
 * Do WGSL override constants cost instructions on the GPU host (lab: not part of the product)?
 * The ladder's kernels take their tile parameters and switches as `override` constants, which the
 * pipeline fixes at creation. Each kernel named is run twice at 4096 as the bench runs it: as
 * written, and with every `override NAME: u32` rewritten as a `const` holding the value the
 * pipeline would have given it (`constSource`). Both are validated against the float64 reference
 * and timed with GPU timestamps, alternately, twice each. Writes DIR/const.json; with the driver's
 * shader cache kept (see lab/driver/sass.ts), each program's machine code can be counted after.
 *
 *   deno run -A lab/const_overrides.ts --out DIR [--quick] [--kernels a,b,...]
 */
import { acquireGpu, compileWgsl, loadKernelSource } from "../lib/gpu.ts";
import type { Shape } from "../lib/matrix.ts";
import { validateThenTime } from "../lib/measure.ts";
import { findKernel, type KernelSpec, numericsOf, type Params } from "../lib/registry.ts";
import { BoundProblem, kernelParams, prepareKernel } from "../lib/runner.ts";
import { currentCommit } from "../lib/record.ts";
import { timePasses } from "../lib/timing.ts";

/**
 * The WGSL with each `override NAME: u32` made a `const`: the value `params` gives it, or its
 * default expression where `params` has none (derived sizes such as THREADS).
 */
export function constSource(code: string, params: Params): string {
  let overrides = 0;
  const out = code.replace(
    /^override\s+(\w+)\s*:\s*u32\s*(?:=\s*([^;]+))?;/gm,
    (_, name: string, fallback?: string) => {
      overrides++;
      const value = params[name] !== undefined ? `${params[name]}u` : fallback?.trim();
      if (value === undefined) throw new Error(`override ${name} has no value`);
      return `const ${name}: u32 = ${value};`;
    },
  );
  if (!overrides) throw new Error("no override constants to rewrite");
  if (/\boverride\b/.test(out.replace(/\/\/.*$/gm, ""))) {
    throw new Error("an override that is not a u32 was left");
  }
  return out;
}

const args = Deno.args;
const option = (name: string) => args.includes(name) ? args[args.indexOf(name) + 1] : undefined;
const KERNELS = [
  "tiled",
  "blocktile_2d",
  "vectorize",
  "bank_conflicts",
  "subgroup_tiling",
  "subgroup_tiling_flat",
  "double_buffer",
  "autotune",
];

if (import.meta.main) {
  const outDir = option("--out") ?? "/tmp/const";
  const n = args.includes("--quick") ? 256 : 4096;
  const shape: Shape = { m: n, k: n, n };
  await Deno.mkdir(outDir, { recursive: true });
  const gpu = await acquireGpu();
  const started = new Date().toISOString();
  const commit = await currentCommit();
  console.error(`device: ${gpu.summary.description}, ${started}, commit ${commit}`);

  /** One way of compiling a kernel, validated, then timed `rounds` times, alternating. */
  interface Variant {
    spec: KernelSpec;
    params: Params;
    pipeline: GPUComputePipeline;
    problem?: BoundProblem;
  }
  const rows: Record<string, unknown>[] = [];
  for (const name of option("--kernels")?.split(",") ?? KERNELS) {
    const spec = findKernel(name);
    if (!spec || spec.generate) throw new Error(`${name}: not a WGSL-file kernel`);
    const params = kernelParams(gpu, spec, undefined, shape);
    const written = (await prepareKernel(gpu, spec, params)).pipeline;
    const module = await compileWgsl(
      gpu,
      constSource(await loadKernelSource(spec.file), params),
      `${spec.file} const`,
    );
    const asConst = await gpu.device.createComputePipelineAsync({
      label: `${spec.id} const`,
      layout: "auto",
      compute: { module, entryPoint: spec.entryPoint },
    });
    const variants: [string, Variant][] = [
      ["override", { spec, params, pipeline: written }],
      ["const", { spec, params, pipeline: asConst }],
    ];
    const results = new Map<string, { relErr: number; validated: boolean; ms: number[] }>();
    for (const [how, v] of variants) {
      const r = await validateThenTime({ ...shape, relErr: NaN, validated: false }, {
        numerics: numericsOf(spec, params),
        label: `${name} (${how})`,
        compute: async (a, b) => {
          v.problem = await BoundProblem.create(gpu, v, shape, a, b);
          return await v.problem.compute();
        },
      });
      results.set(how, { relErr: r.relErr, validated: r.validated, ms: [] });
    }
    for (let round = 0; round < 2; round++) {
      for (const [how, v] of variants) {
        if (!results.get(how)!.validated) continue;
        const t = await timePasses(gpu, (pass) => v.problem!.encode(pass), { budgetMs: 300 });
        results.get(how)!.ms.push(t.medianMs);
      }
    }
    for (const [, v] of variants) v.problem?.destroy();
    const row = { kernel: name, params, ...Object.fromEntries(results) };
    rows.push(row);
    console.error(JSON.stringify(row));
    await Deno.writeTextFile(
      `${outDir}/const.json`,
      JSON.stringify({ device: gpu.summary.description, started, commit, shape: n, rows }, null, 1) +
        "\n",
    );
  }
}
