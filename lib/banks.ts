/**
 * Bank passes, measured: how long one warp's read of workgroup memory takes for a given pattern of
 * addresses across its 32 lanes, in passes (wavefronts) of the 32 banks (notebooks 06-09 show them
 * live through showBankPasses; lab/probe_banks.ts records them). The step model counts a
 * 16-byte read a quarter-warp (8 lanes) at a time, broadcasting only within the quarter
 * (lib/model/bounds.ts); counting the whole warp at once gives fewer passes for broadcasts. A
 * pattern both rules agree on calibrates the clock, and patterns where they differ tell which one
 * the GPU follows.
 *
 * Each pattern is one kernel: 256 invocations per workgroup fill 32 KiB of workgroup memory, then
 * each warp reads it `reads` times in its pattern, shifted by 128 bytes per read (so each lane
 * keeps its banks), XOR-ing what it reads into four accumulators written out at the end. XOR is
 * exact, so every invocation's output is checked against the same reads done on the CPU before
 * the kernel is timed (GPU timestamps, lib/timing.ts). A read of 32 distinct words in one bank
 * takes 32 passes under either rule: time over that time, times 32, is passes, with no clock.
 */
import { compileWgsl, type Gpu, readBuffer } from "./gpu.ts";
import { wavefronts } from "./model/bounds.ts";
import { timePasses, type Timing } from "./timing.ts";

const THREADS = 256;
const WORDS = 8192; // 32 KiB of u32
const BANKS = 32;

/** One warp's read: the element each lane asks for. */
export interface BankPattern {
  label: string;
  /** Bytes per lane: a u32 (f32) or a vec4. */
  width: 4 | 16;
  /** Element (of `width` bytes) read by lane `l` (0-31) of warp `w` (0-7). */
  at: (l: number, w: number) => number;
  /** The same in WGSL, from `l` and `w` (u32). */
  wgsl: string;
  /** Which step reads this way. */
  where: string;
}

/** The patterns' names: the calibration and the reads of steps 06-09. */
export type BankPatternName =
  | "one_pass"
  | "f32_4_apart"
  | "f32_32_apart"
  | "b06"
  | "vec4_adjacent"
  | "b07"
  | "a07"
  | "b08"
  | "b09"
  | "quarters_apart"
  | "quarters_all";

/** The patterns, by name. */
export const BANK_PATTERNS: Record<BankPatternName, BankPattern> = {
  one_pass: {
    label: "f32, 32 adjacent words",
    width: 4,
    at: (l, w) => w * 32 + l,
    wgsl: "w * 32u + l",
    where: "the loop's floor: one pass, so the time of everything but the banks",
  },
  f32_4_apart: {
    label: "f32, words 4 apart",
    width: 4,
    at: (l, w) => w * 128 + 4 * l,
    wgsl: "w * 128u + 4u * l",
    where: "a 4-way conflict",
  },
  f32_32_apart: {
    label: "f32, words 32 apart",
    width: 4,
    at: (l, w) => (w * 32 + 32 * l) % WORDS,
    wgsl: `(w * 32u + 32u * l) % ${WORDS}u`,
    where: "a 32-way conflict: the calibration, 32 passes",
  },
  b06: {
    label: "f32, 16 words 8 apart, each read twice",
    width: 4,
    at: (l, w) => w * 128 + 8 * (l % 16),
    wgsl: "w * 128u + 8u * (l % 16u)",
    where: "06's B read",
  },
  vec4_adjacent: {
    label: "vec4, 32 adjacent",
    width: 16,
    at: (l, w) => w * 32 + l,
    wgsl: "w * 32u + l",
    where: "512 bytes: the fewest passes for 32 distinct vec4s",
  },
  b07: {
    label: "vec4, 16 at 32 bytes apart, each read twice",
    width: 16,
    at: (l, w) => w * 32 + 2 * (l % 16),
    wgsl: "w * 32u + 2u * (l % 16u)",
    where: "07's B read",
  },
  a07: {
    label: "vec4, 2 distinct, 32 bytes apart",
    width: 16,
    at: (l, w) => w * 32 + 2 * Math.floor(l / 16),
    wgsl: "w * 32u + 2u * (l / 16u)",
    where: "07's A read",
  },
  b08: {
    label: "vec4, 16 adjacent, each read twice",
    width: 16,
    at: (l, w) => w * 32 + (l % 16),
    wgsl: "w * 32u + (l % 16u)",
    where: "08's B read",
  },
  b09: {
    label: "vec4, 8 adjacent, each read 4 times",
    width: 16,
    at: (l, w) => w * 32 + (l % 8),
    wgsl: "w * 32u + (l % 8u)",
    where: "09's B read",
  },
  quarters_apart: {
    label: "vec4, 4 in the same banks, one per quarter-warp",
    width: 16,
    at: (l, w) => w * 32 + 8 * Math.floor(l / 8),
    wgsl: "w * 32u + 8u * (l / 8u)",
    where: "4 passes by either rule",
  },
  quarters_all: {
    label: "vec4, 4 in the same banks, each quarter-warp all 4",
    width: 16,
    at: (l, w) => w * 32 + 8 * (l % 4),
    wgsl: "w * 32u + 8u * (l % 4u)",
    where: "16 passes by quarter-warps, 4 by whole warps",
  },
};

/** Byte offsets of warp 0's 32 lanes. */
const offsets = (p: BankPattern) => Array.from({ length: 32 }, (_, l) => p.at(l, 0) * p.width);

/** Passes by the step model's rule: a quarter-warp at a time for 16-byte reads. */
export const quarterWarpPasses = (p: BankPattern): number => wavefronts(offsets(p), p.width);

/** Passes if the whole warp were served at once: the most distinct words any bank holds. */
export const wholeWarpPasses = (p: BankPattern): number =>
  wavefronts(offsets(p), p.width, BANKS, 4, 32);

/** The kernel for one pattern: fill, barrier, `reads` reads shifted 128 bytes each, XOR, write. */
export function bankKernel(p: BankPattern, reads: number): string {
  const vec = p.width === 16;
  const elems = vec ? WORDS / 4 : WORDS;
  const type = vec ? "vec4<u32>" : "u32";
  const shift = 128 / p.width;
  const load = vec
    ? "tile[i] = vec4<u32>(src[4u * i], src[4u * i + 1u], src[4u * i + 2u], src[4u * i + 3u]);"
    : "tile[i] = src[i];";
  return `
@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
var<workgroup> tile: array<${type}, ${elems}>;

@compute @workgroup_size(${THREADS})
fn main(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
  for (var i = tid; i < ${elems}u; i += ${THREADS}u) {
    ${load}
  }
  workgroupBarrier();
  let l = tid % 32u;
  let w = tid / 32u;
  let base = ${p.wgsl};
  var a0 = ${type}(0u); var a1 = ${type}(0u); var a2 = ${type}(0u); var a3 = ${type}(0u);
  for (var r = 0u; r < ${reads / 4}u; r++) {
    let s = base + r * ${4 * shift}u;
    a0 ^= tile[s & ${elems - 1}u];
    a1 ^= tile[(s + ${shift}u) & ${elems - 1}u];
    a2 ^= tile[(s + ${2 * shift}u) & ${elems - 1}u];
    a3 ^= tile[(s + ${3 * shift}u) & ${elems - 1}u];
  }
  let a = a0 ^ a1 ^ a2 ^ a3;
  dst[wid.x * ${THREADS}u + tid] = ${vec ? "a.x ^ a.y ^ a.z ^ a.w" : "a"};
}
`;
}

/** What every invocation writes, from the same reads on the CPU (the same in every workgroup). */
function expected(p: BankPattern, src: Uint32Array, reads: number): Uint32Array {
  const elems = p.width === 16 ? WORDS / 4 : WORDS;
  const shift = 128 / p.width;
  const out = new Uint32Array(THREADS);
  for (let tid = 0; tid < THREADS; tid++) {
    const base = p.at(tid % 32, Math.floor(tid / 32));
    let acc = 0;
    for (let r = 0; r < reads; r++) {
      const e = (base + r * shift) & (elems - 1);
      if (p.width === 16) { for (let c = 0; c < 4; c++) acc ^= src[4 * e + c]; }
      else acc ^= src[e];
    }
    out[tid] = acc >>> 0;
  }
  return out;
}

/** One pattern measured. */
export interface BankResult {
  name: BankPatternName;
  pattern: BankPattern;
  /** Every invocation's XOR matched the CPU's. */
  validated: boolean;
  timing: Timing;
  quarterWarp: number;
  wholeWarp: number;
  /** 32 x this pattern's time over the 32-way conflict's: passes per warp read, measured. */
  passes: number;
}

export interface BankOptions {
  /** Reads per invocation (a multiple of 4); default 4096, or 64 on a software adapter. */
  reads?: number;
  /** Workgroups per launch; default 2048 (enough to fill a large GPU), or 8 in software. */
  workgroups?: number;
  /** Timed GPU time per pattern (ms). */
  budgetMs?: number;
}

/**
 * Measure the named patterns (and the 32-way conflict that calibrates them, run first): each
 * validated, then timed. Throws if a pattern's reads come back wrong.
 */
export async function measureBankPasses(
  gpu: Gpu,
  names: BankPatternName[],
  opts: BankOptions = {},
): Promise<BankResult[]> {
  const software = gpu.summary.software;
  const reads = opts.reads ?? (software ? 64 : 4096);
  const workgroups = opts.workgroups ?? (software ? 8 : 2048);
  const budgetMs = opts.budgetMs ?? (software ? 20 : 400);
  const { device } = gpu;
  const src = new Uint32Array(WORDS);
  crypto.getRandomValues(src);
  const srcBuf = device.createBuffer({
    size: src.byteLength,
    usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST,
  });
  device.queue.writeBuffer(srcBuf, 0, src);
  const dstBytes = workgroups * THREADS * 4;
  const dstBuf = device.createBuffer({
    size: dstBytes,
    usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
  });
  const order: BankPatternName[] = ["f32_32_apart", ...names.filter((n) => n !== "f32_32_apart")];
  const measured = new Map<BankPatternName, { validated: boolean; timing: Timing }>();
  try {
    for (const name of order) {
      const p: BankPattern = BANK_PATTERNS[name];
      const module = await compileWgsl(gpu, bankKernel(p, reads), `banks: ${p.label}`);
      const pipeline = await device.createComputePipelineAsync({
        layout: "auto",
        compute: { module, entryPoint: "main" },
      });
      const bind = device.createBindGroup({
        layout: pipeline.getBindGroupLayout(0),
        entries: [srcBuf, dstBuf].map((buffer, binding) => ({ binding, resource: { buffer } })),
      });
      const encode = (pass: GPUComputePassEncoder) => {
        pass.setPipeline(pipeline);
        pass.setBindGroup(0, bind);
        pass.dispatchWorkgroups(workgroups);
      };
      device.queue.writeBuffer(dstBuf, 0, new Uint32Array(dstBytes / 4).fill(0xdeadbeef));
      const enc = device.createCommandEncoder();
      const pass = enc.beginComputePass();
      encode(pass);
      pass.end();
      device.queue.submit([enc.finish()]);
      const got = new Uint32Array(await readBuffer(gpu, dstBuf, dstBytes));
      const want = expected(p, src, reads);
      const validated = got.every((v, i) => v === want[i % THREADS]);
      if (!validated) throw new Error(`bank probe ${p.label}: the reads came back wrong`);
      measured.set(name, { validated, timing: await timePasses(gpu, encode, { budgetMs }) });
    }
  } finally {
    srcBuf.destroy();
    dstBuf.destroy();
  }
  const unit = measured.get("f32_32_apart")!.timing.medianMs / 32;
  return names.map((name) => {
    const pattern: BankPattern = BANK_PATTERNS[name];
    const { validated, timing } = measured.get(name)!;
    return {
      name,
      pattern,
      validated,
      timing,
      quarterWarp: quarterWarpPasses(pattern),
      wholeWarp: wholeWarpPasses(pattern),
      passes: timing.medianMs / unit,
    };
  });
}
