// Compiles one kernel at BM 128 BN 128 BK 8 TN 8 PAD 1 so that the driver receives its SPIR-V;
// run under spv_dump_layer (see dump.ts), which writes what it receives. Arguments: "11", or
// "12" and the generator's UNROLL NESTED LITERAL_BUFFER as 0/1.
import { acquireGpu } from "../../lib/gpu.ts";
import { kernelSource, TILE } from "./kernels.ts";

const [kernel, ...transforms] = Deno.args;
const { code, constants } = await kernelSource(kernel, transforms.map(Number));
const gpu = await acquireGpu();
const device = gpu.device;
device.pushErrorScope("validation");
const module = device.createShaderModule({ code });
await device.createComputePipelineAsync({
  layout: "auto",
  compute: { module, entryPoint: "main", constants },
});
const error = await device.popErrorScope();
if (error) throw new Error(error.message);
console.log(`adapter ${gpu.summary.description} (tile ${JSON.stringify(TILE)})`);
