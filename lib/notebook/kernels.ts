/**
 * Kernels as notebooks show them: looked up by id, name or number, their WGSL exactly as the
 * file has it, and what the registry's cost model predicts.
 */
import { loadKernelSource } from "../gpu.ts";
import { type Shape, shapeLabel } from "../matrix.ts";
import type { Ceilings } from "../record.ts";
import { findKernel, KERNELS, type KernelSpec, type Params } from "../registry.ts";
import { kernelParams } from "../runner.ts";
import { escapeHtml, showTable } from "./format.ts";
import { showBundle } from "./jupyter.ts";
import type { Session } from "./session.ts";

/** The registry entry for an id, name or number; throws a clear error for an unknown one. */
export function kernel(key: string): KernelSpec {
  const spec = findKernel(key);
  if (!spec) {
    throw new Error(
      `no kernel "${key}" in the registry (known: ${KERNELS.map((s) => s.name).join(", ")})`,
    );
  }
  return spec;
}

/**
 * Show a kernel's WGSL exactly as the file has it (optionally only lines `from`..`to`,
 * 1-based, inclusive), with its title and idea from the registry.
 */
export async function showKernelSource(
  key: string,
  lines?: { from?: number; to?: number },
): Promise<void> {
  const spec = kernel(key);
  const all = (await loadKernelSource(spec.file)).replace(/\s+$/, "").split("\n");
  const from = Math.max(1, lines?.from ?? 1);
  const to = Math.min(all.length, lines?.to ?? all.length);
  const code = all.slice(from - 1, to).join("\n");
  const where = `kernels/${spec.file}` +
    (from > 1 || to < all.length ? `, lines ${from}-${to}` : "");
  const params = Object.entries(spec.params).map(([k, v]) => `${k}=${v}`).join(", ");
  const head = `${spec.title} (${where}; defaults: ${params || "none"})`;
  await showBundle({
    "text/plain": `${head}\n\n${code}`,
    "text/markdown": `**${spec.title}** (\`${where}\`; defaults: ${params || "none"})\n\n` +
      "```wgsl\n" + code + "\n```",
    "text/html": `<p><b>${escapeHtml(spec.title)}</b> (<code>${escapeHtml(where)}</code>; ` +
      `defaults: ${escapeHtml(params || "none")})</p><pre><code class="language-wgsl">` +
      `${escapeHtml(code)}</code></pre>`,
  });
}

/** What the registry's cost model predicts for one kernel, shape and parameter set. */
export interface Prediction {
  kernel: string;
  shape: Shape;
  flops: number;
  bytes: number;
  /** FLOP per byte of global-memory traffic. */
  intensity: number;
  /**
   * min(compute roof, bandwidth x intensity) when ceilings are given; the compute roof is the
   * measured f16 one for an f16 kernel when the ceilings have it, else FP32.
   */
  boundGflops?: number;
  boundBy?: "memory" | "compute";
}

/** The model's prediction; with ceilings, the roofline bound it implies. */
export function predict(
  key: string,
  shape: Shape,
  ceilings?: Ceilings,
  params?: Params,
): Prediction {
  const spec = kernel(key);
  const { flops, bytes } = spec.model(shape, { ...spec.params, ...params });
  const intensity = flops / bytes;
  const p: Prediction = { kernel: spec.id, shape, flops, bytes, intensity };
  if (ceilings) {
    const memoryBound = ceilings.bandwidthGBs * intensity;
    const computeRoof = computeRoofOf(spec, ceilings);
    p.boundGflops = Math.min(computeRoof, memoryBound);
    p.boundBy = memoryBound < computeRoof ? "memory" : "compute";
  }
  return p;
}

/**
 * The compute roof a kernel sits under: packed f16 arithmetic has its own measured rate, which
 * need not be twice FP32's.
 */
export function computeRoofOf(spec: KernelSpec, ceilings: Ceilings): number {
  return spec.precision === "f16" && ceilings.f16Gflops !== undefined
    ? ceilings.f16Gflops
    : ceilings.fp32Gflops;
}

/**
 * Show predictions of several kernels side by side (modeled traffic, intensity, bound); with the
 * session, at the parameters the runner will use on this device (tuned ones included).
 */
export async function showPredictions(
  keys: string[],
  shape: Shape,
  ceilings?: Ceilings,
  s?: Session,
): Promise<void> {
  const paramsOf = (k: string) => s ? kernelParams(s.gpu, kernel(k)) : undefined;
  const preds = keys.map((k) => predict(k, shape, ceilings, paramsOf(k)));
  await showTable(
    [
      "kernel",
      "GFLOP",
      "modeled traffic (MB)",
      "FLOP/byte",
      "bytes/FLOP",
      ...(ceilings ? ["bound (GFLOP/s)", "bound by"] : []),
    ],
    preds.map((p) => [
      p.kernel,
      p.flops / 1e9,
      p.bytes / 1e6,
      p.intensity,
      1 / p.intensity,
      ...(ceilings ? [p.boundGflops, p.boundBy] : []),
    ]),
    `Prediction at ${shapeLabel(shape)} from the registry's cost model` +
      (ceilings ? " and this adapter's measured ceilings" : ""),
  );
}
