/**
 * The error bound at GPU sizes: correct kernels against it up to 16384, and a +1e-3 bias planted
 * in 07's and 12's store against it up to 8192, each through the runner's validation (the one the
 * bench uses: sampled rows, every row projected). Prints one JSON line per run and writes them to
 * $OUT/planted.jsonl when OUT is set. Tests do the same from 64 to 2048 on the software adapter
 * (tests/mutations_test.ts, tests/accuracy_test.ts); this covers the sizes only a GPU reaches.
 *
 *   deno run -A lab/accuracy/planted.ts [--sizes 4096,8192,16384]
 */
import { acquireGpu, loadKernelSource, withKernelSource } from "../../lib/gpu.ts";
import { findKernel, type KernelSpec } from "../../lib/registry.ts";
import { runKernel } from "../../lib/runner.ts";

const BIAS = {
  find: /fn store\(row: u32, col: u32, v: vec4<f32>\) \{/,
  replace: "fn store(row: u32, col: u32, exact: vec4<f32>) {\n  let v = exact + vec4<f32>(1e-3);",
};

const sizesFlag = Deno.args.indexOf("--sizes");
const sizes = sizesFlag >= 0
  ? Deno.args[sizesFlag + 1].split(",").map(Number)
  : [4096, 8192, 16384];
const gpu = await acquireGpu();
const lines: string[] = [];

async function biased(spec: KernelSpec, shape: { m: number; k: number; n: number }) {
  if (spec.generate) {
    const generate = spec.generate;
    const planted = {
      ...spec,
      generate: (p: Record<string, number>) => generate(p).replace(BIAS.find, BIAS.replace),
    };
    return await runKernel(gpu, planted, shape, { skipTiming: true });
  }
  const text = (await loadKernelSource(spec.file)).replace(BIAS.find, BIAS.replace);
  return await withKernelSource(
    spec.file,
    text,
    () => runKernel(gpu, spec, shape, { skipTiming: true }),
  );
}

for (const n of sizes) {
  const shape = { m: n, k: n, n };
  for (const name of ["vectorize", "generated"]) {
    const spec = findKernel(name)!;
    for (const planted of [false, true]) {
      if (planted && n > 8192) continue;
      const t0 = performance.now();
      const r = planted
        ? await biased(spec, shape)
        : await runKernel(gpu, spec, shape, { skipTiming: true });
      const line = JSON.stringify({
        device: gpu.summary.description,
        kernel: spec.id,
        planted: planted ? "+1e-3 bias" : "none",
        n,
        validated: r.validated,
        relErr: r.relErr,
        errRatios: r.errRatios,
        error: r.error,
        seconds: Number(((performance.now() - t0) / 1000).toFixed(1)),
      });
      console.log(line);
      lines.push(line);
    }
  }
}
const out = Deno.env.get("OUT");
if (out) await Deno.writeTextFile(`${out}/planted.jsonl`, lines.join("\n") + "\n");
