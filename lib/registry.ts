/**
 * The kernel registry: each kernel of the ladder described once. Tests, the bench, the charts
 * and the notebooks all read this list, so a new kernel is one WGSL file plus one entry here.
 */
import type { Shape } from "./matrix.ts";
import type { DeviceSummary } from "./gpu.ts";
import { ceilDiv, F32_TOLERANCE, naiveModel } from "./kernels/cost.ts";
import { LADDER } from "./kernels/ladder.ts";

export { F32_TOLERANCE, launchModel, naiveModel, tiledModel } from "./kernels/cost.ts";

/** Tile parameters, passed to the WGSL file as `override` constants of the same names. */
export type Params = Record<string, number>;

/** Modeled cost of one launch: operations and global-memory bytes moved (loads + stores). */
export interface CostModel {
  flops: number;
  bytes: number;
}

/** Everything the runner, tests, bench, charts and notebooks need to know about one kernel. */
export interface KernelSpec {
  /** "02_naive": number and name, the kernel file's stem and the notebook's name. */
  id: string;
  number: number;
  name: string;
  /** One line for tables and chart labels. */
  title: string;
  /** The one idea this step adds, in a sentence. */
  idea: string;
  file: string;
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
   * The kernel also reads A and B as plain f32 arrays at bindings 4 and 5 (second read-only
   * views of the same buffers), for a load path that needs no padding.
   */
  scalarViews?: boolean;
  /**
   * The kernel tiles C into BM x BN blocks (params BM and BN) and may be launched on whole tiles
   * only: when M or N ends 1..STRIP_WIDTH past a tile multiple, the runner adds the edge-strip
   * kernel (kernels/edge_strips.wgsl) for those rows and columns instead of one more row or
   * column of tiles. Requires that C is written at its real size (align m = 1; unpaddedC when
   * N is padded).
   */
  edgeStrips?: boolean;
  /**
   * The global-memory model: what each tile loads and how often. Called as a method, so a tiled
   * entry counts its own launch plan (`launchModel(this, ...)`), inherited ones included.
   */
  model(shape: Shape, p: Params): CostModel;
  requiredFeatures: GPUFeatureName[];
  /** Storage precision of A, B and C. */
  precision: "f32" | "f16";
  /** Largest acceptable relative error norm against the float64 reference. */
  tolerance: number;
  /** Left out of the default bench/test list (teaching-only variants such as broken kernels). */
  demo?: boolean;
  /**
   * Parameters chosen for this device (e.g. by the autotuner), and for the problem shape when
   * given, layered over `params` by the runner; undefined keeps the defaults.
   */
  deviceParams?(device: DeviceSummary, shape?: Shape): Params | undefined;
}

export const naive: KernelSpec = {
  id: "02_naive",
  number: 2,
  name: "naive",
  title: "Naive",
  idea:
    "One invocation per element of C; x walks rows, so neighbouring invocations read far apart.",
  file: "02_naive.wgsl",
  entryPoint: "main",
  params: { WG: 16 },
  workgroupSize: (p) => [p.WG, p.WG, 1],
  dispatch: (s, p) => [ceilDiv(s.m, p.WG), ceilDiv(s.n, p.WG), 1],
  workgroupStorageBytes: () => 0,
  align: () => ({ m: 1, n: 1, k: 1 }),
  model: naiveModel,
  requiredFeatures: [],
  precision: "f32",
  tolerance: F32_TOLERANCE,
};

/** The ladder in story order (demo variants follow the step they belong to). */
export const KERNELS: KernelSpec[] = [naive, ...LADDER];

/** Find kernels by registry id ("02_naive"), name ("naive") or number ("2" or "02"). */
export function findKernel(key: string, list: KernelSpec[] = KERNELS): KernelSpec | undefined {
  const k = key.trim().toLowerCase();
  return list.find((s) =>
    s.id === k || s.name === k || (/^\d+$/.test(k) && s.number === Number(k))
  );
}
