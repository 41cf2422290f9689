/**
 * Device probe for the kernel ladder (lab: not part of the product). Validates (float64
 * reference) and times with GPU timestamps; cuBLAS in the same run when it is there. Imports
 * only lib/ (the GPU host has no package registry). lab/README.md says what each mode found.
 *
 *   deno run -A lab/probe_kernels.ts --out DIR [--quick] [--ladder] [MODE]
 *
 * MODE: none: the occupancy of the fast kernels (resident workgroups, counted by the kernels
 * themselves); --padding: the cost of a padding copy taken apart at 1000x3000x777; --odd: the
 * steps with edge strips on the odd shapes and their aligned neighbours, with and without
 * strips; --parts: each dispatch of a product alone (padding copies, tiles, edge strips);
 * --ablate: autotune validated, then timed with stages of its tile loop left out. --ladder adds
 * every step at 4096 first; --occupancy-of a,b,...: only the resident workgroups of the kernels
 * named (at their defaults). Writes DIR/probe.json (every result) and DIR/occupancy.json, and
 * prints a table last. --quick uses small sizes (a dry run on the software adapter).
 */
import { acquireGpu, compileWgsl, deviceSlug, loadKernelSource, readBuffer } from "../lib/gpu.ts";
import { type Shape, shapeLabel } from "../lib/matrix.ts";
import { openCublas } from "../lib/peers/cublas.ts";
import { findKernel, type KernelSpec, type Params } from "../lib/registry.ts";
import { BoundProblem, kernelParams, prepareKernel, runKernel } from "../lib/runner.ts";
import { randomMatrix } from "../lib/matrix.ts";
import { currentCommit } from "../lib/record.ts";
import { timePasses, type Timing } from "../lib/timing.ts";
import { dispatchTimes, probeRecord } from "./probe_record.ts";

const args = Deno.args;
const outDir = args.includes("--out") ? args[args.indexOf("--out") + 1] : "/tmp/probe";
const quick = args.includes("--quick");
await Deno.mkdir(outDir, { recursive: true });

const gpu = await acquireGpu();
const slug = deviceSlug(gpu.summary);
const started = new Date().toISOString();
// On the GPU host (no .git) pass GEMM_COMMIT, as for the bench.
const commit = await currentCommit();
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
const { rows, save } = probeRecord<Row>(`${outDir}/probe.json`, {
  device: gpu.summary,
  started,
  commit,
});

const kernel = (name: string): KernelSpec => {
  const spec = findKernel(name);
  if (!spec) throw new Error(`no kernel ${name}`);
  return spec;
};
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
const rectOdd = oddPairs[2][0];
/** The rectangular odd shape with N rounded to 4: no padding at all (isolates its cost). */
const rectNoPad = { ...rectOdd, n: Math.ceil(rectOdd.n / 4) * 4 };

async function probe(
  spec: KernelSpec | string,
  shape: Shape,
  params?: Params,
  label?: string,
  edgeStrips = true,
) {
  if (typeof spec === "string") spec = kernel(spec);
  label ??= spec.id;
  const name = label;
  const r = await runKernel(gpu, spec, shape, { params, budgetMs, checkRows: 8, edgeStrips });
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

/**
 * Counting resident workgroups: invocation 0 of each workgroup increments a counter when it
 * starts and decrements it when it ends; the largest value seen is how many workgroups the GPU
 * ran at once. With a grid of several waves the first wave fills every SM, so the count is the
 * occupancy limit (registers, workgroup memory, invocations) times the number of SMs.
 */
const ENTER = "if (tid == 0u) { atomicMax(&occupancy[1], atomicAdd(&occupancy[0], 1u) + 1u); }";
const LEAVE = "if (tid == 0u) { atomicSub(&occupancy[0], 1u); }";
const counterBinding = (group: number, binding: number) =>
  `@group(${group}) @binding(${binding}) var<storage, read_write> occupancy: array<atomic<u32>, 2>;\n`;

async function residentMax(
  code: string,
  constants: Params,
  bindings: GPUBuffer[],
  grid: [number, number, number],
): Promise<number> {
  const module = await compileWgsl(gpu, code, "occupancy probe");
  const pipeline = await gpu.device.createComputePipelineAsync({
    layout: "auto",
    compute: { module, entryPoint: "main", constants },
  });
  const counter = gpu.device.createBuffer({
    size: 16,
    usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC,
  });
  const bind = gpu.device.createBindGroup({
    layout: pipeline.getBindGroupLayout(0),
    entries: [...bindings, counter].map((buffer, binding) => ({ binding, resource: { buffer } })),
  });
  const enc = gpu.device.createCommandEncoder();
  const pass = enc.beginComputePass();
  pass.setPipeline(pipeline);
  pass.setBindGroup(0, bind);
  pass.dispatchWorkgroups(...grid);
  pass.end();
  gpu.device.queue.submit([enc.finish()]);
  const max = new Uint32Array(await readBuffer(gpu, counter, 16))[1];
  counter.destroy();
  return max;
}

/** Resident workgroups of a kernel that does nothing but spin: the thread limit alone. */
function calibrationOccupancy(wg: number): Promise<number> {
  const code = counterBinding(0, 0) + `
override WG: u32 = 64;
@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) tid: u32) {
  ${ENTER}
  var x = f32(tid);
  for (var i = 0u; i < 20000u; i++) { x = fma(x, 0.999, 0.5); }
  if (x == -1.0) { atomicAdd(&occupancy[1], 1u); }
  ${LEAVE}
}`;
  return residentMax(code, { WG: wg }, [], [8192, 1, 1]);
}

/** Resident workgroups of a registered kernel, instrumented at the start and end of `main`. */
async function kernelOccupancy(
  spec: KernelSpec,
  params: Params,
  shape: Shape,
): Promise<[number, number]> {
  const source = await loadKernelSource(spec.file);
  const open = /fn main\([^{]*\{/.exec(source)!;
  const at = open.index + open[0].length;
  const close = source.lastIndexOf("}");
  const code = source.slice(0, at) + `\n  ${ENTER}` + source.slice(at, close) + `  ${LEAVE}\n}\n` +
    counterBinding(0, 4);
  const al = spec.align(params);
  const up = (x: number, to: number) => Math.ceil(x / to) * to;
  const [m, k, n] = [up(shape.m, al.m), up(shape.k, al.k), up(shape.n, al.n)];
  const storage = (floats: number) =>
    gpu.device.createBuffer({ size: floats * 4, usage: GPUBufferUsage.STORAGE });
  const dims = gpu.device.createBuffer({
    size: 16,
    usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST,
  });
  gpu.device.queue.writeBuffer(dims, 0, new Uint32Array([m, k, n, shape.n]));
  const [a, b] = [storage(m * k), storage(k * n)];
  const buffers = [a, b, storage(shape.m * shape.n), dims];
  const grid = spec.dispatch({ m, k, n }, params);
  const concurrent = await residentMax(code, params, buffers, grid);
  new Set(buffers).forEach((x) => x.destroy());
  return [concurrent, grid[0] * grid[1] * grid[2]];
}

/** GPU time of passes recorded by `encode`, in ms (median of timestamped passes). */
async function passMs(label: string, encode: (pass: GPUComputePassEncoder) => void) {
  recordPass(label, await timePasses(gpu, encode, { budgetMs }));
}

/** Print and keep a time-only row (a pass timed without its product being checked). */
function recordPass(label: string, t: Timing) {
  console.log(
    `${label.padEnd(40)} ${(t.medianMs * 1000).toFixed(1).padStart(8)} us ` +
      `(min ${(t.minMs * 1000).toFixed(1)}, max ${(t.maxMs * 1000).toFixed(1)}, ${t.reps} passes)`,
  );
  rows.push({
    label,
    kernel: "padding",
    shape: "-",
    medianMs: t.medianMs,
    relErr: 0,
    validated: false,
  });
  save();
}

const FLAT_COPY = `
struct Copy2d { srcRows: u32, srcCols: u32, dstRows: u32, dstCols: u32 }
@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@group(0) @binding(2) var<uniform> cp: Copy2d;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) n: vec3<u32>) {
  let i = gid.y * n.x * 256u + gid.x;
  if (i >= cp.dstRows * cp.dstCols) { return; }
  let row = i / cp.dstCols;
  let col = i - row * cp.dstCols;
  var v = 0u;
  if (row < cp.srcRows && col < cp.srcCols) { v = src[row * cp.srcCols + col]; }
  dst[i] = v;
}
@compute @workgroup_size(64)
fn empty() {}
`;

async function paddingCosts(shape: Shape) {
  const spec = kernel("autotune");
  const params = kernelParams(gpu, spec);
  const gemm = await prepareKernel(gpu, spec, params);
  const np = Math.ceil(shape.n / 4) * 4;
  const storage = (floats: number) =>
    gpu.device.createBuffer({ size: floats * 4, usage: GPUBufferUsage.STORAGE });
  const uniformOf = (words: number[]) => {
    const b = gpu.device.createBuffer({
      size: 16,
      usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST,
    });
    gpu.device.queue.writeBuffer(b, 0, new Uint32Array(words));
    return b;
  };
  const [a, b, bPadded, c] = [
    storage(shape.m * shape.k),
    storage(shape.k * shape.n),
    storage(shape.k * np),
    storage(shape.m * shape.n),
  ];
  const bindAll = (pipeline: GPUComputePipeline, buffers: GPUBuffer[]) =>
    gpu.device.createBindGroup({
      layout: pipeline.getBindGroupLayout(0),
      entries: buffers.map((buffer, binding) => ({ binding, resource: { buffer } })),
    });
  const gemmBind = bindAll(gemm.pipeline, [
    a,
    bPadded,
    c,
    uniformOf([shape.m, shape.k, np, shape.n]),
  ]);
  const gemmGrid = spec.dispatch({ ...shape, n: np }, params);
  const util = await compileWgsl(gpu, await loadKernelSource("util.wgsl"), "util.wgsl");
  const flat = await compileWgsl(gpu, FLAT_COPY, "flat copy");
  const pipe = (module: GPUShaderModule, entryPoint: string) =>
    gpu.device.createComputePipeline({ layout: "auto", compute: { module, entryPoint } });
  const copy2d = pipe(util, "copy2d");
  const copyFlat = pipe(flat, "main");
  const empty = pipe(flat, "empty");
  const copyArgs = uniformOf([shape.k, shape.n, shape.k, np]);
  const copy2dBind = bindAll(copy2d, [b, bPadded, copyArgs]);
  const spare = storage(shape.k * np);
  const copySpareBind = bindAll(copy2d, [b, spare, copyArgs]);
  const copyFlatBind = bindAll(copyFlat, [b, bPadded, copyArgs]);
  const flatGroups = Math.ceil(shape.k * np / 256);
  const flatGrid: [number, number] = [Math.min(flatGroups, 32768), Math.ceil(flatGroups / 32768)];
  type Step = (pass: GPUComputePassEncoder) => void;
  const step = (p: GPUComputePipeline, g: GPUBindGroup, grid: number[]): Step => (pass) => {
    pass.setPipeline(p);
    pass.setBindGroup(0, g);
    pass.dispatchWorkgroups(grid[0], grid[1] ?? 1, grid[2] ?? 1);
  };
  const runGemm = step(gemm.pipeline, gemmBind, gemmGrid);
  const runCopy2d = step(copy2d, copy2dBind, [Math.ceil(np / 16), Math.ceil(shape.k / 16)]);
  const runFlat = step(copyFlat, copyFlatBind, flatGrid);
  const runCopySpare = step(copy2d, copySpareBind, [Math.ceil(np / 16), Math.ceil(shape.k / 16)]);
  const runEmpty: Step = (pass) => {
    pass.setPipeline(empty);
    pass.dispatchWorkgroups(1);
  };
  const both = (...steps: Step[]): Step => (pass) => steps.forEach((s) => s(pass));
  const tag = `${shapeLabel(shape)}, B to ${np}`;
  console.log(`padding costs at ${tag}, 11 ${JSON.stringify(params)}`);
  await passMs("11 alone (B already padded)", runGemm);
  await passMs("empty dispatch alone", runEmpty);
  await passMs("empty dispatch + 11", both(runEmpty, runGemm));
  await passMs("copy2d (16x16 groups) alone", runCopy2d);
  await passMs("copy2d + 11", both(runCopy2d, runGemm));
  await passMs("flat copy (256, 1D) alone", runFlat);
  await passMs("flat copy + 11", both(runFlat, runGemm));
  await passMs("11 + 11", both(runGemm, runGemm));
  // The same copy into a buffer 11 does not read: no barrier, but the same traffic through L2.
  await passMs("copy2d to a spare buffer + 11", both(runCopySpare, runGemm));
}

const cublas = quick ? "skipped (--quick)" : openCublas();
async function probeCublas(shape: Shape) {
  if (typeof cublas === "string") return;
  try {
    const r = await cublas.run(shape, { budgetMs: 300 });
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
for (const shape of args.includes("--ablate") ? [square(big)] : distinct) {
  await probeCublas(shape);
}

// 0. (--ladder) every step at 4096.
if (args.includes("--ladder")) {
  for (
    const id of [
      "naive",
      "coalesce",
      "tiled",
      "blocktile_1d",
      "blocktile_2d",
      "blocktile_2d_local_array",
      "vectorize",
      "bank_conflicts",
      "subgroup_tiling",
      "double_buffer",
      "f16",
      "f16_storage",
    ]
  ) await probe(id, square(big));
}

// --padding: what a padding copy costs inside the timed pass, taken apart at 1000x3000x777
// (B padded to 780 columns): the copies alone, an empty dispatch, and each before 11.
if (args.includes("--padding")) {
  await paddingCosts(quick ? { m: 100, k: 300, n: 77 } : rectOdd);
  Deno.exit(0);
}

// --odd: steps 06..11 on the odd shapes and their aligned neighbours, and (round 4) with the
// edge strips switched off where they apply: 4097 (one row and column past the tiles) and a
// remainder of 8, the widest a strip takes.
if (args.includes("--odd")) {
  const ids = ["blocktile_2d", "vectorize", "bank_conflicts", "subgroup_tiling"];
  const eight = square(big + 8);
  const wanted = new Set([square(big), ...oddPairs.flat()].map(shapeLabel));
  const oddShapes = distinct.filter((s) => wanted.has(shapeLabel(s)));
  for (const id of [...ids, "double_buffer", "autotune"]) {
    for (const shape of oddShapes) await probe(id, shape);
    await probe(id, square(big + 1), undefined, `${id} no strips`, false);
    if (id === "bank_conflicts" || id === "double_buffer") {
      await probe(id, eight);
      await probe(id, eight, undefined, `${id} no strips`, false);
    }
  }
}

/** GPU time of each dispatch of one product alone, then of all of them (`--parts`). */
async function stepTimes(id: string, shape: Shape) {
  const spec = kernel(id);
  const prepared = await prepareKernel(gpu, spec, kernelParams(gpu, spec, undefined, shape));
  const problem = await BoundProblem.random(gpu, prepared, shape);
  console.log(`steps of ${id} at ${shapeLabel(shape)}: ${problem.dispatchLabels.join(", ")}`);
  for (const { label, all, timing } of await dispatchTimes(gpu, problem, budgetMs)) {
    recordPass(`${id} ${shapeLabel(shape)} ${all ? "all steps" : `${label} alone`}`, timing);
  }
  problem.destroy();
}
/** The runner's copy before round 4 (copy2d, one 4-byte store per invocation) against `pad`. */
async function copyTimes(rows: number, cols: number, to: number) {
  const util = await compileWgsl(gpu, await loadKernelSource("util.wgsl"), "util.wgsl");
  const storage = (floats: number) =>
    gpu.device.createBuffer({ size: floats * 4, usage: GPUBufferUsage.STORAGE });
  const [src, dst] = [storage(rows * cols), storage(rows * to)];
  const args = gpu.device.createBuffer({
    size: 16,
    usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST,
  });
  gpu.device.queue.writeBuffer(args, 0, new Uint32Array([rows, cols, rows, to]));
  for (
    const [entry, dstBinding, grid] of [
      ["copy2d", 1, [Math.ceil(to / 16), Math.ceil(rows / 16)]],
      ["pad", 5, [Math.ceil(to / 256), Math.ceil(rows / 4)]],
    ] as const
  ) {
    const pipeline = gpu.device.createComputePipeline({
      layout: "auto",
      compute: { module: util, entryPoint: entry },
    });
    const bind = gpu.device.createBindGroup({
      layout: pipeline.getBindGroupLayout(0),
      entries: [
        { binding: 0, resource: { buffer: src } },
        { binding: dstBinding, resource: { buffer: dst } },
        { binding: 2, resource: { buffer: args } },
      ],
    });
    await passMs(`${entry} ${rows}x${cols} to ${to} columns`, (pass) => {
      pass.setPipeline(pipeline);
      pass.setBindGroup(0, bind);
      pass.dispatchWorkgroups(grid[0], grid[1]);
    });
  }
  [src, dst, args].forEach((b) => b.destroy());
}

if (args.includes("--parts")) {
  await copyTimes(big + 1, big + 1, big + 32);
  for (const id of ["bank_conflicts", "double_buffer"]) {
    await stepTimes(id, square(big + 1));
    await stepTimes(id, square(big));
  }
  await stepTimes("double_buffer", oddPairs[2][0]);
}

/**
 * 11 with stages of its tile loop left out (`--ablate`, round 6), to place the time inside the
 * kernel: bit 1 fills the staged registers from the tile index instead of loading A and B; bit 2
 * drops the loads and the stores to workgroup memory (nothing staged); bit 4 drops the barrier
 * of the tile loop; bit 8 reads each tile's fragments once instead of per k step (the loads
 * become loop-invariant, so the multiply-adds run from registers). Only bit 0 computes C.
 */
const ABLATION_PARTS: [number, string][] = [
  [0, "whole kernel"],
  [1, "no global loads"],
  [4, "no barrier"],
  [1 | 4, "no global loads, no barrier"],
  [2, "nothing staged"],
  [2 | 4, "nothing staged, no barrier"],
  [2 | 4 | 8, "multiply-adds from registers only"],
];

async function ablatedSource(): Promise<string> {
  const file = kernel("autotune").file;
  let code = await loadKernelSource(file);
  const edit = (from: string, to: string) => {
    if (!code.includes(from)) throw new Error(`ablation: "${from}" not in ${file}`);
    code = code.replace(from, to);
  };
  code = "override ABLATE: u32 = 0u;\n" + code;
  edit(
    "fn fetch(tid: u32, m0: u32, n0: u32, k0: u32) -> Staged {",
    `fn fetch(tid: u32, m0: u32, n0: u32, k0: u32) -> Staged {
  if ((ABLATE & 1u) != 0u) {
    let v = vec4<f32>(f32(k0 + tid));
    return Staged(v, v, v, v, v, v, v, v);
  }`,
  );
  edit(
    "fn stash(tid: u32, buf: u32, s: Staged) {",
    "fn stash(tid: u32, buf: u32, s: Staged) {\n  if ((ABLATE & 2u) != 0u) { return; }",
  );
  const barrier = "    workgroupBarrier();\n  }\n  let r0";
  edit(barrier, "    if ((ABLATE & 4u) == 0u) { workgroupBarrier(); }\n  }\n  let r0");
  edit(
    "let a0 = As[aBuf + p * AS + a0At];",
    "let q = select(p, 0u, (ABLATE & 8u) != 0u);\n          let a0 = As[aBuf + q * AS + a0At];",
  );
  edit("let a1 = As[aBuf + p * AS + a1At];", "let a1 = As[aBuf + q * AS + a1At];");
  edit("let bAt = bBuf + p * (BN / 4u) + b0At;", "let bAt = bBuf + q * (BN / 4u) + b0At;");
  return code;
}

async function ablations(configs: [string, Params][], shape: Shape) {
  const spec = kernel("autotune");
  const module = await compileWgsl(gpu, await ablatedSource(), "11 ablated");
  const a = randomMatrix(shape.m, shape.k);
  const b = randomMatrix(shape.k, shape.n);
  for (const [name, base] of configs) {
    const params = kernelParams(gpu, spec, base, shape);
    for (const [bits, what] of ABLATION_PARTS) {
      const pipeline = await gpu.device.createComputePipelineAsync({
        layout: "auto",
        compute: { module, entryPoint: "main", constants: { ...params, ABLATE: bits } },
      });
      const problem = await BoundProblem.create(gpu, { spec, params, pipeline }, shape, a, b);
      await passMs(`ablate ${name}: ${what}`, (p) => problem.encode(p));
      rows[rows.length - 1].kernel = "ablation";
      rows[rows.length - 1].shape = shapeLabel(shape);
      rows[rows.length - 1].params = { ...params, ABLATE: bits };
      rows[rows.length - 1].gflops = 2 * shape.m * shape.n * shape.k /
        (rows[rows.length - 1].medianMs! * 1e6);
      save(); // passMs saved the row before these fields: the last row would keep its placeholders
      problem.destroy();
    }
  }
}

const occupancy: { label: string; params: Params; concurrent: number; workgroups: number }[] = [];
const occupancyOf = args.includes("--occupancy-of")
  ? args[args.indexOf("--occupancy-of") + 1].split(",")
  : undefined;
if (occupancyOf) {
  // Only the resident workgroups of the kernels named, at their defaults and the big square.
  for (const name of occupancyOf) {
    const spec = kernel(name);
    const params = kernelParams(gpu, spec, undefined, square(big));
    const [concurrent, workgroups] = await kernelOccupancy(spec, params, square(big));
    occupancy.push({ label: spec.id, params, concurrent, workgroups });
    console.error(`occupancy ${spec.id}: ${concurrent} resident of ${workgroups}`);
  }
  Deno.writeTextFileSync(
    `${outDir}/occupancy.json`,
    JSON.stringify({ device: gpu.summary, started, commit, occupancy }, null, 1),
  );
} else if (args.includes("--ablate")) {
  const shape = square(big);
  const fastest = { BM: 128, BN: 256, BK: 16, PAD: 0, TN: 16, GROUP_M: 8 };
  const square8 = { BM: 128, BN: 128, BK: 8, PAD: 0, TN: 8, GROUP_M: 8 };
  const spec = kernel("autotune");
  // Round 6: each configuration validated whole, then timed with stages of its tile loop left out.
  const candidates: [string, Params][] = [
    ["128x256x16 TN16", fastest],
    ["128x128x8 TN8", square8],
  ];
  for (const [label, params] of candidates) await probe(spec, shape, params, `11 ${label}`);
  await ablations(candidates, shape);
  for (const [label, params] of candidates) {
    try {
      const full = kernelParams(gpu, spec, params, shape);
      const [concurrent, workgroups] = await kernelOccupancy(spec, full, shape);
      occupancy.push({ label, params: full, concurrent, workgroups });
    } catch (e) {
      console.error(`occupancy ${label} failed: ${(e as Error).message}`);
    }
  }
} else if (!args.includes("--odd") && !args.includes("--parts")) {
  const tuned = kernel("autotune");
  const tunedParams = kernelParams(gpu, tuned);
  // Occupancy: workgroups resident at once, counted by the kernels themselves. Two empty
  // kernels calibrate the count (an H100/H200 SM holds 2048 invocations: 2 workgroups of 1024
  // or 16 of 128 per SM).

  for (const wg of [1024, 128]) {
    const concurrent = await calibrationOccupancy(wg);
    occupancy.push({
      label: `empty, ${wg} invocations`,
      params: { WG: wg },
      concurrent,
      workgroups: 0,
    });
  }
  const occupancyConfigs: [string, KernelSpec, Params][] = [
    ["10 default 128x128x8", kernel("double_buffer"), kernel("double_buffer").params],
    ["10 128x128x16 (cliff)", kernel("double_buffer"), {
      ...kernel("double_buffer").params,
      BK: 16,
    }],
    ["11 tuned", tuned, tunedParams],
  ];
  for (const [label, spec, params] of occupancyConfigs) {
    try {
      const [concurrent, workgroups] = await kernelOccupancy(spec, params, square(big));
      occupancy.push({ label, params, concurrent, workgroups });
    } catch (e) {
      console.error(`occupancy ${label} failed: ${(e as Error).message}`);
    }
  }
  for (const o of occupancy) console.error(`occupancy ${o.label}: ${o.concurrent} resident`);
  Deno.writeTextFileSync(
    `${outDir}/occupancy.json`,
    JSON.stringify({ device: gpu.summary, started, commit, occupancy }, null, 1),
  );
}

// The table last, so the tail of the output carries it.
const ref = new Map(rows.filter((r) => r.kernel === "cublas").map((r) => [r.shape, r.gflops]));
console.log(`\n${gpu.summary.description} ${started}`);
console.log("label                              shape            GFLOP/s  xcuBLAS  relErr");
for (const r of rows) {
  const c = ref.get(r.shape);
  console.log(
    `${r.label.padEnd(34)} ${r.shape.padEnd(14)} ` +
      (r.kernel === "padding" || r.kernel === "ablation"
        ? `${(r.medianMs! * 1000).toFixed(1).padStart(8)} us (time only` +
          (r.gflops ? `, ${r.gflops.toFixed(0)} GFLOP/s equivalent)` : ")")
        : r.validated
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
for (const o of occupancy) {
  console.log(`occupancy ${o.label.padEnd(28)} ${o.concurrent} resident of ${o.workgroups || "-"}`);
}
