/** f16: 10's kernel with f16 storage and packed f16 multiply-adds, and its storage-only variant. */
import { tiledModel } from "../../lib/kernels/cost.ts";
import { type KernelSpec, stepLayout, variantLayout } from "../../lib/kernels/spec.ts";
import { ANY, paddedTileBytes } from "../../lib/kernels/tiling.ts";
import { step as doubleBuffer } from "../10_double_buffer/step.ts";

const layout = stepLayout(import.meta.url);

export const step: KernelSpec = {
  ...doubleBuffer,
  ...layout,
  title: "f16",
  idea: "f16 storage and packed f16 multiply-adds per tile, flushed to f32; its own accuracy.",
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
  // lavapipe, 150 seeds gave a median of 7.0e-4 and a maximum of 3.9e-3, and one test saw 6.6e-3.
  // 1e-2 passes that tail; a wrong result is off by ~1 (or NaN).
  tolerance: 1e-2,
  knob: {
    name: "BK",
    why: "f16 tiles take half the bytes, so a 16-deep tile fits where 10 keeps 8; BK is also " +
      "how many f16 multiply-adds each partial sum runs before it is added to f32: compare the " +
      "relative errors as well as the speed.",
    points: [8, 16].map((BK) => ({ BK })),
  },
};

/** f16 storage only (f32 arithmetic): half the bytes, but bytes were never the limit. */
export const storage: KernelSpec = {
  ...step,
  ...variantLayout(layout, "storage", "storage.wgsl"),
  title: "f16 storage, f32 math",
  idea: "Only the storage in f16: the bytes halve, but bytes were not what limited the kernel.",
  params: doubleBuffer.params,
  workgroupStorageBytes: (p) => 2 * paddedTileBytes(p),
  // Inputs and output rounded to f16: measured 3.3e-4 on the H200 at 4096 and 8192; at
  // 1 x 257 x 3 on lavapipe (150 seeds) median 3.5e-4, maximum 2.5e-3 (see f16's tail).
  tolerance: 5e-3,
  demo: true,
};
