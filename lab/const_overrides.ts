/**
 * Do WGSL override constants cost instructions on the GPU host (lab: not part of the product)?
 * The ladder's kernels take their tile parameters and switches as `override` constants, which the
 * pipeline fixes at creation. Each kernel named is run twice at 4096 as the bench runs it: as
 * written, and with every `override NAME: u32` rewritten as a `const` holding the value the
 * pipeline would have given it (`constSource`); 09's kernels also with the `WARP_TILES` switch
 * taken out of the text (`switchRemoved`). All are validated against the float64 reference
 * and timed with GPU timestamps, alternately, twice each. Writes DIR/const.json; with the driver's
 * shader cache kept (see lab/driver/sass.ts), each program's machine code can be counted after.
 *
 *   deno run -A lab/const_overrides.ts --out DIR [--quick] [--kernels a,b,...]
 */
import { compileWgsl, loadKernelSource } from "../lib/gpu.ts";
import type { Shape } from "../lib/matrix.ts";
import { validateThenTime } from "../lib/measure.ts";
import { findKernel, type KernelSpec, numericsOf, type Params } from "../lib/registry.ts";
import { BoundProblem, kernelParams, prepareKernel } from "../lib/runner.ts";
import { timePasses } from "../lib/timing.ts";
import { startProbe } from "./probe_record.ts";

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

/**
 * 09's kernel with its `WARP_TILES` switch taken out of the text: each `select(flat, tiles,
 * warpTiles)` replaced by the argument `warpTiles` picks (`tiles`: the step; else 08's mapping).
 */
export function switchRemoved(code: string, tiles: boolean): string {
  const call = "select(";
  let out = code.replace(/^\s*let warpTiles = WARP_TILES == 1u;\n/m, "");
  let at = out.indexOf(call);
  let replaced = 0;
  while (at >= 0) {
    // The call's arguments at depth 0, split at their commas.
    let depth = 0, start = at + call.length, end = start;
    const parts: string[] = [];
    for (let i = start; i < out.length; i++) {
      const ch = out[i];
      if (ch === "(") depth++;
      else if (ch === ")" && depth-- === 0) {
        parts.push(out.slice(start, i));
        end = i + 1;
        break;
      } else if (ch === "," && depth === 0) {
        parts.push(out.slice(start, i));
        start = i + 1;
      }
    }
    if (parts.at(-1)!.trim() === "") parts.pop(); // a trailing comma
    if (parts.length === 3 && parts[2].trim() === "warpTiles") {
      out = out.slice(0, at) + `(${(tiles ? parts[1] : parts[0]).trim()})` + out.slice(end);
      replaced++;
    }
    at = out.indexOf(call, at + 1);
  }
  if (!replaced || /\bwarpTiles\b/.test(out)) throw new Error("the switch was not taken out whole");
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
  const { outDir, quick, gpu, started, commit } = await startProbe("/tmp/const");
  const n = quick ? 256 : 4096;
  const shape: Shape = { m: n, k: n, n };

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
    if (name.startsWith("subgroup_tiling")) {
      const code = switchRemoved(await loadKernelSource(spec.file), (params.WARP_TILES ?? 1) === 1);
      const noSwitch = await gpu.device.createComputePipelineAsync({
        label: `${spec.id} without the switch`,
        layout: "auto",
        compute: {
          module: await compileWgsl(gpu, code, `${spec.file} without the switch`),
          entryPoint: spec.entryPoint,
          constants: Object.fromEntries(Object.entries(params).filter(([k]) => k !== "WARP_TILES")),
        },
      });
      variants.push(["without the switch", { spec, params, pipeline: noSwitch }]);
    }
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
      JSON.stringify(
        { device: gpu.summary.description, started, commit, shape: n, rows },
        null,
        1,
      ) +
        "\n",
    );
  }
}
