/**
 * What naga (the WGSL compiler inside Deno's WebGPU, wgpu) puts into the SPIR-V of 11 and 12:
 * the bounds clamps on indices (`OpExtInst GLSL.std.450 UMin`) and the hidden counter that bounds
 * every loop. Read from the SPIR-V the Vulkan driver received (lab/naga/ captures it with a
 * Vulkan layer and writes data/naga/clamps.json); this module only reads the committed file.
 */

const NAGA_CLAMPS_FILE: URL = new URL("../data/naga/clamps.json", import.meta.url);

/** Clamps of one place in the module, split by what the clamped index selects. */
export interface ClampCounts {
  /** All UMin clamps on access-chain indices. */
  total: number;
  /** Index of an element of a workgroup array. */
  workgroupElement: number;
  /** Index of a component of a vec4 in a workgroup array (`As[i][lane]`). */
  workgroupLane: number;
  /** Index into a storage buffer (naga clamps none: wgpu leaves those to robust buffer access). */
  storage: number;
}

/** One kernel's SPIR-V as the driver got it for its pipeline. */
export interface NagaKernelReport {
  /** Ladder step id, e.g. "11_autotune". */
  kernel: string;
  /** "as is" (11), "all transforms" (12, the step's kernel), or which of 12's transforms are on. */
  variant: string;
  /** Tile parameters the pipeline was created with (override constants or generator input). */
  params: Record<string, number>;
  /** Words of SPIR-V handed to vkCreateShaderModule. */
  /**
   * SHA-256 of the WGSL it was compiled from, with its override constants: the test compares it
   * with today's kernel text, so a report of an older kernel cannot pass for this one.
   */
  sourceSha256: string;
  spirvWords: number;
  /** Loops in the module (OpLoopMerge), and how many of them carry naga's hidden counter. */
  loops: number;
  loopsWithCounter: number;
  /**
   * naga's guard on integer `/` and `%`: a helper function that divides by `select(d, 1, d == 0)`,
   * called wherever the divisor is not a constant it can check.
   */
  divisionGuards: { functions: number; calls: number; callsInHotLoop: number };
  /** Clamps on reachable code (blocks behind a branch on a constant are left out). */
  clamps: {
    /** Clamps in the hot loop behind a branch on a constant (never run; the driver drops them). */
    deadBranchInHotLoop: number;
    module: ClampCounts;
    /** Lexically inside the hot loop: the loop that reads the k-step fragments. */
    hotLoop: ClampCounts;
    /**
     * Hot-loop clamps of indices the loop cannot change (constants, values from before the loop,
     * arithmetic on them): the driver can compute them once, before the loop.
     */
    hotLoopInvariant: number;
    /** Distinct clamp expressions in the hot loop (UMin of the same operands counts once). */
    hotLoopDistinct: number;
  };
  hotLoop: {
    /** What the hot loop is, in words (11: the k loop; 12: the tile loop with the k steps written out). */
    what: string;
    /** k steps (one row of fragment reads and 64 multiply-adds) per trip of the hot loop. */
    kStepsPerTrip: number;
    /** Reachable SPIR-V instructions from the loop header to its merge block, per trip and per k step. */
    instructions: number;
    instructionsPerKStep: number;
    /** Clamps naga emits per k step (hot-loop clamps / k steps per trip). */
    clampsPerKStep: number;
    /**
     * Of those, the ones whose index changes inside the loop (it depends on a load or call in
     * it, e.g. of `p`): the driver must clamp them every trip. The others clamp values fixed for
     * the whole loop, which the driver can compute once, before it.
     */
    loopVariantClampsPerKStep: number;
    /** Distinct clamp expressions per k step (UMin of the same operands counts once). */
    distinctClampsPerKStep: number;
    /**
     * Distinct loop-variant clamps per k step: what is left for the driver to compute in the
     * loop after it merges repeats and moves the invariant ones before the loop.
     */
    distinctLoopVariantClampsPerKStep: number;
    /** Updates of naga's hidden loop counter per k step (1 per trip of a counted hot loop). */
    counterUpdatesPerKStep: number;
    /** Function calls inside the hot loop (their clamps are not counted in it). */
    calls: number;
  };
  /** Disassembly excerpts (spirv-dis --raw-id) with the constants and variables they use named. */
  excerpts: {
    fragmentRead: string;
    loopCounter: string;
    /** Where the clamp of a hot-loop index is computed, when that is outside the loop. */
    clampedIndexDefinition?: string;
  };
}

export interface NagaClamps {
  /** How the SPIR-V was obtained and read. */
  source: string;
  deno: string;
  /** Crate versions found in the deno binary's strings. */
  naga: string;
  wgpu: string;
  adapter: string;
  generated: string;
  kernels: NagaKernelReport[];
}

/** The committed naga report (data/naga/clamps.json). */
export async function loadNagaClamps(file: URL = NAGA_CLAMPS_FILE): Promise<NagaClamps> {
  return JSON.parse(await Deno.readTextFile(file)) as NagaClamps;
}
