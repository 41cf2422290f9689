// Compiles one kernel (11 or 12, argv[0]) at BM 128 BN 128 BK 8 TN 8 PAD 1 so that the driver
// receives its SPIR-V; run under spv_dump_layer (see dump.ts), which writes what it receives.
import { acquireGpu, loadKernelSource } from "../../lib/gpu.ts";
import { generateWgsl } from "../../kernels/12_generated/generate.ts";

const TILE = { BM: 128, BN: 128, BK: 8, TN: 8, PAD: 1 };
const kernel = Deno.args[0];
const gpu = await acquireGpu();
const device = gpu.device;
const code = kernel === "11"
  ? await loadKernelSource("11_autotune.wgsl")
  : generateWgsl({ ...TILE, GROUP_M: 1, AHEAD: 0 });
const constants = kernel === "11" ? { ...TILE, VEC4_LOADS: 1, GROUP_M: 1 } : {};
device.pushErrorScope("validation");
const module = device.createShaderModule({ code });
await device.createComputePipelineAsync({
  layout: "auto",
  compute: { module, entryPoint: "main", constants },
});
const error = await device.popErrorScope();
if (error) throw new Error(error.message);
console.log(`adapter ${gpu.summary.description}`);
