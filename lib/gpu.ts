/**
 * Device acquisition and the error plumbing every GPU call goes through: limits raised to what
 * the adapter offers, optional features requested when available, WGSL compile errors with
 * their line, validation errors thrown (not logged), and device loss surfaced instead of hung.
 */
import { DeviceLostError, GpuValidationError, NoAdapterError, WgslCompileError } from "./errors.ts";
import { platform } from "./platform.ts";

/** What a run record says about the adapter and device. */
export interface DeviceSummary {
  description: string;
  vendor: string;
  architecture: string;
  device: string;
  isFallbackAdapter: boolean;
  /** True for CPU (software) adapters such as Mesa's llvmpipe/lavapipe. */
  software: boolean;
  subgroupMinSize?: number;
  subgroupMaxSize?: number;
  features: string[];
  limits: Record<string, number>;
}

/**
 * A device known only by name (the models and the plan picker, with no adapter at hand): a
 * hardware adapter with no features or limits reported.
 */
export function namedDevice(description: string, vendor = "", architecture = ""): DeviceSummary {
  return {
    description,
    vendor,
    architecture,
    device: "",
    isFallbackAdapter: false,
    software: false,
    features: [],
    limits: {},
  };
}

/** An acquired device with what we learned about it. */
export interface Gpu {
  adapter: GPUAdapter;
  device: GPUDevice;
  summary: DeviceSummary;
  has(feature: string): boolean;
  /** Resolves when the device is lost (never, normally). */
  lost: Promise<GPUDeviceLostInfo>;
  /** Set once the device is lost. */
  lostReason?: string;
  /** Throws the first uncaptured error since the last call, or DeviceLostError. */
  check(): void;
}

/** Limits raised to the adapter's maximum: Deno's defaults (16 KiB shared, 128 MiB bindings) are too small. */
const RAISED_LIMITS = [
  "maxComputeWorkgroupStorageSize",
  "maxStorageBufferBindingSize",
  "maxBufferSize",
  "maxComputeInvocationsPerWorkgroup",
  "maxComputeWorkgroupSizeX",
  "maxComputeWorkgroupSizeY",
  "maxComputeWorkgroupSizeZ",
  "maxComputeWorkgroupsPerDimension",
  "maxStorageBuffersPerShaderStage",
] as const;

/** Features used when present; "subgroups" is not listed by Deno's adapter but can be requested. */
const OPTIONAL_FEATURES = ["timestamp-query", "shader-f16", "subgroups"] as const;

/**
 * libwayland, which Vulkan drivers load, prints "error: XDG_RUNTIME_DIR is invalid or not set"
 * when that variable is unset or not an absolute path. Compute needs no display, so point it at
 * /tmp before the first device request (where this process may set it; otherwise the line stays).
 */
function quietWayland(): void {
  if (!("Deno" in globalThis)) return; // a browser: no environment, no Wayland
  const variable = "XDG_RUNTIME_DIR";
  if (Deno.permissions.querySync({ name: "env", variable }).state !== "granted") return;
  if (!Deno.env.get(variable)?.startsWith("/")) Deno.env.set(variable, "/tmp");
}

/** Acquire the high-performance adapter and a device with raised limits and optional features. */
export async function acquireGpu(): Promise<Gpu> {
  quietWayland();
  if (typeof navigator === "undefined" || !navigator.gpu) {
    throw new NoAdapterError(
      "navigator.gpu is missing: " +
        ("Deno" in globalThis ? "this Deno build has no WebGPU" : "this browser has no WebGPU"),
    );
  }
  const adapter = await navigator.gpu.requestAdapter({ powerPreference: "high-performance" });
  if (!adapter) throw new NoAdapterError();

  const requiredLimits: Record<string, number> = {};
  for (const name of RAISED_LIMITS) requiredLimits[name] = adapter.limits[name];

  const wanted = OPTIONAL_FEATURES.filter((f) => f === "subgroups" || adapter.features.has(f));
  let device: GPUDevice;
  try {
    device = await adapter.requestDevice({
      requiredFeatures: wanted as GPUFeatureName[],
      requiredLimits,
    });
  } catch {
    // An adapter without subgroups rejects the request; retry with the listed features only.
    device = await adapter.requestDevice({
      requiredFeatures: wanted.filter((f) => f !== "subgroups") as GPUFeatureName[],
      requiredLimits,
    });
  }

  const info = adapter.info;
  const limits: Record<string, number> = {};
  for (const name of RAISED_LIMITS) limits[name] = device.limits[name];
  const summary: DeviceSummary = {
    // Browsers may leave description empty (Chrome: "google" / "swiftshader").
    description: info.description || info.device ||
      [info.vendor, info.architecture].filter(Boolean).join(" ") || "unknown adapter",
    vendor: info.vendor,
    architecture: info.architecture,
    device: info.device,
    isFallbackAdapter: Boolean((info as { isFallbackAdapter?: boolean }).isFallbackAdapter),
    software: /llvmpipe|lavapipe|swiftshader|software/i.test(info.description) ||
      Boolean((info as { isFallbackAdapter?: boolean }).isFallbackAdapter),
    subgroupMinSize: (info as { subgroupMinSize?: number }).subgroupMinSize,
    subgroupMaxSize: (info as { subgroupMaxSize?: number }).subgroupMaxSize,
    features: [...device.features].sort(),
    limits,
  };

  let pending: GPUError | undefined;
  device.addEventListener("uncapturederror", (e) => {
    pending ??= (e as GPUUncapturedErrorEvent).error;
  });
  const gpu: Gpu = {
    adapter,
    device,
    summary,
    has: (f) => device.features.has(f as GPUFeatureName),
    lost: device.lost,
    check() {
      if (gpu.lostReason !== undefined) throw new DeviceLostError(gpu.lostReason);
      if (pending) {
        const err = pending;
        pending = undefined;
        throw new GpuValidationError(err.message);
      }
    },
  };
  device.lost.then((info) => {
    gpu.lostReason = `${info.reason}: ${info.message}`;
  });
  return gpu;
}

/** A short, file-name-safe name for the device, e.g. "nvidia-h100-80gb-hbm3". */
export function deviceSlug(summary: DeviceSummary): string {
  return summary.description.toLowerCase().replace(/\(.*?\)/g, "").replace(/[^a-z0-9]+/g, "-")
    .replace(/^-|-$/g, "").slice(0, 48) || "unknown";
}

/** Run `body` inside validation / out-of-memory / internal error scopes; throw what they caught. */
export async function scoped<T>(gpu: Gpu, body: () => T | Promise<T>): Promise<T> {
  const { device } = gpu;
  device.pushErrorScope("internal");
  device.pushErrorScope("out-of-memory");
  device.pushErrorScope("validation");
  let result: T;
  try {
    result = await body();
  } finally {
    const errors = [
      await device.popErrorScope(),
      await device.popErrorScope(),
      await device.popErrorScope(),
    ].filter((e): e is GPUError => e !== null);
    if (errors.length) {
      // deno-lint-ignore no-unsafe-finally
      throw new GpuValidationError(errors.map((e) => e.message).join("\n"));
    }
  }
  return result;
}

/**
 * Compile WGSL and throw a WgslCompileError (with the line in `file`) on any error message.
 * Pass the source as given to the device; `file` is only for messages.
 */
export async function compileWgsl(gpu: Gpu, code: string, file: string): Promise<GPUShaderModule> {
  const module = await scoped(gpu, () => gpu.device.createShaderModule({ code, label: file }))
    .catch((e) => {
      throw new WgslCompileError(file, lineOf(e.message), e.message);
    });
  const info = await module.getCompilationInfo();
  const error = info.messages.find((m) => m.type === "error");
  if (error) throw new WgslCompileError(file, error.lineNum || undefined, error.message);
  return module;
}

/** naga reports compile errors as text with ":LINE:COL" or "┌─ wgsl:LINE:COL"; pull the line out. */
function lineOf(message: string): number | undefined {
  const m = /wgsl:(\d+):\d+/.exec(message) ?? /:(\d+):\d+/.exec(message);
  return m ? Number(m[1]) : undefined;
}

/** Wait for a promise but fail fast (not hang) if the device is lost meanwhile. */
export async function orLost<T>(gpu: Gpu, p: Promise<T>): Promise<T> {
  const lost = gpu.lost.then((info) => {
    throw new DeviceLostError(`${info.reason}: ${info.message}`);
  });
  const result = await Promise.race([p, lost]);
  gpu.check();
  return result;
}

/** Copy a storage buffer back to the host (one ~11 ms Deno sync; never use it for timing). */
export async function readBuffer(gpu: Gpu, src: GPUBuffer, bytes: number): Promise<ArrayBuffer> {
  const staging = gpu.device.createBuffer({
    size: bytes,
    usage: GPUBufferUsage.COPY_DST | GPUBufferUsage.MAP_READ,
  });
  const enc = gpu.device.createCommandEncoder();
  enc.copyBufferToBuffer(src, 0, staging, 0, bytes);
  gpu.device.queue.submit([enc.finish()]);
  await orLost(gpu, staging.mapAsync(GPUMapMode.READ));
  const copy = staging.getMappedRange().slice(0);
  staging.unmap();
  staging.destroy();
  return copy;
}

/** A storage buffer filled from `data`, with `zeroTail` zero bytes after it (16-byte rounded). */
export function uploadBuffer(
  gpu: Gpu,
  data: ArrayBufferView,
  label: string,
  zeroTail = 0,
): GPUBuffer {
  const buf = gpu.device.createBuffer({
    label,
    size: Math.max(16, Math.ceil(data.byteLength / 16) * 16 + zeroTail),
    usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC,
  });
  gpu.device.queue.writeBuffer(
    buf,
    0,
    data.buffer as ArrayBuffer,
    data.byteOffset,
    data.byteLength,
  );
  return buf;
}

/** Kernel texts that stand in for their files while `withKernelSource` runs. */
const standIns = new Map<string, string>();
let standInVersion = 0;

/**
 * Read a kernel file from `kernels/` (from disk in Deno, from the site in a browser), or from its
 * URL for a step registered from outside the project.
 */
export async function loadKernelSource(file: string): Promise<string> {
  if (standIns.has(file)) return standIns.get(file)!;
  return /^[a-z]+:/.test(file)
    ? await (await fetch(file)).text()
    : await platform.readText(`kernels/${file}`);
}

/** Changes whenever a stand-in comes or goes: caches of compiled kernel files compare it. */
export function kernelSourceVersion(): number {
  return standInVersion;
}

/**
 * Run `fn` with kernels/`file` read as `text`: how the mutation tests plant a bug in a kernel
 * the runner loads itself (the edge-strip kernel, a step's WGSL file).
 */
export async function withKernelSource<T>(
  file: string,
  text: string,
  fn: () => Promise<T>,
): Promise<T> {
  if (standIns.has(file)) throw new Error(`${file} already has a stand-in`);
  standIns.set(file, text);
  standInVersion++;
  try {
    return await fn();
  } finally {
    standIns.delete(file);
    standInVersion++;
  }
}
