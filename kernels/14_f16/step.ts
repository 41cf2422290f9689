/**
 * f16: step 12's generated kernel in half precision (generate.ts with F16=2), and its
 * storage-only variant (F16=1). Same tiles, mapping, written-out loop and launch order as 12;
 * only the element type of the matrices, the tiles and the multiply-adds changes.
 */
import { tiledModel } from "../../lib/steps/launch.ts";
import { type KernelSpec, stepLayout, variantLayout } from "../../lib/steps/spec.ts";
import { ANY, tileBytes } from "../../lib/steps/tiling.ts";
import { step as generated } from "../12_generated/step.ts";
import { f16Figure } from "./figure.ts";
import { warpTileLoop } from "../../lib/model/loops.ts";

const layout = stepLayout(import.meta.url);

export const step: KernelSpec = {
  ...generated,
  ...layout,
  file: generated.file,
  title: "f16",
  idea: "12's kernel with f16 storage and packed f16 multiply-adds per tile, flushed to f32.",
  // BK 16: f16 tiles are half the size, and a deeper tile halves the barriers per FMA.
  // F16=2: f16 tiles and packed f16 multiply-adds, written by 12's generator from these
  // parameters; the storage variant is F16=1.
  params: { ...generated.params, BK: 16, F16: 2 },
  // f16 tiles take half the bytes of 12's, so BK 32 fits beside the big tiles 12 searches.
  // GROUP_M stays at 12's default.
  space: {
    BM: [128, 256],
    BN: [128, 256],
    BK: [16, 32],
    TN: [8, 16],
    AHEAD: [0, 1],
    LITERAL_BUFFER: [0, 1],
  },
  workgroupStorageBytes: (p) => tileBytes(p, 2, 2),
  // f16 elements are read one at a time with bounds checks: any M, K and N, no padding.
  align: () => ANY,
  // The edge-strip kernel reads f32; the f16 kernels keep their bounds-checked edge tiles.
  edgeStrips: false,
  model: (s, p) => tiledModel(s, p.BM, p.BN, 2),
  requiredFeatures: ["shader-f16"],
  precision: "f16",
  // Inputs and output rounded to f16, and each tile's BK multiply-adds summed in f16.
  numerics: (p) => ({ storage: "f16", f16Run: p.BK }),
  // 12's generated loop with f16 tiles (generate.ts, F16=2).
  loop: (p) => warpTileLoop(p, p.TN, 1, 2),
  figure: f16Figure,
  change: {
    buildsOn: "generated",
    note: "14 is 12's generated kernel in half precision (13 adds plans per shape around it), " +
      "so it is compared with 12 at the same parameters: the precision changes, and with it each " +
      "vec4 load of A and B becomes four scalar f16 loads.",
  },
  suite: false,
  knob: {
    name: "BK",
    why: "BK is how many f16 multiply-adds each partial sum runs before it is added to f32, " +
      "and how often the workgroup meets at a barrier: compare the relative errors as well as " +
      "the speed.",
    points: [8, 16, 32].map((BK) => ({ BK })),
  },
};

/** f16 storage only (f32 tiles and arithmetic): half the bytes, but bytes were never the limit. */
export const storage: KernelSpec = {
  ...step,
  ...variantLayout(layout, "storage"),
  file: generated.file,
  title: "f16 storage, f32 math",
  idea: "Only the storage in f16: the bytes halve, but bytes were not what limited the kernel.",
  params: { ...step.params, F16: 1 },
  space: undefined,
  deviceTuned: false,
  workgroupStorageBytes: (p) => tileBytes(p, 2, 4),
  // Inputs and output rounded to f16, sums in f32.
  numerics: { storage: "f16", f16Run: 0 },
  knob: undefined,
  demo: true,
};

/**
 * The loads alone: A and B read as vec4<f16>, one load per four values where K and N are
 * multiples of 4, as step 12 reads f32 (F16_VEC4=1). Beside f16 and f16 storage at one tile, it
 * tests whether the scalar f16 loads are what f16 costs.
 */
export const vec4Loads: KernelSpec = {
  ...step,
  ...variantLayout(layout, "vec4"),
  file: generated.file,
  title: "f16, vec4<f16> loads",
  idea: "f16 with one vec4<f16> load per four values of A and B, as step 12 reads f32.",
  params: { ...step.params, F16_VEC4: 1 },
  space: undefined,
  deviceTuned: false,
  knob: undefined,
  demo: true,
};

/** f16 storage (f32 tiles and math) with vec4<f16> loads: the storage variant's loads alone. */
export const storageVec4Loads: KernelSpec = {
  ...storage,
  ...variantLayout(layout, "storage_vec4"),
  file: generated.file,
  title: "f16 storage, vec4<f16> loads",
  idea: "f16 storage with one vec4<f16> load per four values, widened to f32 tiles and math.",
  params: { ...storage.params, F16_VEC4: 1 },
};

/**
 * The same four values per load as `vec4Loads`, loaded as two 32-bit words and unpacked with
 * `unpack2x16float` (F16_VEC4=2): 8 bytes per load either way, so beside `vec4Loads` it tests
 * whether the loads cost as f16 loads or as 8-byte loads.
 */
export const u32Loads: KernelSpec = {
  ...vec4Loads,
  ...variantLayout(layout, "u32"),
  title: "f16, vec2<u32> loads",
  idea: "f16 with each four values of A and B loaded as two 32-bit words and unpacked.",
  params: { ...step.params, F16_VEC4: 2 },
};

/** f16 storage (f32 tiles and math) with vec2<u32> loads, unpacked straight to f32. */
export const storageU32Loads: KernelSpec = {
  ...storageVec4Loads,
  ...variantLayout(layout, "storage_u32"),
  title: "f16 storage, vec2<u32> loads",
  idea: "f16 storage with each four values loaded as two 32-bit words, unpacked to f32 tiles.",
  params: { ...storage.params, F16_VEC4: 2 },
};
