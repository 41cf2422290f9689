/**
 * Every kernel text the project can emit, compiled by Chromium's WebGPU (Tint), not only by Deno's
 * naga: each step at its defaults and at every valid point of its search space, every plan step
 * 13 can pick (tiles, split K, matrix-vector, row-dot, dot, outer, short-K) over a spread of shapes
 * and devices, every configuration of its row-dot, outer and short-K kernels, and the helper and ceiling
 * kernels. Tint enforces rules naga skips (a barrier only in uniform control flow), so
 * a kernel counts as valid WGSL once Tint accepts it. Kernels with override constants also get a
 * pipeline (the constants checked) wherever they fit the adapter's limits.
 *
 * Chromium's SwiftShader has no shader-f16, and Tint refuses `enable f16` without it: the f16
 * kernels are checked with f16 written as f32 (the same text otherwise, so uniformity, barriers and
 * indexing are still checked); the f16 rules themselves are naga's to check here.
 */
import assert from "node:assert/strict";
import { spacePoints } from "../lib/steps/spec.ts";
import { loadKernelSource, namedDevice } from "../lib/gpu.ts";
import type { Shape } from "../lib/matrix.ts";
import { findKernel, KERNELS } from "../lib/registry.ts";
import { BANK_PATTERNS, bankKernel } from "../lib/banks.ts";
import { SHAPE_SUITE } from "../lib/suite.ts";
import { candidates } from "../kernels/13_shapes/plans.ts";
import { PLAN_DIRECT, PLAN_OUTER, PLAN_ROWDOT, shortkPlan } from "../kernels/13_shapes/launch.ts";
import { DIRECT_WIDTHS } from "../kernels/13_shapes/direct.ts";
import { ROWDOT_INVOCATIONS, ROWDOT_K_LANES } from "../kernels/13_shapes/rowdot.ts";
import { OUTER_COLUMNS, OUTER_ROWS, outerRowsPerWorkgroup } from "../kernels/13_shapes/outer.ts";
import { SHORTK_DEPTHS, SHORTK_ROWS, SHORTK_WIDTHS } from "../kernels/13_shapes/shortk.ts";
import { launchChromium, serveFolder } from "./browser.ts";

/** One kernel text to compile: its entry point and override constants when it has a pipeline. */
interface Emitted {
  name: string;
  code: string;
  /** For f16 kernels: the text with f16 written as f32 (see asF32). */
  f32Code?: string;
  /** A planted fault Tint must reject, with the words its message must have. */
  mustFail?: string;
  entryPoint?: string;
  constants?: Record<string, number>;
}

/** Shapes that make 13 pick each kind of plan: the suite, thin, deep, tiny and odd ones. */
const PLAN_SHAPES: Shape[] = [
  ...SHAPE_SUITE,
  { m: 1, k: 1, n: 1 },
  { m: 1, k: 4096, n: 1 },
  { m: 4096, k: 1, n: 4096 },
  { m: 7, k: 300, n: 5 },
  { m: 33, k: 8192, n: 33 },
  { m: 128, k: 131072, n: 128 },
  { m: 999, k: 999, n: 999 },
  { m: 3000, k: 64, n: 5000 },
  { m: 1, k: 8192, n: 1 },
  { m: 4096, k: 4096, n: 1 },
  { m: 1000, k: 512, n: 2 },
  { m: 300, k: 4099, n: 3 },
  { m: 8192, k: 8192, n: 8 },
  { m: 64, k: 2048, n: 16 },
  { m: 4096, k: 256, n: 32 },
  { m: 2048, k: 2, n: 100 },
  { m: 8192, k: 5, n: 8192 },
];

/** Every configuration of step 13's row-dot, outer and short-K kernels, as plans of the step. */
function familyPlans(): Record<string, number>[] {
  const out: Record<string, number>[] = [];
  for (const KL of ROWDOT_K_LANES) {
    for (const rows of [1, 2, 4, 8]) {
      for (const BN of [1, 2, 4, 8, 16, 32]) {
        out.push({ PLAN: PLAN_ROWDOT, SLICES: 2, KL, BM: (ROWDOT_INVOCATIONS / KL) * rows, BN });
      }
    }
  }
  for (const rows of OUTER_ROWS) {
    out.push({ PLAN: PLAN_OUTER, SLICES: 1, BM: outerRowsPerWorkgroup(rows), BN: OUTER_COLUMNS });
  }
  for (const BN of DIRECT_WIDTHS) out.push({ PLAN: PLAN_DIRECT, SLICES: 1, BM: 64 / BN, BN });
  for (const columns of SHORTK_WIDTHS) {
    for (const rows of SHORTK_ROWS) {
      for (const depth of SHORTK_DEPTHS) out.push(shortkPlan({ rows, depth, columns }));
    }
  }
  return out;
}

async function emittedKernels(): Promise<Emitted[]> {
  const out: Emitted[] = [];
  for (const spec of KERNELS) {
    const points = spec.space ? spacePoints(spec.space, spec.params) : [];
    const valid = [spec.params, ...points.filter((p) => !spec.invalid?.(p))];
    const file = spec.generate ? undefined : await loadKernelSource(spec.file);
    for (const p of valid) {
      out.push({
        name: `${spec.id} ${JSON.stringify(p)}`,
        code: spec.generate ? spec.generate(p) : file!,
        ...(spec.generate ? {} : { entryPoint: spec.entryPoint, constants: p }),
      });
    }
  }
  const shapes = findKernel("shapes")!;
  for (const dev of [namedDevice("NVIDIA H200", "nvidia"), namedDevice("Some GPU")]) {
    for (const s of PLAN_SHAPES) {
      for (const c of candidates(s, dev)) {
        const params = { ...shapes.params, ...c.params };
        if (shapes.invalid?.(params)) continue;
        out.push({
          name: `${shapes.id} ${c.kind} ${JSON.stringify(c.params)}`,
          code: shapes.generate!(params),
        });
      }
    }
  }
  for (const plan of familyPlans()) {
    const params = { ...shapes.params, ...plan };
    if (shapes.invalid?.(params)) continue;
    out.push({ name: `${shapes.id} ${JSON.stringify(plan)}`, code: shapes.generate!(params) });
  }
  for (const [name, pattern] of Object.entries(BANK_PATTERNS)) {
    out.push({ name: `bank probe ${name}`, code: bankKernel(pattern, 64) });
  }
  for (const helper of ["util.wgsl", "edge_strips.wgsl", "ceiling_bandwidth.wgsl"]) {
    out.push({ name: helper, code: await loadKernelSource(helper) });
  }
  for (const helper of ["ceiling_fp32.wgsl", "ceiling_f16.wgsl"]) {
    out.push({ name: helper, code: await loadKernelSource(helper) });
  }
  // The control: a split-K plan whose tile loop is bounded by the module-scope slice bounds (as
  // the generator once wrote it) puts its barriers in non-uniform control flow; Tint must say so.
  const split = out.find((e) => /let tiles = \(sliceEnd - sliceBegin/.test(e.code))!;
  out.push({
    name: "control: split K bounded by var<private>",
    code: split.code.replace(/let tiles = \(sliceEnd - sliceBegin/, "let tiles = (kEnd - kBegin"),
    mustFail: "uniform",
  });
  for (const e of out) if (/^enable f16;/m.test(e.code)) e.f32Code = asF32(e.code);
  // One entry per distinct text and constants (step 13's first line only names the plan).
  const seen = new Set<string>();
  return out.filter((e) => {
    const key = `${e.code.replace(/^\/\/ Step 13, plan .*\n/, "")}\n${
      JSON.stringify(e.constants ?? {})
    }`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * An f16 kernel's text with f16 written as f32, for an adapter without shader-f16: `enable f16`
 * dropped, f16 types and h-suffixed literals made f32.
 */
function asF32(code: string): string {
  return code.replace(/^enable f16;\n/m, "")
    .replace(/\bf16\b/g, "f32")
    .replace(/\b(\d+(?:\.\d*)?(?:e[+-]?\d+)?)h\b/g, "$1");
}

/** The page's side: compile each kernel, then create its pipeline where it fits the limits. */
const PAGE_SCRIPT = `
window.compileAll = async () => {
  const list = await (await fetch("kernels.json")).json();
  const adapter = await navigator.gpu.requestAdapter();
  const features = [...adapter.features].filter((f) => ["shader-f16", "subgroups", "timestamp-query"].includes(f));
  const device = await adapter.requestDevice({ requiredFeatures: features });
  const f16 = features.includes("shader-f16");
  const results = [];
  for (const k of list) {
    const code = f16 || !k.f32Code ? k.code : k.f32Code;
    const module = device.createShaderModule({ code, label: k.name });
    const info = await module.getCompilationInfo();
    const errors = info.messages.filter((m) => m.type === "error")
      .map((m) => m.lineNum + ": " + m.message);
    let pipeline;
    if (!errors.length && k.entryPoint) {
      device.pushErrorScope("validation");
      await device.createComputePipelineAsync({
        layout: "auto",
        compute: { module, entryPoint: k.entryPoint, constants: k.constants },
      }).catch((e) => { pipeline = String(e.message ?? e); });
      const e = await device.popErrorScope();
      if (e) pipeline = e.message;
    }
    results.push({ name: k.name, errors, pipeline });
  }
  return { features, limits: {
    invocations: device.limits.maxComputeInvocationsPerWorkgroup,
    storage: device.limits.maxComputeWorkgroupStorageSize,
  }, results };
};
`;

Deno.test("Tint (Chromium's WGSL compiler) accepts every kernel text the project emits", async () => {
  const kernels = await emittedKernels();
  const dir = await Deno.makeTempDir({ prefix: "gemm-tint-" });
  await Deno.writeTextFile(`${dir}/kernels.json`, JSON.stringify(kernels));
  await Deno.writeTextFile(`${dir}/tint.js`, PAGE_SCRIPT);
  await Deno.writeTextFile(`${dir}/index.html`, '<script src="tint.js"></script>');
  const server = serveFolder(dir);
  const chromium = await launchChromium();
  try {
    await chromium.page.send("Page.enable");
    await chromium.page.open(`${server.url}/index.html`);
    const r = await chromium.page.eval<{
      features: string[];
      limits: { invocations: number; storage: number };
      results: { name: string; errors: string[]; pipeline?: string }[];
    }>("compileAll()");
    const control = kernels.findIndex((k) => k.mustFail);
    assert.match(r.results[control].errors.join("\n"), /uniform/, "the planted fault passed Tint");
    const rejected = r.results.filter((x, i) => x.errors.length && i !== control);
    assert.deepEqual(
      rejected.map((x) => `${x.name}: ${x.errors[0]}`),
      [],
      `Tint rejected ${rejected.length} of ${r.results.length} kernels`,
    );
    // A pipeline may fail only on the adapter's limits (checked by the runner before it runs).
    const failed = r.results.filter((x) => x.pipeline);
    const notLimits = failed.filter((x) => !/exceeds|limit|maximum/i.test(x.pipeline!));
    assert.deepEqual(notLimits.map((x) => `${x.name}: ${x.pipeline}`), []);
    const f16 = kernels.filter((k) => k.f32Code).length;
    console.log(
      `Tint compiled ${r.results.length} kernel texts (features: ${r.features.join(", ")}; ` +
        (r.features.includes("shader-f16") ? "" : `${f16} f16 kernels with f16 written as f32; `) +
        `${failed.length} pipelines beyond this adapter's limits of ${r.limits.invocations} ` +
        `invocations and ${r.limits.storage} bytes of workgroup memory)`,
    );
  } finally {
    await chromium.stop();
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
});
