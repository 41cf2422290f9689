/**
 * The validated runner: prepare a kernel (limits, features, compile), upload fresh random
 * inputs, poison C, dispatch, read back, check against the float64 reference, and only then
 * time it with GPU timestamps. One structured result per kernel and shape.
 */
import { FeatureError, GemmError, LimitError } from "./errors.ts";
import {
  compileWgsl,
  type Gpu,
  kernelSourceVersion,
  loadKernelSource,
  readBuffer,
  scoped,
  uploadBuffer,
} from "./gpu.ts";
import { checkOperands, checkShape, freshSeed, randomMatrix, type Shape } from "./matrix.ts";
import { validateThenTime } from "./measure.ts";
import type { KernelResult } from "./record.ts";
import {
  EDGE_STRIPS_FILE,
  type EdgePlan,
  type LaunchPlan,
  launchPlan,
  type PaddingCopy,
} from "./steps/launch.ts";
import { type KernelSpec, numericsOf, type Params, spacePoints } from "./steps/spec.ts";
import { tunedParams, tuningFor } from "./tuning.ts";
import { timePasses, type TimingOptions } from "./timing.ts";

/**
 * Zero bytes after every operand buffer's data. The vec4 kernels (07-11) bounds-check a load by
 * selecting its address: an element outside the matrix reads the buffer's last vec4, these zeros.
 * (New buffers are zero-filled; nothing ever writes here.)
 */
export const ZERO_TAIL = 16;

export interface RunOptions extends TimingOptions {
  /** Override the spec's default tile parameters. */
  params?: Params;
  /** Seed for A and B; fresh from the OS by default. */
  seed?: number;
  /** Rows of C checked against the reference (all rows for small problems by default). */
  checkRows?: number;
  /** Validate only, skip timing. */
  skipTiming?: boolean;
  /**
   * Hand thin edges to the edge-strip kernel when the kernel allows it (KernelSpec.edgeStrips);
   * false launches bounds-checked edge tiles instead, for comparisons. Default true.
   */
  edgeStrips?: boolean;
}

/** A compiled kernel with its parameters, ready to bind to buffers. */
export interface PreparedKernel {
  spec: KernelSpec;
  params: Params;
  pipeline: GPUComputePipeline;
}

const NAN_PATTERN = 0x7fc00000;

/** Throws FeatureError or LimitError if this kernel cannot run on this device. */
export function checkKernelFits(gpu: Gpu, spec: KernelSpec, params: Params): void {
  for (const f of spec.requiredFeatures) {
    if (!gpu.has(f)) {
      throw new FeatureError(f, `${spec.id} needs the "${f}" feature, which this device lacks`);
    }
  }
  const why = spec.invalid?.(params);
  if (why) throw new GemmError("params", `${spec.id} ${JSON.stringify(params)}: ${why}`);
  const lim = gpu.device.limits;
  const [x, y, z] = spec.workgroupSize(params);
  if (x * y * z > lim.maxComputeInvocationsPerWorkgroup) {
    throw new LimitError(
      "maxComputeInvocationsPerWorkgroup",
      `${spec.id}: workgroup ${x}x${y}x${z} = ${x * y * z} invocations exceeds ` +
        `maxComputeInvocationsPerWorkgroup (${lim.maxComputeInvocationsPerWorkgroup})`,
    );
  }
  if (x > lim.maxComputeWorkgroupSizeX || y > lim.maxComputeWorkgroupSizeY) {
    throw new LimitError(
      "maxComputeWorkgroupSizeX",
      `${spec.id}: workgroup ${x}x${y} exceeds the per-dimension limit ` +
        `(${lim.maxComputeWorkgroupSizeX}x${lim.maxComputeWorkgroupSizeY})`,
    );
  }
  const storage = spec.workgroupStorageBytes(params);
  if (storage > lim.maxComputeWorkgroupStorageSize) {
    throw new LimitError(
      "maxComputeWorkgroupStorageSize",
      `${spec.id}: needs ${storage} bytes of workgroup memory, the device allows ` +
        `${lim.maxComputeWorkgroupStorageSize}`,
    );
  }
}

/** The device limit `params` pass (invocations, workgroup size or memory), in words; or undefined. */
export function deviceLimitExceeded(
  gpu: Gpu,
  spec: KernelSpec,
  params: Params,
): string | undefined {
  try {
    checkKernelFits(gpu, spec, params);
    return undefined;
  } catch (e) {
    return e instanceof LimitError ? e.message : undefined;
  }
}

const fitsLimits = (gpu: Gpu, spec: KernelSpec, params: Params) =>
  deviceLimitExceeded(gpu, spec, params) === undefined;

/**
 * Parameters of `spec` that fit this device when `params` do not (an adapter with WebGPU's
 * default limits: 256 invocations, 16 KiB of workgroup memory): of the points of the step's
 * search space and knob laid over `params`, the valid one with the largest workgroup and then
 * the most workgroup memory that fits. Undefined when `params` fit, or when nothing does.
 */
export function fittingParams(gpu: Gpu, spec: KernelSpec, params: Params): Params | undefined {
  if (fitsLimits(gpu, spec, params)) return undefined;
  const points = [
    ...(spec.space ? spacePoints(spec.space, params) : []),
    ...(spec.knob?.points ?? []).map((p) => ({ ...params, ...p })),
  ].filter((p) => !spec.invalid?.(p) && fitsLimits(gpu, spec, p));
  const size = (p: Params) => spec.workgroupSize(p).reduce((a, b) => a * b, 1);
  points.sort((x, y) =>
    size(y) - size(x) || spec.workgroupStorageBytes(y) - spec.workgroupStorageBytes(x)
  );
  return points[0];
}

/**
 * A kernel's parameters on this device: defaults, then device-tuned ones (for `shape`, when
 * given), then `overrides`.
 */
export function kernelParams(
  gpu: Gpu,
  spec: KernelSpec,
  overrides?: Params,
  shape?: Shape,
): Params {
  const tuned = shape && spec.planFor
    ? spec.planFor(shape, gpu.summary)
    : spec.deviceTuned
    ? tunedParams(gpu.summary, spec.name, shape)
    : undefined;
  return { ...spec.params, ...tuned, ...overrides };
}

/** Compile a kernel with the given tile parameters (as WGSL override constants). */
export async function prepareKernel(
  gpu: Gpu,
  spec: KernelSpec,
  params: Params = kernelParams(gpu, spec),
): Promise<PreparedKernel> {
  checkKernelFits(gpu, spec, params);
  const code = spec.generate ? spec.generate(params) : await loadKernelSource(spec.file);
  const module = await compileWgsl(gpu, code, spec.file);
  // A generated kernel has its parameters written into its text: it declares no overrides.
  const constants = spec.generate ? {} : params;
  const pipeline = await scoped(gpu, () =>
    gpu.device.createComputePipelineAsync({
      label: spec.id,
      layout: "auto",
      compute: { module, entryPoint: spec.entryPoint, constants },
    }));
  return { spec, params, pipeline };
}

/** Helper kernels the runner dispatches around the matmul kernels, compiled once per device. */
type Helper = "util.wgsl" | typeof EDGE_STRIPS_FILE;
let helperModules = new Map<Helper, Promise<GPUShaderModule>>();
let helpersFor: Gpu | undefined;
let helpersVersion = kernelSourceVersion();
async function helperPipeline(
  gpu: Gpu,
  file: Helper,
  entryPoint: "copy2d" | "pad" | "fill" | "sumSlices" | "main",
): Promise<GPUComputePipeline> {
  if (helpersFor !== gpu || helpersVersion !== kernelSourceVersion()) {
    helpersFor = gpu;
    helpersVersion = kernelSourceVersion();
    helperModules = new Map();
  }
  let module = helperModules.get(file);
  if (!module) {
    module = loadKernelSource(file).then((code) => compileWgsl(gpu, code, file));
    module.catch(() => helperModules.delete(file));
    helperModules.set(file, module);
  }
  return gpu.device.createComputePipeline({
    layout: "auto",
    compute: { module: await module, entryPoint },
  });
}

function uniform(gpu: Gpu, values: number[]): GPUBuffer {
  const data = new Uint32Array(Math.max(4, Math.ceil(values.length / 4) * 4));
  data.set(values);
  const buf = gpu.device.createBuffer({
    size: data.byteLength,
    usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST,
  });
  gpu.device.queue.writeBuffer(buf, 0, data);
  return buf;
}

const roundUp = (x: number, to: number) => Math.ceil(x / to) * to;

/**
 * A grid of 256-invocation workgroups over `count` items, 2D when one row would pass the 65535
 * workgroups a dimension may have, and the items per grid row.
 */
function grid1d(count: number): [number[], number] {
  const groups = Math.ceil(count / 256);
  const gx = Math.min(groups, 32768);
  return [[gx, Math.ceil(groups / gx), 1], gx * 256];
}

/** An f16 copy of `data` padded to whole 4-byte words (writeBuffer moves multiples of 4). */
function f16Words(data: ArrayLike<number>): Float16Array {
  const out = new Float16Array(roundUp(data.length, 2));
  out.set(data);
  return out;
}

/** Throws a LimitError if a matrix of rows x cols does not fit one storage binding. */
export function checkBufferFits(
  gpu: Gpu,
  name: string,
  rows: number,
  cols: number,
  bytesPer: number,
) {
  const lim = gpu.device.limits;
  const bytes = rows * cols * bytesPer;
  const which = lim.maxStorageBufferBindingSize <= lim.maxBufferSize
    ? "maxStorageBufferBindingSize"
    : "maxBufferSize";
  const cap = Math.min(lim.maxStorageBufferBindingSize, lim.maxBufferSize);
  if (bytes > cap) {
    const largestSquare = Math.floor(Math.sqrt(cap / bytesPer));
    throw new LimitError(
      which,
      `${name} (${rows} x ${cols}, ${bytes} bytes) exceeds ${which} = ${cap} bytes; ` +
        `the largest square matrix that fits is ${largestSquare} x ${largestSquare}`,
    );
  }
}

/** One dispatch of a product: a padding copy, the kernel's tiles, the slice sum, the edge strips. */
interface Dispatch {
  /** "pad A", "pad B", "tiles", "sum slices", "edge strips", "unpad C" (or "poison C"). */
  label: string;
  pipeline: GPUComputePipeline;
  bind: GPUBindGroup;
  grid: number[];
}

/** Record dispatches into a pass, in order. */
function encodeAll(pass: GPUComputePassEncoder, dispatches: Dispatch[]) {
  for (const d of dispatches) {
    pass.setPipeline(d.pipeline);
    pass.setBindGroup(0, d.bind);
    pass.dispatchWorkgroups(d.grid[0], d.grid[1], d.grid[2]);
  }
}

/**
 * A problem bound to buffers: A, B, C on the device, plus zero-padded copies when the kernel
 * needs tile-multiple dimensions. `encode` records everything one product takes (pad, matmul,
 * unpad) into a pass, so timing covers the padding too.
 */
export class BoundProblem {
  readonly c: GPUBuffer;
  private dispatches: Dispatch[] = [];
  private owned: GPUBuffer[] = [];
  private poisonDispatches?: Dispatch[];
  /** The split-K plan's partial products (poisoned with C, so a slice left unwritten fails). */
  private workspace?: { buffer: GPUBuffer; elements: number };

  /** Thin edges computed by the edge-strip kernel; undefined when there are none. */
  readonly edgeStrips?: EdgePlan;

  private constructor(
    readonly gpu: Gpu,
    readonly kernel: PreparedKernel,
    readonly shape: Shape,
    readonly plan: LaunchPlan,
  ) {
    this.c = this.buffer(shape.m * shape.n, "C");
    this.edgeStrips = plan.edgeStrips;
  }

  /**
   * Upload A and B (Float32Array, or any array for f16 kernels) and bind them. `edgeStrips`
   * false keeps bounds-checked edge tiles where the kernel would hand thin edges to the
   * edge-strip kernel.
   */
  static async create(
    gpu: Gpu,
    kernel: PreparedKernel,
    shape: Shape,
    a: ArrayLike<number>,
    b: ArrayLike<number>,
    edgeStrips = true,
  ): Promise<BoundProblem> {
    checkOperands(shape, a, b);
    const plan = launchPlan(kernel.spec, kernel.params, shape, edgeStrips);
    const p = new BoundProblem(gpu, kernel, shape, plan);
    await p.bind(a, b);
    return p;
  }

  /** `create` with fresh random A and B: for timing a pass, where their values do not matter. */
  static random(gpu: Gpu, kernel: PreparedKernel, shape: Shape): Promise<BoundProblem> {
    return BoundProblem.create(
      gpu,
      kernel,
      shape,
      randomMatrix(shape.m, shape.k),
      randomMatrix(shape.k, shape.n),
    );
  }

  private get bytesPer() {
    return this.kernel.spec.precision === "f16" ? 2 : 4;
  }

  private buffer(elements: number, label: string): GPUBuffer {
    const buf = this.gpu.device.createBuffer({
      label,
      size: roundUp(elements * this.bytesPer, 16) + ZERO_TAIL,
      usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC,
    });
    this.owned.push(buf);
    return buf;
  }

  /** A uniform buffer of u32 arguments, freed with the problem. */
  private args(values: number[]): GPUBuffer {
    const buf = uniform(this.gpu, values);
    this.owned.push(buf);
    return buf;
  }

  /** A dispatch of `pipeline` with these buffers at these bindings. */
  private dispatch(
    label: string,
    pipeline: GPUComputePipeline,
    buffers: Record<number, GPUBuffer>,
    grid: number[],
  ): Dispatch {
    const bind = this.gpu.device.createBindGroup({
      layout: pipeline.getBindGroupLayout(0),
      entries: Object.entries(buffers).map(([binding, buffer]) => ({
        binding: Number(binding),
        resource: { buffer },
      })),
    });
    return { label, pipeline, bind, grid };
  }

  private upload(data: ArrayLike<number>, label: string): GPUBuffer {
    const typed = this.bytesPer === 2 ? f16Words(data) : Float32Array.from(data);
    const buf = uploadBuffer(this.gpu, typed, label, ZERO_TAIL);
    this.owned.push(buf);
    return buf;
  }

  /** The dispatches of the launch plan: padding copies, the kernel's tiles, the edge strips. */
  private async bind(a: ArrayLike<number>, b: ArrayLike<number>) {
    const { gpu, kernel, plan } = this;
    const { padded } = plan;
    const operands = [
      ["A", padded.m, padded.k],
      ["B", padded.k, padded.n],
      ["C", padded.m, padded.n],
    ] as const;
    for (const [name, r, c] of operands) {
      checkBufferFits(gpu, name, r, c, this.bytesPer);
    }
    const aBuf = this.upload(a, "A");
    const bBuf = this.upload(b, "B");
    const copy = (label: PaddingCopy["label"]) => plan.copies.find((c) => c.label === label);
    const padA = copy("pad A"), padB = copy("pad B"), unpadC = copy("unpad C");
    const aUse = padA ? this.buffer(padded.m * padded.k, "A padded") : aBuf;
    const bUse = padB ? this.buffer(padded.k * padded.n, "B padded") : bBuf;
    const cUse = plan.paddedC ? this.buffer(padded.m * padded.n, "C padded") : this.c;
    // The C the tiles write (padded or real) and its row stride; split K writes slices of it.
    const [cRows, cCols] = plan.paddedC ? [padded.m, padded.n] : [this.shape.m, this.shape.n];
    let tilesOut = cUse;
    const tilesRun = plan.grid.every((g) => g > 0);
    if (plan.slices > 1 && tilesRun) {
      const elements = plan.slices * cRows * cCols;
      checkBufferFits(gpu, "split-K workspace", plan.slices * cRows, cCols, this.bytesPer);
      tilesOut = this.buffer(elements, "split-K workspace");
      this.workspace = { buffer: tilesOut, elements };
    }
    if (padA) await this.copyDispatch(padA, aBuf, aUse);
    if (padB) await this.copyDispatch(padB, bBuf, bUse);
    // The fourth word (C's row stride, the real N) is read only by unpaddedC kernels.
    const dims = this.args([padded.m, padded.k, padded.n, this.shape.n]);
    if (tilesRun) {
      this.dispatches.push(
        this.dispatch(
          "tiles",
          kernel.pipeline,
          { 0: aUse, 1: bUse, 2: tilesOut, 3: dims },
          plan.grid,
        ),
      );
    }
    if (this.workspace) {
      const rows = Math.min(plan.tiles.m, cRows), cols = Math.min(plan.tiles.n, cCols);
      await this.sumDispatch(tilesOut, cUse, rows, cols, cCols, plan.slices, cRows * cCols);
    }
    if (plan.edgeStrips) await this.stripDispatch(plan.edgeStrips, aUse, bUse);
    if (unpadC) await this.copyDispatch(unpadC, cUse, this.c);
    gpu.check();
  }

  /** One padding copy of the plan, src into dst. */
  private async copyDispatch(copy: PaddingCopy, src: GPUBuffer, dst: GPUBuffer) {
    const args = this.args([copy.rows, copy.cols, copy.toRows, copy.toCols]);
    // Destination rows of whole vec4s (every padded A and B) take the 16-byte-store copy.
    const vec4Rows = copy.toCols % 4 === 0;
    const pipeline = await helperPipeline(this.gpu, "util.wgsl", vec4Rows ? "pad" : "copy2d");
    const grid = vec4Rows
      ? [Math.ceil(copy.toCols / 256), Math.ceil(copy.toRows / 4), 1]
      : [Math.ceil(copy.toCols / 16), Math.ceil(copy.toRows / 16), 1];
    this.dispatches.push(
      this.dispatch(copy.label, pipeline, { 0: src, [vec4Rows ? 5 : 1]: dst, 2: args }, grid),
    );
  }

  /** The split-K sum: slices of `parts` added in order into rows x cols of `out`. */
  private async sumDispatch(
    parts: GPUBuffer,
    out: GPUBuffer,
    rows: number,
    cols: number,
    ldc: number,
    slices: number,
    sliceStride: number,
  ) {
    const [grid, rowStride] = grid1d(rows * cols);
    const args = this.args([rows, cols, ldc, slices, sliceStride, rowStride]);
    const pipeline = await helperPipeline(this.gpu, "util.wgsl", "sumSlices");
    this.dispatches.push(
      this.dispatch("sum slices", pipeline, { 6: parts, 7: out, 8: args }, grid),
    );
  }

  /** The edge-strip kernel for the rows and columns past the whole tiles (one dispatch). */
  private async stripDispatch(strips: EdgePlan, a: GPUBuffer, b: GPUBuffer) {
    const { plan } = this;
    const { m, k, n } = this.shape;
    const { bottom, right } = plan.stripGroups;
    if (bottom + right === 0) return;
    // A and B are read with their stored row strides (padded for the vec4 kernels).
    const args = this.args([
      m,
      k,
      n,
      plan.padded.k,
      plan.padded.n,
      n,
      strips.rowsFrom,
      strips.colsFrom,
      bottom,
    ]);
    const pipeline = await helperPipeline(this.gpu, EDGE_STRIPS_FILE, "main");
    this.dispatches.push(
      this.dispatch("edge strips", pipeline, { 0: a, 1: b, 2: this.c, 3: args }, [
        bottom + right,
        1,
        1,
      ]),
    );
  }

  /** The dispatches one product takes, in order. */
  get dispatchLabels(): string[] {
    return this.dispatches.map((d) => d.label);
  }

  /**
   * Record one full product into a pass, or only the steps named in `only` (to see where the
   * time goes; the result is then incomplete).
   */
  encode(pass: GPUComputePassEncoder, only?: string[]): void {
    encodeAll(pass, only ? this.dispatches.filter((d) => only.includes(d.label)) : this.dispatches);
  }

  /** Run once and read C back (after poisoning it with NaN so unwritten elements fail). */
  async compute(): Promise<Float32Array> {
    const { gpu } = this;
    await this.poison();
    await scoped(gpu, () => {
      const enc = gpu.device.createCommandEncoder();
      const pass = enc.beginComputePass();
      this.encode(pass);
      pass.end();
      gpu.device.queue.submit([enc.finish()]);
    });
    const elements = this.shape.m * this.shape.n;
    const raw = await readBuffer(gpu, this.c, roundUp(elements * this.bytesPer, 4));
    return this.bytesPer === 2
      ? Float32Array.from(new Float16Array(raw, 0, elements))
      : new Float32Array(raw);
  }

  /**
   * Fill C (and the split-K workspace) with a NaN pattern on the GPU (f16 kernels: two NaN
   * halves per word).
   */
  private async poison() {
    const { gpu } = this;
    if (!this.poisonDispatches) {
      const targets = [{ buffer: this.c, elements: this.shape.m * this.shape.n }];
      if (this.workspace) targets.push(this.workspace);
      const pipeline = await helperPipeline(gpu, "util.wgsl", "fill");
      this.poisonDispatches = targets.map(({ buffer, elements }) => {
        const words = Math.ceil((elements * this.bytesPer) / 4);
        const [grid, rowStride] = grid1d(words);
        const pattern = this.bytesPer === 2 ? 0x7e007e00 : NAN_PATTERN;
        const args = this.args([words, pattern, rowStride, 0]);
        return this.dispatch("poison C", pipeline, { 3: buffer, 4: args }, grid);
      });
    }
    const enc = gpu.device.createCommandEncoder();
    const pass = enc.beginComputePass();
    encodeAll(pass, this.poisonDispatches);
    pass.end();
    gpu.device.queue.submit([enc.finish()]);
  }

  destroy(): void {
    for (const b of this.owned) b.destroy();
    this.owned = [];
  }
}

/** C = A * B on the GPU with one kernel: the one-shot call notebooks use. */
export async function multiply(
  gpu: Gpu,
  spec: KernelSpec,
  a: ArrayLike<number>,
  b: ArrayLike<number>,
  shape: Shape,
  params?: Params,
): Promise<Float32Array> {
  const problem = await BoundProblem.create(
    gpu,
    await prepareKernel(gpu, spec, kernelParams(gpu, spec, params, shape)),
    shape,
    a,
    b,
  );
  try {
    return await problem.compute();
  } finally {
    problem.destroy();
  }
}

/**
 * Validate then time one kernel on one shape. Failures (limits, features, compile errors,
 * wrong results) come back as a result with `validated: false` and `error`, never as a speed;
 * device loss is rethrown so callers stop.
 */
export async function runKernel(
  gpu: Gpu,
  spec: KernelSpec,
  shape: Shape,
  opts: RunOptions = {},
): Promise<KernelResult> {
  checkShape(shape);
  let params = kernelParams(gpu, spec, opts.params, shape);
  // Parameters the caller did not choose and the device cannot run: the nearest that fit.
  let adapted: string | undefined;
  const fit = opts.params ? undefined : fittingParams(gpu, spec, params);
  if (fit) {
    adapted = `${deviceLimitExceeded(gpu, spec, params)}; ran ${
      Object.entries(fit).filter(([k, v]) => params[k] !== v).map(([k, v]) => `${k}=${v}`)
        .join(" ")
    } instead`;
    params = fit;
  }
  const borrowed = spec.deviceTuned && !spec.planFor && !opts.params
    ? tuningFor(gpu.summary, spec.name)?.borrowedFrom
    : undefined;
  const seed = opts.seed ?? freshSeed();
  const model = spec.model(shape, params);
  const result: KernelResult = {
    kernel: spec.id,
    title: spec.title,
    ...shape,
    params,
    relErr: NaN,
    validated: false,
    modelBytes: model.bytes,
    intensity: model.flops / model.bytes,
    seed,
    ...(adapted ? { adapted } : {}),
    ...(borrowed ? { tunedOn: borrowed } : {}),
  };
  let problem: BoundProblem | undefined;
  try {
    await validateThenTime(result, {
      numerics: numericsOf(spec, params),
      checkRows: opts.checkRows,
      label: `${spec.id} at ${shape.m}x${shape.k}x${shape.n}`,
      compute: async (a, b) => {
        const kernel = await prepareKernel(gpu, spec, params);
        problem = await BoundProblem.create(gpu, kernel, shape, a, b, opts.edgeStrips ?? true);
        if (problem.edgeStrips) result.edgeStrips = problem.edgeStrips;
        return await problem.compute();
      },
      time: opts.skipTiming
        ? undefined
        : () => timePasses(gpu, (pass) => problem?.encode(pass), opts),
    });
  } finally {
    problem?.destroy();
  }
  return result;
}
