/**
 * Adding a step takes one folder and one registry line: a throwaway step written to a temporary
 * kernels/NN_name/ folder (its step.ts and kernel.wgsl, nothing else) and registered is run and
 * validated by the bench, appears in every list the tests derive from the registry, and the
 * notebook helpers (its concept figure, its diff against the step it builds on, its knob) work
 * for it by name.
 */
import assert from "node:assert/strict";
import { runBench } from "../lib/bench.ts";
import { parseBenchArgs } from "../lib/bench_args.ts";
import { acquireGpu } from "../lib/gpu.ts";
import { conceptFigure, conceptSteps } from "../lib/notebook/concept.ts";
import { changeSources } from "../lib/notebook/diff.ts";
import { KERNELS, registerStep } from "../lib/registry.ts";
import { knobPoints } from "../lib/search.ts";

const lib = new URL("../lib/", import.meta.url).href;
const naiveWgsl = new URL("../kernels/02_naive/kernel.wgsl", import.meta.url);

/** A step's folder as a reader would write it: step.ts and its WGSL, 02's kernel with x on columns. */
async function writeStep(root: string): Promise<string> {
  const folder = `${root}/kernels/90_throwaway`;
  await Deno.mkdir(folder, { recursive: true });
  const wgsl = (await Deno.readTextFile(naiveWgsl)).replace(
    /let row = gid\.x;\s*let col = gid\.y;/,
    "let row = gid.y;\n  let col = gid.x;",
  );
  assert.notEqual(wgsl, await Deno.readTextFile(naiveWgsl), "the throwaway kernel differs");
  await Deno.writeTextFile(`${folder}/kernel.wgsl`, wgsl);
  await Deno.writeTextFile(
    `${folder}/step.ts`,
    `import { ceilDiv, naiveModel } from "${lib}steps/launch.ts";
import { F32_NUMERICS } from "${lib}accuracy.ts";
import { type KernelSpec, stepLayout } from "${lib}steps/spec.ts";
import { oneElementFigure } from "${lib}figures/access.ts";

export const step: KernelSpec = {
  ...stepLayout(import.meta.url),
  // Outside the project's kernels/ folder, the WGSL is named by its URL.
  file: new URL("kernel.wgsl", import.meta.url).href,
  title: "Throwaway",
  idea: "02 with x on columns, to prove that a step is a folder and a registry line.",
  entryPoint: "main",
  params: { WG: 8 },
  workgroupSize: (p) => [p.WG, p.WG, 1],
  dispatch: (s, p) => [ceilDiv(s.n, p.WG), ceilDiv(s.m, p.WG), 1],
  workgroupStorageBytes: () => 0,
  align: () => ({ m: 1, n: 1, k: 1 }),
  model: naiveModel,
  requiredFeatures: [],
  precision: "f32",
  numerics: F32_NUMERICS,
  figure: (ctx) => oneElementFigure(ctx, "x_picks_column"),
  change: { buildsOn: "naive", note: "x walks columns instead of rows." },
  knob: { name: "WG", why: "The workgroup's width.", points: [{ WG: 4 }, { WG: 8 }] },
};
`,
  );
  return `${folder}/step.ts`;
}

Deno.test("a throwaway step from a temporary folder is picked up by bench, tests and notebook helpers", async () => {
  const root = await Deno.makeTempDir();
  const { step } = await import(`file://${await writeStep(root)}`);
  const unregister = registerStep(step);
  try {
    assert.equal(step.id, "90_throwaway");
    assert.match(step.file, /^file:.*\/kernels\/90_throwaway\/kernel\.wgsl$/);
    // The lists tests and tools derive from the registry.
    assert.ok(KERNELS.filter((k) => !k.demo).map((k) => k.name).includes("throwaway"));
    assert.ok(conceptSteps().includes("throwaway"));
    assert.deepEqual(knobPoints(step).map((p) => p.label), ["WG=4", "WG=8"]);
    // The notebook helpers, by name.
    assert.match(conceptFigure("throwaway").svg, /^<svg/);
    const change = await changeSources("throwaway");
    assert.equal(change.previous?.name, "naive");
    assert.match(change.to.text, /let row = gid\.y;/);
    // The bench: selected by name, validated against the float64 reference, timed.
    const gpu = await acquireGpu();
    const out = `${root}/run.json`;
    const args = parseBenchArgs([
      "--kernels=throwaway",
      "--sizes=32",
      "--shape=33x17x9",
      "--no-peers",
      "--no-ceilings",
      "--no-cpu",
      "--out",
      out,
    ]);
    const { record, exitCode } = await runBench(args, { gpu, log: () => {} });
    assert.equal(exitCode, 0);
    assert.deepEqual(record.results.map((r) => [r.kernel, r.validated]), [
      ["90_throwaway", true],
      ["90_throwaway", true],
    ]);
    // Its name is taken while it is registered, and a number inside the ladder is refused.
    assert.throws(() => registerStep(step), /already registered/);
    assert.throws(() => registerStep({ ...step, name: "x", id: "03_x", number: 3 }), /after/);
  } finally {
    unregister();
    await Deno.remove(root, { recursive: true });
  }
  assert.ok(!KERNELS.some((k) => k.name === "throwaway"));
});
