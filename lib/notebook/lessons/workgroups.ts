/**
 * WebGPU's workgroup-size validation: what pipeline creation says about literal sizes, and what
 * happens when the size comes through an `override` constant.
 */
import { GemmError } from "../../errors.ts";
import { type Gpu, loadKernelSource } from "../../gpu.ts";
import { checkKernelFits } from "../../runner.ts";
import { showTable } from "../format.ts";
import { kernel } from "../steps.ts";

/** What WebGPU said about one workgroup size. */
export interface WorkgroupTrial {
  size: [number, number];
  invocations: number;
  /** Undefined when accepted; otherwise WebGPU's own validation message. */
  error?: string;
}

/**
 * Ask WebGPU for compute pipelines with literal `@workgroup_size(x, y)` and report each answer
 * raw: accepted, or the validation error text.
 */
export async function tryWorkgroupSizes(
  gpu: Gpu,
  sizes: [number, number][],
): Promise<WorkgroupTrial[]> {
  const { device } = gpu;
  const trials: WorkgroupTrial[] = [];
  for (const [x, y] of sizes) {
    const module = device.createShaderModule({
      code: `@compute @workgroup_size(${x}, ${y}) fn main() {}`,
    });
    device.pushErrorScope("validation");
    device.createComputePipeline({ layout: "auto", compute: { module, entryPoint: "main" } });
    const error = await device.popErrorScope();
    trials.push({ size: [x, y], invocations: x * y, error: error?.message });
  }
  return trials;
}

/** Show workgroup trials with the device's limits. */
export async function showWorkgroupTrials(gpu: Gpu, trials: WorkgroupTrial[]): Promise<void> {
  const lim = gpu.device.limits;
  await showTable(
    ["@workgroup_size", "invocations", "WebGPU says"],
    trials.map((t) => [`(${t.size[0]}, ${t.size[1]})`, t.invocations, t.error ?? "accepted"]),
    `Limits of this device: maxComputeInvocationsPerWorkgroup = ` +
      `${lim.maxComputeInvocationsPerWorkgroup}, maxComputeWorkgroupSizeX/Y = ` +
      `${lim.maxComputeWorkgroupSizeX}/${lim.maxComputeWorkgroupSizeY}`,
  );
}

/**
 * The same request through an `override` constant (the way the ladder sets tile sizes): does
 * pipeline creation catch it, and what does the runner's own limit check say?
 */
export async function overrideWorkgroupCheck(
  gpu: Gpu,
  step: string,
  wg: number,
): Promise<{ pipelineError?: string; runnerError?: string }> {
  const spec = kernel(step);
  const { device } = gpu;
  const module = device.createShaderModule({ code: await loadKernelSource(spec.file) });
  device.pushErrorScope("validation");
  device.createComputePipeline({
    layout: "auto",
    compute: { module, entryPoint: spec.entryPoint, constants: { WG: wg } },
  });
  const pipelineError = (await device.popErrorScope())?.message;
  let runnerError: string | undefined;
  try {
    checkKernelFits(gpu, spec, { ...spec.params, WG: wg });
  } catch (e) {
    runnerError = e instanceof GemmError ? `${e.name}: ${e.message}` : String(e);
  }
  return { pipelineError, runnerError };
}
