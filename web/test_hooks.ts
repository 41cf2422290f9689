/// <reference lib="dom" />
/**
 * Page parameters that make the failure paths happen on any machine, for tests and for readers
 * who want to see them: `?nowebgpu` hides navigator.gpu (as in a browser without WebGPU),
 * `?notimestamps` hides the adapter's timestamp-query feature (times then come from wall-clock
 * batches, as in a browser that does not offer it), and `?wrong` runs the step with one accumulation turned into a subtraction (a wrong kernel the
 * validation must catch, shown as a failure and never as a speed).
 */
import { loadKernelSource } from "../lib/gpu.ts";
import type { KernelSpec } from "../lib/registry.ts";
import { query } from "./live.ts";

/** Hide WebGPU or its timestamps when the page asks; call before any adapter is requested. */
export function hideWebGpuIfAsked(): void {
  if (query.has("nowebgpu")) Object.defineProperty(navigator, "gpu", { value: undefined });
  if (query.has("notimestamps") && "GPUAdapter" in globalThis) {
    const features = Object.getOwnPropertyDescriptor(GPUAdapter.prototype, "features")!.get!;
    Object.defineProperty(GPUAdapter.prototype, "features", {
      get() {
        const offered = new Set<string>(features.call(this));
        offered.delete("timestamp-query");
        return offered;
      },
    });
  }
}

/**
 * The step itself, or with `?wrong` a copy whose WGSL has its first `+=` turned into `-=`.
 * The copy is generated text, so its override constants take their defaults in the file.
 */
export async function brokenOnPurpose(spec: KernelSpec): Promise<KernelSpec> {
  if (!query.has("wrong")) return spec;
  const source = spec.generate ? spec.generate(spec.params) : await loadKernelSource(spec.file);
  if (!source.includes("+=")) throw new Error(`${spec.file} has no += to break`);
  const broken = source.replace("+=", "-=");
  return {
    ...spec,
    title: `${spec.title} (broken on purpose: ?wrong)`,
    generate: () => broken,
    space: undefined,
  };
}
