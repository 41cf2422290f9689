/**
 * Before a long call on a GPU host: check that this adapter can allocate a large storage buffer.
 * A host's Vulkan driver can refuse every large allocation while the GPU reports its memory free
 * ("not enough memory left"); then every notebook stops at its first cell and every bench row
 * fails, after the call has cost its device time. This takes a second and says so first.
 *   deno run --allow-env tools/gpu_preflight.ts     exit 0: fine; 3: the allocation failed
 */
import { bandwidthBufferBytes } from "../lib/ceilings.ts";

const MiB = 1 << 20;

const adapter = await navigator.gpu?.requestAdapter();
if (!adapter) {
  console.error("gpu_preflight: no WebGPU adapter");
  Deno.exit(3);
}
const limits = {
  maxBufferSize: adapter.limits.maxBufferSize,
  maxStorageBufferBindingSize: adapter.limits.maxStorageBufferBindingSize,
};
const device = await adapter.requestDevice({ requiredLimits: limits });
// The buffer the bandwidth ceiling streams first (lib/ceilings.ts), as on a GPU.
const bytes = bandwidthBufferBytes(limits, false);
device.pushErrorScope("out-of-memory");
device.pushErrorScope("validation");
const buffer = device.createBuffer({ size: bytes, usage: GPUBufferUsage.STORAGE });
const invalid = await device.popErrorScope();
const oom = await device.popErrorScope();
buffer.destroy();
device.destroy();
const failure = oom ?? invalid;
const what = `${adapter.info?.description || "adapter"}: a ${bytes / MiB} MiB storage buffer`;
if (failure) {
  console.error(`gpu_preflight: ${what} failed (${failure.message}); try another machine`);
  Deno.exit(3);
}
console.error(`gpu_preflight: ${what} allocated`);
