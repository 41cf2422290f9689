/**
 * Measured machine ceilings for the roofline: streaming memory bandwidth and FP32 FMA
 * throughput, each the best of a small sweep of launch shapes, timed with GPU timestamps.
 * Works on any adapter; on a software adapter the sizes shrink so it stays quick.
 */
import { compileWgsl, type Gpu, loadKernelSource, scoped } from "./gpu.ts";
import type { BandwidthTrial, Ceilings, Fp32Trial } from "./record.ts";
import { timePasses } from "./timing.ts";

/** Unrolled FMA rounds per loop iteration in kernels/ceiling_fp32.wgsl. */
const FP32_ROUNDS = 8;
const MiB = 1 << 20;

export interface CeilingOptions {
  /** Bytes of each streamed buffer (default: 1 GiB on a GPU, 32 MiB on a software adapter). */
  bandwidthBytes?: number;
  /** Target GPU time of one timed pass; work is scaled to reach it. */
  passMs?: number;
  /** Timed passes per configuration. */
  reps?: number;
  /** Report each trial as it finishes (for progress displays). */
  onTrial?: (trial: BandwidthTrial | Fp32Trial) => void;
}

/** Measure both ceilings on this device (bandwidth first, then FP32). */
export async function measureCeilings(gpu: Gpu, opts: CeilingOptions = {}): Promise<Ceilings> {
  const bandwidth = await measureBandwidth(gpu, opts);
  const fp32 = await measureFp32(gpu, opts);
  const bestBw = best(bandwidth, (t) => t.gbs);
  const bestFp = best(fp32, (t) => t.gflops);
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
 * Streaming bandwidth: `copy` (read + write) and `read` (read-only sum) over vec4 buffers,
 * swept over workgroup size and vec4s per invocation. Bytes moved per second, GB/s.
 */
export async function measureBandwidth(
  gpu: Gpu,
  opts: CeilingOptions = {},
): Promise<BandwidthTrial[]> {
  const { device } = gpu;
  const software = gpu.summary.software;
  const cap = Math.min(device.limits.maxStorageBufferBindingSize, device.limits.maxBufferSize);
  const wanted = opts.bandwidthBytes ?? (software ? 32 * MiB : 1024 * MiB);
  const bytes = Math.floor(Math.min(wanted, cap) / 16) * 16;
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

/**
 * FP32 FMA throughput: 2, 4 or 8 vec4 accumulators per invocation, over a range of grid sizes;
 * the loop count is scaled so each pass takes about `passMs`. GFLOP/s, 2 FLOP per FMA.
 */
export async function measureFp32(gpu: Gpu, opts: CeilingOptions = {}): Promise<Fp32Trial[]> {
  const { device } = gpu;
  const software = gpu.summary.software;
  const passMs = opts.passMs ?? (software ? 20 : 5);
  const module = await compileWgsl(
    gpu,
    await loadKernelSource("ceiling_fp32.wgsl"),
    "ceiling_fp32.wgsl",
  );
  const sink = device.createBuffer({ size: 1024, usage: GPUBufferUsage.STORAGE, label: "sink" });
  const owned: GPUBuffer[] = [sink];
  const wg = 256;
  const grids = software ? [1 << 10, 1 << 12] : [1 << 16, 1 << 18, 1 << 20, 1 << 21];
  // vec4 accumulators per invocation; each is 4 independent scalar FMA chains.
  const vec4Counts = software ? [4, 8] : [2, 4, 8];

  const launch = (vec4s: number, invocations: number, iters: number): Launch => {
    const params = new ArrayBuffer(16);
    new Uint32Array(params)[0] = iters;
    // x < 1 so every chain converges to y / (1 - x) = 1; the sentinel is unreachable.
    new Float32Array(params).set([0.999, 0.001, -3.25e38], 1);
    const args = uniformBuffer(gpu, params);
    owned.push(args);
    const pipeline = device.createComputePipeline({
      layout: "auto",
      compute: { module, entryPoint: "fma_peak", constants: { WG: wg, CHAINS: vec4s } },
    });
    const bind = device.createBindGroup({
      layout: pipeline.getBindGroupLayout(0),
      entries: [
        { binding: 0, resource: { buffer: sink } },
        { binding: 1, resource: { buffer: args } },
      ],
    });
    return { pipeline, bind, grid: grid(gpu, Math.ceil(invocations / wg)) };
  };

  const trials: Fp32Trial[] = [];
  try {
    for (const vec4s of vec4Counts) {
      for (const wanted of grids) {
        // Calibrate on a short run, then scale the loop count to the target pass time.
        const probeIters = software ? 8 : 64;
        const probe = await scoped(gpu, () => launch(vec4s, wanted, probeIters));
        const p = await timePasses(gpu, (pass) => encodeLaunch(pass, probe), {
          warmup: 1,
          reps: 3,
        });
        const iters = Math.max(
          probeIters,
          Math.min(1 << 20, Math.round(probeIters * passMs / Math.max(p.medianMs, 1e-3))),
        );
        const l = await scoped(gpu, () => launch(vec4s, wanted, iters));
        const invocations = l.grid[0] * l.grid[1] * wg;
        const t = await timePasses(gpu, (pass) => encodeLaunch(pass, l), {
          warmup: 2,
          reps: opts.reps ?? (software ? 5 : 20),
        });
        const flops = 2 * 4 * vec4s * FP32_ROUNDS * iters * invocations;
        const trial: Fp32Trial = {
          chains: 4 * vec4s,
          invocations,
          workgroupSize: wg,
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
