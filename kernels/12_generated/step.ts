/**
 * Step 12: 11's kernel with its WGSL generated per parameter set (kernels/12_generated/generate.ts),
 * so that the hot loop's workgroup-array indices are literals plus loop-invariant parts and
 * naga's safety checks leave almost nothing to recompute in the loop. Same tile scheme, launch
 * order and matrix padding as 11; its own defaults (PAD 0) and search space (BK up to 32, the
 * look-ahead, the literal buffer).
 */
import { type KernelSpec, stepLayout } from "../../lib/steps/spec.ts";
import { tileBytes } from "../../lib/steps/tiling.ts";
import { step as autotuned } from "../11_autotune/step.ts";
import { ALL_TRANSFORMS, DEFAULTS, generatedParams, generateWgsl, whyInvalid } from "./generate.ts";
import { clampFigure } from "./figure.ts";
import { warpTileLoop } from "../../lib/model/loops.ts";

export { generatedParams };

const layout = stepLayout(import.meta.url);

const TRANSFORMS = Object.keys(ALL_TRANSFORMS);

export const step: KernelSpec = {
  ...autotuned,
  ...layout,
  title: "Generated WGSL",
  idea:
    "11 written out by TypeScript: literal tile rows and buffers leave naga's clamps nothing to redo.",
  file: `${layout.id}/generate.ts`,
  generate: (p) => generateWgsl(generatedParams(p)),
  params: { ...DEFAULTS },
  // LITERAL_BUFFER is searched: the tile it pays at is the device's to say. PAD is not
  // searched: the generated loop's remapped reads leave it nothing to remove, and it costs the
  // 128 x 256 x 16 tile its place in 48 KiB of workgroup memory.
  space: {
    BM: [64, 128, 256],
    BN: [64, 128, 256],
    BK: [8, 16, 32],
    GROUP_M: [1, 8],
    TN: [8, 16],
    AHEAD: [0, 1],
    LITERAL_BUFFER: [0, 1],
  },
  invalid: (p) => whyInvalid(generatedParams(p)),
  workgroupStorageBytes: (p) => tileBytes(p, 2),
  deviceTuned: true,
  // The generator writes 11's loop out; its stores index [k row][vec4 column] from
  // aRow = tid / (BK/4) and bRow = tid / (BN/4), the same offsets as 11's flat ones.
  loop: (p) => warpTileLoop(p, p.TN, 1),
  figure: clampFigure,
  knob: {
    name: "transforms",
    why: "The generator's three transforms turned on one after another: UNROLL writes the k " +
      "loop out, NESTED lays the tiles out as [buffer][k row][column], LITERAL_BUFFER makes the " +
      "buffer a tile reads a literal; with none, the text has 11's structure.",
    points: [[0, 0, 0], [1, 0, 0], [1, 1, 0], [1, 1, 1]].map(
      ([UNROLL, NESTED, LITERAL_BUFFER]) => ({ UNROLL, NESTED, LITERAL_BUFFER }),
    ),
    // AHEAD is a schedule, not a transform, but a cell that turns it on must see it named.
    label: (p) => [...TRANSFORMS, "AHEAD"].filter((t) => p[t]).join(" + ") || "none",
  },
};
