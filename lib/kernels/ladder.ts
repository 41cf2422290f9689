/**
 * The GPU ladder after the naive kernel: one entry per step (03..12) plus the teaching-only
 * variants (`demo: true`). Each entry names its WGSL file, default tile parameters (the file's
 * `override` constants), launch geometry, workgroup memory, padding needs and cost model.
 */
import type { KernelSpec, Params } from "../registry.ts";
import type { Shape } from "../matrix.ts";
import { tunedParams } from "../tuning.ts";
import { ceilDiv, F32_TOLERANCE, launchModel, naiveModel, tiledModel } from "./cost.ts";

const F32 = 4;
const ANY = { m: 1, n: 1, k: 1 };
/** vec4 rows of A and B need K and N to be multiples of 4; M is free. */
const VEC4 = { m: 1, n: 4, k: 4 };

/** Launch grid for kernels that tile C into BM x BN blocks (x over columns, y over rows). */
const blockGrid = (s: Shape, p: Params): [number, number, number] => [
  ceilDiv(s.n, p.BN),
  ceilDiv(s.m, p.BM),
  1,
];

/** Invocations of the kernels where each one owns an 8 x 8 block of C. */
const threads8x8 = (p: Params) => (p.BM / 8) * (p.BN / 8);

function need(...rules: [boolean, string][]): string | undefined {
  return rules.find(([ok]) => !ok)?.[1];
}

export const coalesce: KernelSpec = {
  id: "03_coalesce",
  number: 3,
  name: "coalesce",
  title: "Coalesced",
  idea:
    "x walks the columns of C, so a subgroup reads one contiguous run of B and writes one of C.",
  file: "03_coalesce.wgsl",
  entryPoint: "main",
  params: { WG: 16 },
  space: { WG: [8, 16, 32] },
  invalid: (p) => need([p.WG * p.WG <= 1024, "WG * WG must be at most 1024"]),
  workgroupSize: (p) => [p.WG, p.WG, 1],
  dispatch: (s, p) => [ceilDiv(s.n, p.WG), ceilDiv(s.m, p.WG), 1],
  workgroupStorageBytes: () => 0,
  align: () => ANY,
  model: naiveModel,
  requiredFeatures: [],
  precision: "f32",
  tolerance: F32_TOLERANCE,
};

export const tiled: KernelSpec = {
  id: "04_tiled",
  number: 4,
  name: "tiled",
  title: "Workgroup tiles",
  idea: "Stage TILE x TILE tiles of A and B in workgroup memory, guarded by two barriers.",
  file: "04_tiled.wgsl",
  entryPoint: "main",
  params: { TILE: 16, RAW_BARRIER: 1, WAR_BARRIER: 1 },
  space: { TILE: [8, 16, 32] },
  invalid: (p) => need([p.TILE * p.TILE <= 1024, "TILE * TILE must be at most 1024"]),
  workgroupSize: (p) => [p.TILE, p.TILE, 1],
  dispatch: (s, p) => [ceilDiv(s.n, p.TILE), ceilDiv(s.m, p.TILE), 1],
  workgroupStorageBytes: (p) => 2 * p.TILE * p.TILE * F32,
  align: () => ANY,
  model: (s, p) => tiledModel(s, p.TILE, p.TILE),
  requiredFeatures: [],
  precision: "f32",
  tolerance: F32_TOLERANCE,
};

/** 04 without the read-after-write barrier: invocations read tiles others have not written. */
export const tiledNoRawBarrier: KernelSpec = {
  ...tiled,
  id: "04_tiled_no_raw_barrier",
  name: "tiled_no_raw_barrier",
  title: "Tiles, RAW barrier missing (broken on purpose)",
  idea: "Drop the barrier between writing a tile and reading it: a race the validation catches.",
  params: { ...tiled.params, RAW_BARRIER: 0 },
  space: undefined,
  demo: true,
};

/** 04 without the write-after-read barrier: the next tile overwrites one still being read. */
export const tiledNoWarBarrier: KernelSpec = {
  ...tiled,
  id: "04_tiled_no_war_barrier",
  name: "tiled_no_war_barrier",
  title: "Tiles, WAR barrier missing (broken on purpose)",
  idea: "Drop the barrier before overwriting a tile: fast invocations clobber data still in use.",
  params: { ...tiled.params, WAR_BARRIER: 0 },
  space: undefined,
  demo: true,
};

export const blocktile1d: KernelSpec = {
  id: "05_blocktile_1d",
  number: 5,
  name: "blocktile_1d",
  title: "1D blocktiling",
  idea: "Each invocation computes 8 outputs of one column, reusing each B value 8 times.",
  file: "05_blocktile_1d.wgsl",
  entryPoint: "main",
  params: { BM: 64, BN: 64, BK: 8 },
  space: { BM: [32, 64, 128], BN: [32, 64, 128], BK: [8, 16] },
  invalid: (p) =>
    need(
      [p.BM % 8 === 0, "BM must be a multiple of 8"],
      [p.BM * p.BN / 8 <= 1024, "BM * BN / 8 invocations must be at most 1024"],
    ),
  workgroupSize: (p) => [p.BM * p.BN / 8, 1, 1],
  dispatch: blockGrid,
  workgroupStorageBytes: (p) => (p.BM * p.BK + p.BK * p.BN) * F32,
  align: () => ANY,
  model: (s, p) => tiledModel(s, p.BM, p.BN),
  requiredFeatures: [],
  precision: "f32",
  tolerance: F32_TOLERANCE,
};

const blocktile2dInvalid = (p: Params) =>
  need(
    [p.BM % 8 === 0 && p.BN % 8 === 0, "BM and BN must be multiples of 8"],
    [threads8x8(p) <= 1024, "(BM / 8) * (BN / 8) invocations must be at most 1024"],
  );

export const blocktile2d: KernelSpec = {
  id: "06_blocktile_2d",
  number: 6,
  name: "blocktile_2d",
  title: "2D blocktiling",
  idea: "Each invocation computes an 8 x 8 block of C in 16 named vec4 registers.",
  file: "06_blocktile_2d.wgsl",
  entryPoint: "main",
  params: { BM: 128, BN: 128, BK: 8 },
  space: { BM: [64, 128], BN: [64, 128], BK: [8, 16] },
  invalid: blocktile2dInvalid,
  workgroupSize: (p) => [threads8x8(p), 1, 1],
  dispatch: blockGrid,
  workgroupStorageBytes: (p) => (p.BM * p.BK + p.BK * p.BN) * F32,
  align: () => ANY,
  edgeStrips: true,
  // Called as spec.model(...): the plan is this entry's own (padding, copies, strips).
  model(s, p) {
    return launchModel(this, s, p);
  },
  requiredFeatures: [],
  precision: "f32",
  tolerance: F32_TOLERANCE,
};

/** 06 written with function-local arrays indexed in loops: same result, local-memory speed. */
export const blocktile2dLocalArray: KernelSpec = {
  ...blocktile2d,
  id: "06_blocktile_2d_local_array",
  name: "blocktile_2d_local_array",
  title: "2D blocktiling, accumulators in a local array",
  idea: "The same 8 x 8 block in array<array<f32, 8>, 8> indexed in loops: watch it slow down.",
  file: "06_blocktile_2d_local_array.wgsl",
  space: undefined,
  demo: true,
};

const vec4Invalid = (p: Params) =>
  blocktile2dInvalid(p) ?? need([p.BK % 4 === 0, "BK must be a multiple of 4 (vec4 rows)"]);

export const vectorize: KernelSpec = {
  id: "07_vectorize",
  number: 7,
  name: "vectorize",
  title: "Vectorized (vec4)",
  idea: "16-byte loads and stores, and A transposed in workgroup memory so its reads are vec4 too.",
  file: "07_vectorize.wgsl",
  entryPoint: "main",
  params: { BM: 128, BN: 128, BK: 8 },
  space: { BM: [64, 128], BN: [64, 128], BK: [8, 16] },
  invalid: vec4Invalid,
  workgroupSize: (p) => [threads8x8(p), 1, 1],
  dispatch: blockGrid,
  workgroupStorageBytes: (p) => (p.BM * p.BK + p.BK * p.BN) * F32,
  align: () => VEC4,
  // C is written unpadded: the runner pads only A and B (K and N, when not multiples of 4).
  unpaddedC: true,
  edgeStrips: true,
  // Called as spec.model(...): the plan is this entry's own (padding, copies, strips).
  model(s, p) {
    return launchModel(this, s, p);
  },
  requiredFeatures: [],
  precision: "f32",
  tolerance: F32_TOLERANCE,
};

/** Workgroup bytes of one A (transposed, padded) and one B tile. */
const paddedTileBytes = (p: Params) => (p.BK * (p.BM + 4 * p.PAD) + p.BK * p.BN) * F32;

export const bankConflicts: KernelSpec = {
  ...vectorize,
  id: "08_bank_conflicts",
  number: 8,
  name: "bank_conflicts",
  title: "Bank-conflict-free",
  idea: "Neighbouring invocations read neighbouring vec4s, and the A tile is padded by one vec4.",
  file: "08_bank_conflicts.wgsl",
  params: { BM: 128, BN: 128, BK: 8, PAD: 1 },
  space: { BM: [64, 128], BN: [64, 128], BK: [8, 16], PAD: [0, 1] },
  workgroupStorageBytes: paddedTileBytes,
};

const warpTileInvalid = (p: Params) =>
  vec4Invalid(p) ??
    need([p.BM % 32 === 0 && p.BN % 64 === 0, "BM must be a multiple of 32 and BN of 64"]);

export const subgroupTiling: KernelSpec = {
  ...bankConflicts,
  id: "09_subgroup_tiling",
  number: 9,
  name: "subgroup_tiling",
  title: "Subgroup (warp) tiling",
  idea: "Each group of 32 invocations owns a 32 x 64 block: fewer distinct reads per subgroup.",
  file: "09_subgroup_tiling.wgsl",
  invalid: warpTileInvalid,
};

/** vec4 loads per invocation per tile in the double-buffered kernel: [of A, of B]. */
export function loadsPerInvocation(p: Params): [number, number] {
  const t = threads8x8(p);
  return [p.BM * p.BK / 4 / t, p.BK * p.BN / 4 / t];
}

const doubleBufferInvalid = (p: Params) =>
  warpTileInvalid(p) ??
    need(
      [
        loadsPerInvocation(p).every((l) => Number.isInteger(l) && l >= 1 && l <= 4),
        "each invocation must load 1 to 4 whole vec4s of A and of B per tile",
      ],
      [threads8x8(p) <= 512, "at most 512 invocations (1024 leave 64 registers each on NVIDIA)"],
    );

export const doubleBuffer: KernelSpec = {
  ...subgroupTiling,
  id: "10_double_buffer",
  number: 10,
  name: "double_buffer",
  title: "Double buffering",
  idea: "Prefetch the next tile into registers while computing this one; one barrier per tile.",
  file: "10_double_buffer.wgsl",
  invalid: doubleBufferInvalid,
  workgroupStorageBytes: (p) => 2 * paddedTileBytes(p),
};

/** Invocations of 11: each owns an 8 x TN block of C. */
const threads8xTN = (p: Params) => (p.BM / 8) * (p.BN / p.TN);

export const autotuned: KernelSpec = {
  ...doubleBuffer,
  id: "11_autotune",
  number: 11,
  name: "autotune",
  title: "Autotuned",
  idea: "10 with tile sizes and each invocation's block (8 x 8 or 8 x 16) searched on this device.",
  file: "11_autotune.wgsl",
  // vec4 loads (with padding when K or N is not a multiple of 4) on every shape. Round 3 found the
  // scalar path, which needs no padding, 18% ahead on grids smaller than the GPU; since the bounds
  // checks select the load's address (round 7) vec4 loads win there too (1000x3000x777 on an H200:
  // 13 547 vs 11 311 GFLOP/s) and everywhere else measured. VEC4_LOADS 0 stays for comparing the
  // two on another adapter (notebook 11).
  params: { ...doubleBuffer.params, TN: 8, VEC4_LOADS: 1 },
  space: {
    BM: [64, 128, 256],
    BN: [64, 128, 256],
    BK: [8, 16],
    PAD: [0, 1],
    GROUP_M: [1, 8],
    TN: [8, 16],
  },
  invalid: (p) => {
    const t = threads8xTN(p);
    return need(
      [p.TN === 8 || p.TN === 16, "TN must be 8 or 16"],
      [p.BK % 4 === 0, "BK must be a multiple of 4 (vec4 rows)"],
      [p.BM % 32 === 0 && p.BN % (8 * p.TN) === 0, "BM must be a multiple of 32, BN of 8 * TN"],
      [
        [p.BM * p.BK / 4 / t, p.BK * p.BN / 4 / t].every((l) =>
          Number.isInteger(l) && l >= 1 && l <= 4
        ),
        "each invocation must load 1 to 4 whole vec4s of A and of B per tile",
      ],
      [t <= 512, "at most 512 invocations (1024 leave 64 registers each on NVIDIA)"],
    );
  },
  workgroupSize: (p) => [threads8xTN(p), 1, 1],
  deviceParams: (device, shape) => tunedParams(device, "11_autotune", shape),
  scalarViews: true,
  align: (p) => p.VEC4_LOADS === 0 ? ANY : VEC4,
};

export const f16: KernelSpec = {
  ...doubleBuffer,
  id: "12_f16",
  number: 12,
  name: "f16",
  title: "f16",
  idea: "f16 storage and packed f16 multiply-adds per tile, flushed to f32; its own accuracy.",
  file: "12_f16.wgsl",
  // BK 16: f16 tiles are half the size, and a deeper tile halves the barriers per FMA.
  params: { BM: 128, BN: 128, BK: 16, PAD: 1 },
  space: undefined,
  // f16 tiles: half the workgroup bytes of the f32 kernel.
  workgroupStorageBytes: (p) => paddedTileBytes(p),
  align: () => ANY,
  // The edge-strip kernel reads f32; the f16 kernels keep their bounds-checked edge tiles.
  edgeStrips: false,
  model: (s, p) => tiledModel(s, p.BM, p.BN, 2),
  requiredFeatures: ["shader-f16"],
  precision: "f16",
  // Inputs and output rounded to f16 (unit roundoff 2^-11 ~ 4.9e-4) plus BK-long f16 partial
  // sums: measured 5.5e-4 to 6.9e-4 on the H200 at 4096 and 8192. Over a handful of outputs the
  // error norm has a heavy tail (a small ||C|| from cancellation divides it): at 1 x 257 x 3 on
  // lavapipe, 150 seeds gave a median of 7.0e-4 and a maximum of 3.9e-3, and one test run 6.6e-3.
  // 1e-2 passes that tail; a wrong result is off by ~1 (or NaN).
  tolerance: 1e-2,
};

/** 12 with f16 storage only (f32 arithmetic): half the bytes, but bytes were never the limit. */
export const f16Storage: KernelSpec = {
  ...f16,
  id: "12_f16_storage",
  name: "f16_storage",
  title: "f16 storage, f32 math",
  idea: "Only the storage in f16: the bytes halve, but bytes were not what limited the kernel.",
  file: "12_f16_storage.wgsl",
  params: doubleBuffer.params,
  workgroupStorageBytes: (p) => 2 * paddedTileBytes(p),
  // Inputs and output rounded to f16: measured 3.3e-4 on the H200 at 4096 and 8192; at
  // 1 x 257 x 3 on lavapipe (150 seeds) median 3.5e-4, maximum 2.5e-3 (see 12_f16's tail).
  tolerance: 5e-3,
  demo: true,
};

/** Steps 03..12 and their demo variants, in story order. */
export const LADDER: KernelSpec[] = [
  coalesce,
  tiled,
  tiledNoRawBarrier,
  tiledNoWarBarrier,
  blocktile1d,
  blocktile2d,
  blocktile2dLocalArray,
  vectorize,
  bankConflicts,
  subgroupTiling,
  doubleBuffer,
  autotuned,
  f16,
  f16Storage,
];
