/**
 * Planted bugs: each mutation below changes one thing in a kernel's text (a copied WGSL file, a
 * generated kernel, the edge-strip helper) the way a real mistake would, and the validation on
 * the kernel's own tail shapes must catch it. A mutation that no longer changes the text (the
 * kernel was rewritten) fails the test instead of passing silently.
 */
import assert from "node:assert/strict";
import { acquireGpu, loadKernelSource, withKernelSource } from "../lib/gpu.ts";
import { type Shape, shapeLabel } from "../lib/matrix.ts";
import { findKernel, type KernelSpec } from "../lib/registry.ts";
import { EDGE_STRIPS_FILE } from "../lib/steps/launch.ts";
import { tailShapes } from "../lib/steps/tails.ts";
import { runKernel } from "../lib/runner.ts";

const gpuTest = { sanitizeResources: false, sanitizeOps: false };
const gpu = await acquireGpu();

/** One planted bug: what it does to the text, as a regular expression and its replacement. */
interface Mutation {
  name: string;
  find: RegExp;
  replace: string;
  /** Kernels it applies to; the edge-strip mutation applies to the helper file instead. */
  kernels: string[];
}

const MUTATIONS: Mutation[] = [
  {
    name: "sign flip in one accumulator",
    find: /c00 \+= /,
    replace: "c00 -= ",
    kernels: ["vectorize", "generated"],
  },
  {
    name: "+1e-3 bias on every output",
    find: /fn store\(row: u32, col: u32, v: vec4<f32>\) \{/,
    replace: "fn store(row: u32, col: u32, exact: vec4<f32>) {\n  let v = exact + vec4<f32>(1e-3);",
    kernels: ["vectorize", "generated"],
  },
  {
    name: "partial last k tile dropped",
    find: /let tiles = \(dims\.K \+ [^)]*\) \/ ([^;]+);/,
    replace: "let tiles = dims.K / $1;",
    kernels: ["vectorize", "generated"],
  },
  {
    name: "last partial vec4 of a row not stored",
    find: /if \(col < dims\.ldc\) \{ C\[at\] = v\.x; \}/,
    replace: "",
    kernels: ["vectorize", "generated"],
  },
  {
    name: "barrier missing at the end of a k tile",
    find: /workgroupBarrier\(\);(?![\s\S]*workgroupBarrier\(\);)/,
    replace: "",
    kernels: ["vectorize", "generated"],
  },
];

/** The edge strip's last row left unwritten (a bottom strip one row short). */
const DROPPED_STRIP_ROW: Mutation = {
  name: "last row of the bottom edge strip dropped",
  find: /if \(r < s\.M && col < s\.N\) \{/,
  replace: "if (r + 1u < s.M && col < s.N) {",
  kernels: ["vectorize", "generated"],
};

function mutate(text: string, m: Mutation): string {
  const out = text.replace(m.find, m.replace);
  assert.notEqual(out, text, `"${m.name}" no longer changes the text: update the mutation`);
  return out;
}

/** The spec with its kernel text mutated (a generated kernel's output, or its WGSL file). */
async function run(spec: KernelSpec, shape: Shape, m?: Mutation) {
  if (m && spec.generate) {
    const generate = spec.generate;
    const mutated = { ...spec, generate: (p: Record<string, number>) => mutate(generate(p), m) };
    return await runKernel(gpu, mutated, shape, { skipTiming: true });
  }
  if (m) {
    const text = mutate(await loadKernelSource(spec.file), m);
    return await withKernelSource(
      spec.file,
      text,
      () => runKernel(gpu, spec, shape, { skipTiming: true }),
    );
  }
  return await runKernel(gpu, spec, shape, { skipTiming: true });
}

/** The tail shapes on which the mutated kernel failed validation. */
async function caughtOn(spec: KernelSpec, m: Mutation): Promise<string[]> {
  const caught: string[] = [];
  for (const { shape, why } of tailShapes(spec, spec.params)) {
    const r = await run(spec, shape, m);
    if (!r.validated) {
      assert.equal(r.errorKind, "wrong-result", `${spec.id} "${m.name}": ${r.error}`);
      caught.push(`${shapeLabel(shape)} (${why})`);
    }
  }
  return caught;
}

for (const m of MUTATIONS) {
  for (const name of m.kernels) {
    Deno.test(`planted bug caught: ${name}, ${m.name}`, gpuTest, async () => {
      const spec = findKernel(name)!;
      const caught = await caughtOn(spec, m);
      assert.ok(caught.length > 0, `${spec.id} with "${m.name}" passed every tail shape`);
      console.log(`${spec.id} "${m.name}" caught on ${caught.join("; ")}`);
    });
  }
}

Deno.test(`planted bug caught: edge strips, ${DROPPED_STRIP_ROW.name}`, gpuTest, async () => {
  const text = mutate(await loadKernelSource(EDGE_STRIPS_FILE), DROPPED_STRIP_ROW);
  for (const name of DROPPED_STRIP_ROW.kernels) {
    const spec = findKernel(name)!;
    const caught = await withKernelSource(EDGE_STRIPS_FILE, text, async () => {
      const shapes = tailShapes(spec, spec.params).filter(({ shape }) =>
        shape.m % spec.params.BM === 1
      );
      assert.ok(shapes.length > 0, `${spec.id}: no tail shape reaches a bottom edge strip`);
      const failed = [];
      for (const { shape } of shapes) {
        const r = await runKernel(gpu, spec, shape, { skipTiming: true });
        assert.ok(r.edgeStrips, `${spec.id} at ${shapeLabel(shape)}: no edge strips`);
        if (!r.validated) failed.push(shapeLabel(shape));
      }
      return failed;
    });
    assert.ok(caught.length > 0, `${spec.id}: a dropped strip row passed`);
  }
  // The stand-in is gone: the real kernel passes again.
  const spec = findKernel("vectorize")!;
  const r = await runKernel(gpu, spec, { m: spec.params.BM + 1, k: 20, n: 70 }, {
    skipTiming: true,
  });
  assert.ok(r.validated, r.error);
});

// The bias is far below what a test on small products would notice by eye: it must also fail
// the validation the bench runs at the sizes it runs on a GPU (sampled rows plus the projection).
Deno.test(
  "planted bug caught: +1e-3 bias fails the bench's validation at 1024 and 2048",
  gpuTest,
  async () => {
    const spec = findKernel("vectorize")!;
    const bias = MUTATIONS[1];
    for (const n of [1024, 2048]) {
      const shape = { m: n, k: n, n };
      const r = await run(spec, shape, bias);
      assert.equal(r.validated, false, `biased ${spec.id} passed at ${n}`);
      assert.ok(r.errRatios!.norm > 2, `norm ratio ${r.errRatios!.norm} at ${n}`);
      const correct = await run(spec, shape);
      assert.ok(correct.validated, `${spec.id} at ${n}: ${correct.error}`);
    }
  },
);
