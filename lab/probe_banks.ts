/**
 * Device probe (lab: not part of the product): how many passes (wavefronts) of workgroup memory
 * one warp's read takes, for the read patterns of steps 06-09. The step model assumes a 16-byte
 * read is served 8 invocations per pass (so at least 4 passes per warp), while the figures of 08
 * and 09 count per warp (1 pass when the 32 lanes ask for at most 128 distinct bytes). The two
 * rules disagree on 07's B read (8 passes or 4) and on the broadcasts of 07's A, 08's B and 09's B;
 * where both counts fall under the loop's issue floor (about 4.7 clocks per vec4 read here), a
 * pattern with the same banks (4 vec4s 128 bytes apart, every quarter-warp asking for all 4: 16
 * passes by quarter-warps, 4 per warp) tells the two rules apart. The f32 patterns calibrate one
 * pass per clock.
 *
 * Each pattern is one kernel: 256 invocations per workgroup fill 32 KiB of workgroup memory, then
 * every warp reads it READS times in its pattern, shifted by 128 bytes per read (the banks each
 * lane hits stay the same), XOR-ing what it reads into four accumulators written out at the end.
 * The XOR is exact, so every output is checked against the same reads done on the CPU. GPU time
 * from timestamps (lib/timing.ts). Imports only lib/ (the GPU host has no package registry).
 *
 *   deno run -A lab/probe_banks.ts --out DIR [--quick]
 *
 * Writes DIR/probe.json and prints one line per pattern: ms, and clocks per warp read per SM at
 * the clock given by --mhz (default: the H200's 1 980 MHz boost; the ratios do not depend on it).
 */
import { acquireGpu, compileWgsl, readBuffer } from "../lib/gpu.ts";
import { currentCommit } from "../lib/record.ts";
import { timePasses } from "../lib/timing.ts";
import { probeRecord } from "./probe_record.ts";

const args = Deno.args;
const flag = (name: string) => args.includes(name) ? args[args.indexOf(name) + 1] : undefined;
const outDir = flag("--out") ?? "/tmp/probe";
const quick = args.includes("--quick");
const mhz = Number(flag("--mhz") ?? 1980);
await Deno.mkdir(outDir, { recursive: true });

const THREADS = 256;
const WORDS = 8192; // 32 KiB of u32
const READS = quick ? 64 : 4096; // reads per invocation (4 per loop trip)
const gpu = await acquireGpu();
const sms = quick ? 1 : 132;
const WORKGROUPS = quick ? 8 : sms * 16;

interface Pattern {
  label: string;
  /** Element read by lane `l` (0-31) of warp `w` (0-7) at shift 0, in elements of `width`. */
  at: (l: number, w: number) => number;
  /** The same in WGSL, from `l` and `w` (u32). */
  wgsl: string;
  width: 4 | 16;
  /** Passes per warp read: 8 lanes per pass for 16-byte reads (the model), and per warp (figures). */
  model: number;
  perWarp: number;
  /** Which step reads this way. */
  where: string;
}

const PATTERNS: Pattern[] = [
  {
    label: "f32, 32 adjacent words",
    at: (l, w) => w * 32 + l,
    wgsl: "w * 32u + l",
    width: 4,
    model: 1,
    perWarp: 1,
    where: "calibration: one pass",
  },
  {
    label: "f32, words 2 apart",
    at: (l, w) => w * 64 + 2 * l,
    wgsl: "w * 64u + 2u * l",
    width: 4,
    model: 2,
    perWarp: 2,
    where: "calibration: 2-way conflict",
  },
  {
    label: "f32, words 4 apart",
    at: (l, w) => w * 128 + 4 * l,
    wgsl: "w * 128u + 4u * l",
    width: 4,
    model: 4,
    perWarp: 4,
    where: "calibration: 4-way conflict",
  },
  {
    label: "f32, words 32 apart",
    at: (l, w) => (w * 32 + 32 * l) % 8192,
    wgsl: "(w * 32u + 32u * l) % 8192u",
    width: 4,
    model: 32,
    perWarp: 32,
    where: "calibration: 32-way conflict",
  },
  {
    label: "f32, 16 words 8 apart, each read twice (06's B)",
    at: (l, w) => w * 128 + 8 * (l % 16),
    wgsl: "w * 128u + 8u * (l % 16u)",
    width: 4,
    model: 4,
    perWarp: 4,
    where: "06's B reads (tx = lane % 16, 8 columns each)",
  },
  {
    label: "f32, 2 words 64 apart (06's A)",
    at: (l, w) => w * 128 + 64 * Math.floor(l / 16),
    wgsl: "w * 128u + 64u * (l / 16u)",
    width: 4,
    model: 2,
    perWarp: 2,
    where: "06's A reads (two rows ty per warp, 8 x BK words apart)",
  },
  {
    label: "vec4, 32 adjacent",
    at: (l, w) => w * 32 + l,
    wgsl: "w * 32u + l",
    width: 16,
    model: 4,
    perWarp: 4,
    where: "calibration: 512 bytes, the fewest passes for 32 vec4s",
  },
  {
    label: "vec4, 32 at 32 bytes apart",
    at: (l, w) => w * 64 + 2 * l,
    wgsl: "w * 64u + 2u * l",
    width: 16,
    model: 8,
    perWarp: 8,
    where: "calibration: 2-way conflict",
  },
  {
    label: "vec4, 16 at 32 bytes apart, each read twice (07's B)",
    at: (l, w) => w * 32 + 2 * (l % 16),
    wgsl: "w * 32u + 2u * (l % 16u)",
    width: 16,
    model: 8,
    perWarp: 4,
    where: "07's b0 read (tx = lane % 16)",
  },
  {
    label: "vec4, 16 adjacent, each read twice (08's B)",
    at: (l, w) => w * 32 + (l % 16),
    wgsl: "w * 32u + (l % 16u)",
    width: 16,
    model: 4,
    perWarp: 2,
    where: "08's b0 read",
  },
  {
    label: "vec4, 8 adjacent, each read 4 times (09's B)",
    at: (l, w) => w * 32 + (l % 8),
    wgsl: "w * 32u + (l % 8u)",
    width: 16,
    model: 4,
    perWarp: 1,
    where: "09's b0 read (4 x 8 lanes)",
  },
  {
    label: "vec4, 2 distinct, 32 bytes apart (07's A)",
    at: (l, w) => w * 32 + 2 * Math.floor(l / 16),
    wgsl: "w * 32u + 2u * (l / 16u)",
    width: 16,
    model: 4,
    perWarp: 1,
    where: "07's a0 read (two rows ty per warp)",
  },
  {
    label: "vec4, 4 distinct 128 bytes apart, one per quarter-warp",
    at: (l, w) => w * 32 + 8 * Math.floor(l / 8),
    wgsl: "w * 32u + 8u * (l / 8u)",
    width: 16,
    model: 4,
    perWarp: 4,
    where: "control for the next: same banks, each quarter-warp on one vec4",
  },
  {
    label: "vec4, 4 distinct 128 bytes apart, every quarter-warp all 4",
    at: (l, w) => w * 32 + 8 * (l % 4),
    wgsl: "w * 32u + 8u * (l % 4u)",
    width: 16,
    model: 16,
    perWarp: 4,
    where: "are quarter-warps served apart? 16 passes if so, 4 if the warp is",
  },
  {
    label: "vec4, all lanes one vec4",
    at: (_l, w) => w * 32,
    wgsl: "w * 32u",
    width: 16,
    model: 4,
    perWarp: 1,
    where: "a broadcast",
  },
];

/** The kernel for one pattern: fill, barrier, READS reads shifted 128 bytes each, XOR, write. */
function kernel(p: Pattern): string {
  const elems = p.width === 16 ? WORDS / 4 : WORDS;
  const type = p.width === 16 ? "vec4<u32>" : "u32";
  const shift = p.width === 16 ? 8 : 32; // 128 bytes
  const load = p.width === 16
    ? "tile[i] = vec4<u32>(src[4u * i], src[4u * i + 1u], src[4u * i + 2u], src[4u * i + 3u]);"
    : "tile[i] = src[i];";
  const fold = p.width === 16 ? "a.x ^ a.y ^ a.z ^ a.w" : "a";
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
  for (var r = 0u; r < ${READS / 4}u; r++) {
    let s = base + r * ${4 * shift}u;
    a0 ^= tile[s & ${elems - 1}u];
    a1 ^= tile[(s + ${shift}u) & ${elems - 1}u];
    a2 ^= tile[(s + ${2 * shift}u) & ${elems - 1}u];
    a3 ^= tile[(s + ${3 * shift}u) & ${elems - 1}u];
  }
  let a = a0 ^ a1 ^ a2 ^ a3;
  dst[wid.x * ${THREADS}u + tid] = ${fold};
}
`;
}

/** What every invocation writes, from the same reads on the CPU (the same for every workgroup). */
function expected(p: Pattern, src: Uint32Array): Uint32Array {
  const elems = p.width === 16 ? WORDS / 4 : WORDS;
  const shift = p.width === 16 ? 8 : 32;
  const out = new Uint32Array(THREADS);
  for (let tid = 0; tid < THREADS; tid++) {
    const base = p.at(tid % 32, Math.floor(tid / 32));
    let acc = 0;
    for (let r = 0; r < READS; r++) {
      const e = (base + r * shift) & (elems - 1);
      if (p.width === 16) {
        for (let c = 0; c < 4; c++) acc ^= src[4 * e + c];
      } else acc ^= src[e];
    }
    out[tid] = acc >>> 0;
  }
  return out;
}

const started = new Date().toISOString();
const commit = await currentCommit();
const { rows, save } = probeRecord<Record<string, unknown>>(`${outDir}/probe.json`, {
  device: gpu.summary,
  started,
  commit,
  threads: THREADS,
  workgroups: WORKGROUPS,
  readsPerInvocation: READS,
  workgroupBytes: WORDS * 4,
  clockMHz: mhz,
  sms,
});
console.error(`device: ${gpu.summary.description}, ${started}, commit ${commit}`);

const { device } = gpu;
const src = new Uint32Array(WORDS);
for (let i = 0; i < WORDS; i++) src[i] = (Math.random() * 2 ** 32) >>> 0;
const srcBuf = device.createBuffer({
  size: src.byteLength,
  usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST,
});
device.queue.writeBuffer(srcBuf, 0, src);
const dstBytes = WORKGROUPS * THREADS * 4;
const dstBuf = device.createBuffer({
  size: dstBytes,
  usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
});
const warpReads = WORKGROUPS * (THREADS / 32) * READS;

for (const p of PATTERNS) {
  const module = await compileWgsl(gpu, kernel(p), `banks: ${p.label}`);
  const pipeline = device.createComputePipeline({
    layout: "auto",
    compute: { module, entryPoint: "main" },
  });
  const bind = device.createBindGroup({
    layout: pipeline.getBindGroupLayout(0),
    entries: [{ binding: 0, resource: { buffer: srcBuf } }, {
      binding: 1,
      resource: { buffer: dstBuf },
    }],
  });
  const encode = (pass: GPUComputePassEncoder) => {
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, bind);
    pass.dispatchWorkgroups(WORKGROUPS);
  };
  // Poison, run once, check every invocation's XOR.
  device.queue.writeBuffer(dstBuf, 0, new Uint32Array(dstBytes / 4).fill(0xdeadbeef));
  const enc = device.createCommandEncoder();
  const pass = enc.beginComputePass();
  encode(pass);
  pass.end();
  device.queue.submit([enc.finish()]);
  const got = new Uint32Array(await readBuffer(gpu, dstBuf, dstBytes));
  const want = expected(p, src);
  let wrong = 0;
  for (let i = 0; i < got.length; i++) if (got[i] !== want[i % THREADS]) wrong++;
  const t = await timePasses(gpu, encode, { budgetMs: quick ? 20 : 400 });
  const clocks = (t.medianMs * 1e-3 * mhz * 1e6 * sms) / warpReads;
  const row = {
    label: p.label,
    where: p.where,
    width: p.width,
    passesModel: p.model,
    passesPerWarp: p.perWarp,
    validated: wrong === 0,
    wrong,
    medianMs: t.medianMs,
    minMs: t.minMs,
    maxMs: t.maxMs,
    reps: t.reps,
    clocksPerWarpReadPerSM: clocks,
  };
  rows.push(row);
  save();
  console.log(
    `${p.label.padEnd(56)} ${wrong === 0 ? "ok " : "BAD"} ${t.medianMs.toFixed(3)} ms ` +
      `(${(((t.maxMs - t.minMs) / t.medianMs) * 100).toFixed(1)}%, ${t.reps}) ` +
      `${clocks.toFixed(2)} clocks/read/SM; model ${p.model}, per warp ${p.perWarp}`,
  );
}
