/**
 * Measured machine ceilings for the roofline: streaming memory bandwidth, FP32 FMA throughput
 * and, where the adapter has `shader-f16`, packed f16 FMA throughput, each the best of a small
 * sweep of launch shapes, timed with GPU timestamps.
 * Works on any adapter; on a software adapter the sizes shrink so it stays quick.
 */
import { compileWgsl, type Gpu, loadKernelSource, readBuffer, scoped } from "./gpu.ts";
import type { BandwidthTrial, Ceilings, FmaTrial } from "./record.ts";
import { timePasses } from "./timing.ts";

/** Unrolled FMA rounds per loop iteration in kernels/ceiling_fp32.wgsl and ceiling_f16.wgsl. */
const FMA_ROUNDS = 8;
const MiB = 1 << 20;

export interface CeilingOptions {
  /** Bytes of each streamed buffer (default: 1 GiB on a GPU, 32 MiB on a software adapter). */
  bandwidthBytes?: number;
  /** Target GPU time of one timed pass; work is scaled to reach it. */
  passMs?: number;
  /** Timed passes per configuration. */
  reps?: number;
  /** Report each trial as it finishes (for progress displays). */
  onTrial?: (trial: BandwidthTrial | FmaTrial) => void;
}

/** Measure the ceilings on this device: bandwidth, FP32, then f16 when the adapter has it. */
export async function measureCeilings(gpu: Gpu, opts: CeilingOptions = {}): Promise<Ceilings> {
  const bandwidth = await measureBandwidth(gpu, opts);
  const fp32 = await measureFp32(gpu, opts);
  const f16 = gpu.has("shader-f16") ? await measureF16(gpu, opts) : [];
  const bestBw = best(bandwidth, (t) => t.gbs);
  const bestFp = best(fp32, (t) => t.gflops);
  const bestF16 = f16.length ? best(f16, (t) => t.gflops) : undefined;
  return {
    bandwidthGBs: bestBw.gbs,
    fp32Gflops: bestFp.gflops,
    bandwidthKernel: bestBw.kernel,
    bandwidthBufferBytes: bestBw.bufferBytes,
    fp32Chains: bestFp.chains,
    fp32Invocations: bestFp.invocations,
    timing: gpu.has("timestamp-query") ? "timestamp-query" : "wall-clock-batch",
    bandwidthTrials: bandwidth,
    fp32Trials: fp32,
    ...(bestF16
      ? {
        f16Gflops: bestF16.gflops,
        f16Chains: bestF16.chains,
        f16Invocations: bestF16.invocations,
        f16Trials: f16,
      }
      : {}),
  };
}

function best<T>(trials: T[], value: (t: T) => number): T {
  return trials.reduce((a, b) => (value(b) > value(a) ? b : a));
}

/** Workgroup grid for `groups` workgroups, split over y past the per-dimension limit. */
function grid(gpu: Gpu, groups: number): [number, number] {
  const maxX = gpu.device.limits.maxComputeWorkgroupsPerDimension;
  const gy = Math.ceil(groups / maxX);
  return [Math.ceil(groups / gy), gy];
}

function uniformBuffer(gpu: Gpu, data: ArrayBuffer): GPUBuffer {
  const buf = gpu.device.createBuffer({
    size: data.byteLength,
    usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST,
  });
  gpu.device.queue.writeBuffer(buf, 0, data);
  return buf;
}

/** One dispatch ready to encode. */
interface Launch {
  pipeline: GPUComputePipeline;
  bind: GPUBindGroup;
  grid: [number, number];
}

function encodeLaunch(pass: GPUComputePassEncoder, l: Launch) {
  pass.setPipeline(l.pipeline);
  pass.setBindGroup(0, l.bind);
  pass.dispatchWorkgroups(l.grid[0], l.grid[1], 1);
}

/**
 * Bytes of each buffer the bandwidth ceiling streams: `wanted`, else 1 GiB (32 MiB on a software
 * adapter), capped by what the adapter binds, in whole vec4s.
 */
export function bandwidthBufferBytes(
  limits: Pick<GPUSupportedLimits, "maxBufferSize" | "maxStorageBufferBindingSize">,
  software: boolean,
  wanted = software ? 32 * MiB : 1024 * MiB,
): number {
  const cap = Math.min(limits.maxStorageBufferBindingSize, limits.maxBufferSize);
  return Math.floor(Math.min(wanted, cap) / 16) * 16;
}

/**
 * Streaming bandwidth: `copy` (read + write) and `read` (read-only sum) over vec4 buffers,
 * swept over workgroup size and vec4s per invocation. Bytes moved per second, GB/s.
 */
export async function measureBandwidth(
  gpu: Gpu,
  opts: CeilingOptions = {},
): Promise<BandwidthTrial[]> {
  const { device } = gpu;
  const software = gpu.summary.software;
  const bytes = bandwidthBufferBytes(device.limits, software, opts.bandwidthBytes);
  const count = bytes / 16;
  const module = await compileWgsl(
    gpu,
    await loadKernelSource("ceiling_bandwidth.wgsl"),
    "ceiling_bandwidth.wgsl",
  );
  const usage = GPUBufferUsage.STORAGE;
  const src = device.createBuffer({ size: bytes, usage, label: "bandwidth src" });
  const dst = device.createBuffer({ size: bytes, usage, label: "bandwidth dst" });
  const owned: GPUBuffer[] = [src, dst];

  const launch = (entryPoint: string, wg: number, per: number, out: GPUBuffer): Launch => {
    const invocations = Math.ceil(count / per);
    const g = grid(gpu, Math.ceil(invocations / wg));
    const params = new ArrayBuffer(16);
    new Uint32Array(params).set([count, g[0] * g[1] * wg]);
    // A sentinel no sum of the init values can equal.
    new Float32Array(params)[2] = -1.5e38;
    const args = uniformBuffer(gpu, params);
    owned.push(args);
    const pipeline = device.createComputePipeline({
      layout: "auto",
      compute: { module, entryPoint, constants: { WG: wg, PER: per } },
    });
    const entries: GPUBindGroupEntry[] = entryPoint === "init"
      ? [{ binding: 1, resource: { buffer: out } }]
      : [{ binding: 0, resource: { buffer: src } }, { binding: 1, resource: { buffer: out } }];
    entries.push({ binding: 2, resource: { buffer: args } });
    const bind = device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries });
    return { pipeline, bind, grid: g };
  };

  const trials: BandwidthTrial[] = [];
  try {
    await scoped(gpu, () => {
      const enc = device.createCommandEncoder();
      const pass = enc.beginComputePass();
      encodeLaunch(pass, launch("init", 256, 4, src));
      pass.end();
      device.queue.submit([enc.finish()]);
    });
    const shapes = software
      ? [{ wg: 64, per: 4 }, { wg: 256, per: 4 }]
      : [{ wg: 256, per: 1 }, { wg: 256, per: 4 }, { wg: 512, per: 4 }, { wg: 256, per: 8 }];
    for (const kernel of ["copy", "read"] as const) {
      for (const { wg, per } of shapes) {
        const entry = kernel === "copy" ? "copy_vec4" : "read_sum";
        const l = await scoped(gpu, () => launch(entry, wg, per, dst));
        const moved = kernel === "copy" ? 2 * bytes : bytes;
        const t = await timePasses(gpu, (pass) => encodeLaunch(pass, l), {
          warmup: 2,
          reps: opts.reps ?? (software ? 5 : 20),
        });
        const trial: BandwidthTrial = {
          kernel,
          workgroupSize: wg,
          perInvocation: per,
          bufferBytes: bytes,
          bytesMoved: moved,
          medianMs: t.medianMs,
          gbs: moved / (t.medianMs * 1e6),
        };
        trials.push(trial);
        opts.onTrial?.(trial);
      }
    }
  } finally {
    owned.forEach((b) => b.destroy());
  }
  return trials;
}

/** An FMA-throughput kernel: its file, scalar lanes per accumulator, accumulator counts swept. */
interface FmaKernel {
  file: string;
  lanes: number;
  gpu: number[];
  software: number[];
}

/** vec4<f32> accumulators: 4 scalar chains each. */
const FP32_FMA: FmaKernel = {
  file: "ceiling_fp32.wgsl",
  lanes: 4,
  gpu: [2, 4, 8],
  software: [4, 8],
};
/** Packed vec2<f16> accumulators: 2 scalar chains each. */
const F16_FMA: FmaKernel = {
  file: "ceiling_f16.wgsl",
  lanes: 2,
  gpu: [4, 8, 16],
  software: [8, 16],
};

/** Floats the FMA kernels' sink holds; the f16 kernel stores one per invocation below this. */
const SINK_FLOATS = 4096;

/** Loop count, x and y of one FMA launch. */
interface FmaArgs {
  iters: number;
  x: number;
  y: number;
}

/** x < 1 so every chain converges to y / (1 - x) (about 1): no overflow, no denormals. */
const TIMED_ARGS = { x: 0.999, y: 0.001 };

/** A pipeline and bind group for `accumulators` accumulators over about `invocations`. */
function fmaLauncher(gpu: Gpu, module: GPUShaderModule, sink: GPUBuffer, owned: GPUBuffer[]) {
  const wg = 256;
  return (accumulators: number, invocations: number, args: FmaArgs): Launch => {
    const params = new ArrayBuffer(16);
    new Uint32Array(params)[0] = args.iters;
    // The last word is the FP32 kernel's sentinel, which no sum reaches (f16's ignores it).
    new Float32Array(params).set([args.x, args.y, -3.25e38], 1);
    const uniform = uniformBuffer(gpu, params);
    owned.push(uniform);
    const pipeline = gpu.device.createComputePipeline({
      layout: "auto",
      compute: { module, entryPoint: "fma_peak", constants: { WG: wg, CHAINS: accumulators } },
    });
    const bind = gpu.device.createBindGroup({
      layout: pipeline.getBindGroupLayout(0),
      entries: [
        { binding: 0, resource: { buffer: sink } },
        { binding: 1, resource: { buffer: uniform } },
      ],
    });
    return { pipeline, bind, grid: grid(gpu, Math.ceil(invocations / wg)) };
  };
}

/**
 * FMA throughput of one kernel: each accumulator count over a range of grid sizes, the loop
 * count scaled so each pass takes about `passMs`. GFLOP/s, 2 FLOP per scalar FMA.
 */
async function measureFma(
  gpu: Gpu,
  kernel: FmaKernel,
  opts: CeilingOptions,
  check?: (module: GPUShaderModule, accumulators: number[]) => Promise<void>,
): Promise<FmaTrial[]> {
  const software = gpu.summary.software;
  const passMs = opts.passMs ?? (software ? 20 : 5);
  const module = await compileWgsl(gpu, await loadKernelSource(kernel.file), kernel.file);
  const counts = software ? kernel.software : kernel.gpu;
  await check?.(module, counts);
  const sink = gpu.device.createBuffer({
    size: 4 * SINK_FLOATS,
    usage: GPUBufferUsage.STORAGE,
    label: "sink",
  });
  const owned: GPUBuffer[] = [sink];
  const launch = fmaLauncher(gpu, module, sink, owned);
  const grids = software ? [1 << 10, 1 << 12] : [1 << 16, 1 << 18, 1 << 20, 1 << 21];

  const trials: FmaTrial[] = [];
  try {
    for (const accumulators of counts) {
      for (const wanted of grids) {
        // Calibrate on a short run, then scale the loop count to the target pass time.
        const probeIters = software ? 8 : 64;
        const probe = await scoped(
          gpu,
          () => launch(accumulators, wanted, { iters: probeIters, ...TIMED_ARGS }),
        );
        const p = await timePasses(gpu, (pass) => encodeLaunch(pass, probe), {
          warmup: 1,
          reps: 3,
        });
        const iters = Math.max(
          probeIters,
          Math.min(1 << 20, Math.round(probeIters * passMs / Math.max(p.medianMs, 1e-3))),
        );
        const l = await scoped(gpu, () => launch(accumulators, wanted, { iters, ...TIMED_ARGS }));
        const invocations = l.grid[0] * l.grid[1] * 256;
        const t = await timePasses(gpu, (pass) => encodeLaunch(pass, l), {
          warmup: 2,
          reps: opts.reps ?? (software ? 5 : 20),
        });
        const chains = kernel.lanes * accumulators;
        const flops = 2 * chains * FMA_ROUNDS * iters * invocations;
        const trial: FmaTrial = {
          chains,
          invocations,
          workgroupSize: 256,
          iters,
          flops,
          medianMs: t.medianMs,
          gflops: flops / (t.medianMs * 1e6),
        };
        trials.push(trial);
        opts.onTrial?.(trial);
      }
    }
  } finally {
    owned.forEach((b) => b.destroy());
  }
  return trials;
}

/**
 * FP32 FMA throughput: 2, 4 or 8 vec4 accumulators per invocation (kernels/ceiling_fp32.wgsl),
 * over a range of grid sizes.
 */
export function measureFp32(gpu: Gpu, opts: CeilingOptions = {}): Promise<FmaTrial[]> {
  return measureFma(gpu, FP32_FMA, opts);
}

/**
 * Packed f16 FMA throughput: 4, 8 or 16 vec2<f16> accumulators per invocation
 * (kernels/ceiling_f16.wgsl), over a range of grid sizes; needs `shader-f16`. The kernel's
 * arithmetic is checked against the CPU first (checkF16Chains), so the number is known to
 * count FMAs that really ran.
 */
export function measureF16(gpu: Gpu, opts: CeilingOptions = {}): Promise<FmaTrial[]> {
  return measureFma(gpu, F16_FMA, opts, async (module, counts) => {
    for (const accumulators of counts) {
      const { gpu: got, cpu } = await runF16Chains(gpu, module, accumulators);
      const bad = got.findIndex((v, i) => v !== cpu[i]);
      if (bad >= 0) {
        throw new Error(
          `ceiling_f16.wgsl with ${accumulators} accumulators: invocation ${bad} summed ` +
            `${got[bad]}, the CPU ${cpu[bad]}`,
        );
      }
    }
  });
}

/**
 * Arguments whose chains stay exact in f16 (x = 1, steps of 1/2, values under 64 on a 1/16
 * grid), so a GPU that rounds each FMA, fuses it, or computes halves in f32 gives the same bits.
 */
const CHECK_ARGS: FmaArgs = { iters: 12, x: 1, y: 0.5 };
const CHECK_INVOCATIONS = 1024;

/**
 * What kernels/ceiling_f16.wgsl stores for invocation `index`: the sum of its chains after
 * `iters` loop iterations, each FMA rounded to f16 as the GPU does, the accumulators beyond
 * `accumulators` left at their start values.
 */
export function f16ChainSum(index: number, accumulators: number, args: FmaArgs): number {
  const f16 = (Math as unknown as { f16round(x: number): number }).f16round;
  const x = f16(args.x), y = f16(args.y);
  const s = (index & 15) * 0.0625;
  let sum = 0;
  for (let k = 0; k < 16; k++) {
    for (const lane of [s + 0.125 * k, s + 0.0625 + 0.125 * k]) {
      let a = f16(lane);
      if (k < accumulators) {
        for (let i = 0; i < args.iters * FMA_ROUNDS; i++) a = f16(a * x + y);
      }
      sum += a;
    }
  }
  return sum;
}

/**
 * Run the f16 ceiling kernel with exact arguments on CHECK_INVOCATIONS invocations and return
 * what each stored beside what the CPU computes for the same chains.
 */
export async function checkF16Chains(
  gpu: Gpu,
  accumulators: number,
): Promise<{ gpu: Float32Array; cpu: Float64Array }> {
  const module = await compileWgsl(gpu, await loadKernelSource(F16_FMA.file), F16_FMA.file);
  return runF16Chains(gpu, module, accumulators);
}

async function runF16Chains(gpu: Gpu, module: GPUShaderModule, accumulators: number) {
  const sink = gpu.device.createBuffer({
    size: 4 * SINK_FLOATS,
    usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC,
    label: "f16 check sink",
  });
  const owned: GPUBuffer[] = [sink];
  try {
    const l = await scoped(
      gpu,
      () => fmaLauncher(gpu, module, sink, owned)(accumulators, CHECK_INVOCATIONS, CHECK_ARGS),
    );
    await scoped(gpu, () => {
      const enc = gpu.device.createCommandEncoder();
      const pass = enc.beginComputePass();
      encodeLaunch(pass, l);
      pass.end();
      gpu.device.queue.submit([enc.finish()]);
    });
    const got = new Float32Array(await readBuffer(gpu, sink, 4 * CHECK_INVOCATIONS));
    const cpu = Float64Array.from(got, (_, i) => f16ChainSum(i, accumulators, CHECK_ARGS));
    return { gpu: got, cpu };
  } finally {
    owned.forEach((b) => b.destroy());
  }
}
