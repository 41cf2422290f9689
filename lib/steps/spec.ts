/**
 * What a ladder step is: the KernelSpec type every `kernels/NN_name/step.ts` fills in, and the
 * step's id, number and name, read from the folder it lives in. This module imports nothing
 * from the registry or the steps, so steps, the cost models and the registry can all use it.
 */
import type { Numerics } from "../accuracy.ts";
import type { DeviceSummary } from "../gpu.ts";
import type { Shape } from "../matrix.ts";

/** Tile parameters, passed to the WGSL file as `override` constants of the same names. */
export type Params = Record<string, number>;

/** Modeled cost of one launch: operations and global-memory bytes moved (loads + stores). */
export interface CostModel {
  flops: number;
  bytes: number;
}

/** One access a warp makes to memory: every invocation's byte offset (undefined: inactive). */
export interface Access {
  /** The WGSL array ("As", "Bs"; "A", "B" for global memory). */
  array: string;
  /** Bytes each invocation reads or writes: 2 (f16), 4 (f32), 8 (vec4<f16>), 16 (vec4<f32>). */
  width: 2 | 4 | 8 | 16;
  /** Byte offset of invocation `tid`'s access at k step `k` (reads) or in the tile (stores). */
  at(tid: number, k: number): number | undefined;
}

/** What one invocation does per tile of k (between two passes of barriers). */
export interface TileLoop {
  /** Invocations per workgroup. */
  invocations: number;
  /** k steps per tile. */
  steps: number;
  /** Multiply-adds per invocation per k step. */
  fmas: number;
  /** Multiply-adds per arithmetic instruction: 1 (f32), 2 (packed f16, two per instruction). */
  fmasPerInstruction: 1 | 2;
  /** Workgroup-memory reads per k step. */
  reads: Access[];
  /** Workgroup-memory stores per tile. */
  stores: Access[];
  /** Global loads per tile (instructions per invocation). */
  globalLoads: number;
  /** Barriers per tile. */
  barriers: number;
  /** Other instructions per tile the WGSL makes certain (the f16 kernel's f32 flush adds). */
  other: number;
  /**
   * For kernels without workgroup memory: the global reads of each k step, as byte offsets
   * into A (from 0) and B (from a separate base), for the L1's 32-byte sectors.
   */
  globalReads?: Access[];
  /**
   * Registers per invocation, an estimate: the accumulators, the fragments of one k step, the
   * words each invocation stages per tile, and 24 for indices, bases and loop counters (the
   * WGSL compiler's real count is not visible through WebGPU).
   */
  registers: number;
}

/** What a concept figure is drawn from: the step, the parameters it runs with, the shape. */
export interface FigureContext {
  spec: KernelSpec;
  params: Params;
  shape: Shape;
}

/** A concept figure: SVG, and its caption (the plain-text fallback). */
export interface ConceptFigure {
  svg: string;
  caption: string;
}

/**
 * What a step's kernel is compared with in its notebook's "what changed" diff, when that is not
 * simply the ladder's step before it at its defaults.
 */
export interface Change {
  /** The step it builds on, by name (default: the step before it in the ladder). */
  buildsOn?: string;
  /** Parameters of this step that show its change (layered over its defaults). */
  params?: Params;
  /** What the reader should know about the pair, in a sentence or two. */
  note: string;
}

/** Where a step lives: kernels/<id>/, with id = NN_name. */
export interface StepLayout {
  /** "07_vectorize": the step's folder and its notebook's name. */
  id: string;
  number: number;
  /** "vectorize": how notebooks, tests, tools and records refer to the step. */
  name: string;
  /**
   * Its WGSL, relative to kernels/ (a step registered from outside the project sets its file's
   * URL here instead: `new URL("kernel.wgsl", import.meta.url).href`).
   */
  file: string;
}

/** Everything the runner, tests, bench, charts and notebooks need to know about one kernel. */
export interface KernelSpec extends StepLayout {
  /** One line for tables and chart labels. */
  title: string;
  /** The one idea this step adds, in a sentence. */
  idea: string;
  entryPoint: string;
  /**
   * The kernel's WGSL written for one parameter set (the parameters are literals in the text,
   * not override constants); when absent the runner reads `file` and passes the parameters as
   * override constants.
   */
  generate?(p: Params): string;
  /** Default tile parameters (WGSL override constants). */
  params: Params;
  /** Optional search space for the autotuner (each key a param name). */
  space?: Record<string, number[]>;
  /** Why a parameter combination is invalid (undefined when it is fine). */
  invalid?(p: Params): string | undefined;
  workgroupSize(p: Params): [number, number, number];
  dispatch(shape: Shape, p: Params): [number, number, number];
  /** Bytes of `var<workgroup>` memory, checked against maxComputeWorkgroupStorageSize. */
  workgroupStorageBytes(p: Params): number;
  /**
   * Dimensions the kernel needs to be multiples of these (the runner zero-pads on the GPU,
   * inside the timed region, so the cost is measured). 1 = the kernel handles any size itself.
   */
  align(p: Params): { m: number; n: number; k: number };
  /**
   * The kernel writes C at its real size, bounds-checked, with row stride `ldc` (the real N, a
   * fourth u32 after Dims {M, K, N}), so the runner pads only A and B and never copies C back.
   * Requires align m = 1.
   */
  unpaddedC?: boolean;
  /**
   * The kernel tiles C into BM x BN blocks (params BM and BN) and may be launched on whole tiles
   * only: when M or N ends 1..STRIP_WIDTH past a tile multiple, the runner adds the edge-strip
   * kernel (kernels/edge_strips.wgsl) for those rows and columns instead of one more row or
   * column of tiles. Requires that C is written at its real size (align m = 1; unpaddedC when
   * N is padded). A function decides per parameter set (a plan without BM x BN tiles has none).
   */
  edgeStrips?: boolean | ((p: Params) => boolean);
  /**
   * Split K: the kernel's grid has this many z slices, each writing its partial C to its own
   * slice of a workspace that the runner then sums into C in slice order (a second dispatch,
   * timed with the product). Absent or 1: the kernel writes C itself.
   */
  slices?(p: Params): number;
  /**
   * The global-memory model: what each tile loads and how often. Called as a method, so a tiled
   * step counts its own launch plan (`launchModel(this, ...)`), inherited ones included.
   */
  model(shape: Shape, p: Params): CostModel;
  requiredFeatures: GPUFeatureName[];
  /** Storage precision of A, B and C. */
  precision: "f32" | "f16";
  /**
   * What rounds in the product (f16 storage, f16 partial sums), from which lib/accuracy.ts
   * derives the error bound at each K; a function when it depends on the parameters.
   */
  numerics: Numerics | ((p: Params) => Numerics);
  /** Left out of the default bench/test list (teaching-only variants such as broken kernels). */
  demo?: boolean;
  /**
   * The runner layers the parameters the autotuner saved for this step on this device
   * (data/tuning, looked up by the step's name in lib/tuning.ts) over `params`.
   */
  deviceTuned?: boolean;
  /**
   * Parameters picked per shape and device (13's plan picker, which also reads that step's
   * per-shape tuning); the runner layers them over `params` when it knows the shape.
   */
  planFor?(shape: Shape, device: DeviceSummary): Params;
  /**
   * The plans the planner ranks at a shape, best first, each with its kind ("split-K"): what
   * lib/search.ts searchPlans measures per shape.
   */
  planCandidates?(shape: Shape, device: DeviceSummary): { params: Params; kind: string }[];
  /** The parameter this step's notebook lets the reader turn (lib/notebook/knobs.ts). */
  knob?: Knob;
  /**
   * The inner loop as lib/model/bounds.ts counts it (built with lib/model/loops.ts from the
   * step's WGSL index expressions); absent or undefined for a loop not described.
   */
  loop?(p: Params, shape: Shape): TileLoop | undefined;
  /** The step's concept figure, drawn from its parameters (lib/figures/ has the drawing kit). */
  figure?(ctx: FigureContext): ConceptFigure;
  /** What the notebook's diff compares this step with, when not the step before at defaults. */
  change?: Change;
  /** Runs on the shape suite (lib/suite.ts SHAPE_SUITE) beside the peers. */
  suite?: boolean;
}

/**
 * One parameter of a step swept to show the step's idea: each point is laid over the step's
 * defaults (not over a device's tuned parameters, so every adapter turns the same knob).
 */
export interface Knob {
  /** What is turned: a parameter ("TILE"), or what the points vary together ("plan"). */
  name: string;
  /** What turning it shows, in a sentence. */
  why: string;
  /** The points in sweep order, each the parameters it sets; one of them is the default. */
  points: Params[];
  /**
   * A point's name in the table and on the chart, from its whole parameter set (default: the
   * parameters the point sets, "BM=64 BN=64").
   */
  label?(params: Params): string;
  /** The shape swept at run size n (default n x n x n). */
  shape?(n: number): Shape;
}

const STEP_FOLDER = /^(\d+)_([a-z0-9_]+)$/;

/**
 * The layout of the step whose step.ts has this module URL (pass `import.meta.url`): its
 * folder kernels/NN_name/ gives the id, number and name, and its WGSL is kernel.wgsl there.
 */
export function stepLayout(moduleUrl: string): StepLayout {
  const parts = new URL(moduleUrl).pathname.split("/");
  const id = parts.at(-2) ?? "";
  const match = STEP_FOLDER.exec(id);
  if (!match || parts.at(-3) !== "kernels") {
    throw new Error(`${moduleUrl}: a step lives in kernels/NN_name/step.ts`);
  }
  return { id, number: Number(match[1]), name: match[2], file: `${id}/kernel.wgsl` };
}

/**
 * A teaching variant of a step, in the step's folder: id and name get `_suffix`; its WGSL is
 * `file` in that folder (the step's own kernel.wgsl when the variant only changes parameters).
 */
export function variantLayout(step: StepLayout, suffix: string, file?: string): StepLayout {
  return {
    id: `${step.id}_${suffix}`,
    number: step.number,
    name: `${step.name}_${suffix}`,
    file: file ? `${step.id}/${file}` : step.file,
  };
}

/**
 * A loads-first control put back in its step's order (IN_ORDER 1 in the step's loads_first.wgsl):
 * the tile-load loops written out, each element stored before the next is loaded. Against the step
 * only the loops are gone; against the loads-first control only the order.
 */
export function writtenOutControl(
  loadsFirst: KernelSpec,
  step: StepLayout,
  suffix: string,
  params: Params,
  text: { title: string; idea: string },
): KernelSpec {
  return {
    ...loadsFirst,
    ...variantLayout(step, suffix, "loads_first.wgsl"),
    ...text,
    params: { ...params, IN_ORDER: 1 },
  };
}

/**
 * The step name in a kernel id ("11_autotune" -> "autotune"; a name is returned as it is).
 * Records and tuning files hold ids with the number of their day; matching on the name keeps
 * them readable after a step is renumbered.
 */
export function stepName(idOrName: string): string {
  return idOrName.trim().toLowerCase().replace(/^\d+_/, "");
}

/** What rounds in `spec`'s product with parameters `p`. */
export function numericsOf(spec: Pick<KernelSpec, "numerics">, p: Params): Numerics {
  return typeof spec.numerics === "function" ? spec.numerics(p) : spec.numerics;
}

/** Every combination of the space's values layered over `base`, in a stable order. */
export function spacePoints(space: Record<string, number[]>, base: Params): Params[] {
  let points: Params[] = [{ ...base }];
  for (const [key, values] of Object.entries(space)) {
    points = points.flatMap((p) => values.map((v) => ({ ...p, [key]: v })));
  }
  return points;
}
