// The kernels the naga lab compiles: 11 with its override constants, and 12 generated with each
// combination of its three transforms, all at one tile small enough for lavapipe.
import { loadKernelSource } from "../../lib/gpu.ts";
import { generateWgsl } from "../../kernels/12_generated/generate.ts";

// 11's tile at 4096 on the H200 is 128 x 256 x 16, TN 16, PAD 0; BK 16 needs 48 KiB of workgroup
// memory, more than lavapipe's 32 KiB, so the capture keeps everything but BK.
export const TILE = { BM: 128, BN: 256, BK: 8, TN: 16, PAD: 0 };

export interface LabKernel {
  code: string;
  /** Override constants for createComputePipeline (11 only). */
  constants: Record<string, number>;
  params: Record<string, number>;
}

/** SHA-256 (hex) of a lab kernel's text and override constants: what its report was made from. */
export async function kernelSha256({ code, constants }: LabKernel): Promise<string> {
  const text = `${code}\n${JSON.stringify(constants)}`;
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** The lab kernel a report entry was compiled from: "11", or "12" with its transforms. */
export function labKernelOf(report: { kernel: string; params: Record<string, number> }) {
  const p = report.params;
  return report.kernel === "11_autotune"
    ? kernelSource("11", [])
    : kernelSource("12", [p.UNROLL, p.NESTED, p.LITERAL_BUFFER]);
}

/** "11", or "12" with [UNROLL, NESTED, LITERAL_BUFFER]. */
export async function kernelSource(kernel: string, transforms: number[]): Promise<LabKernel> {
  if (kernel === "11") {
    const constants = { ...TILE, GROUP_M: 1 };
    return {
      code: await loadKernelSource("11_autotune/kernel.wgsl"),
      constants,
      params: constants,
    };
  }
  const [UNROLL, NESTED, LITERAL_BUFFER] = transforms;
  const params = { ...TILE, GROUP_M: 1, AHEAD: 0, UNROLL, NESTED, LITERAL_BUFFER };
  return { code: generateWgsl(params), constants: {}, params };
}
