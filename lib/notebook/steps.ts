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
 * Lines of a kernel to show: `from` and `to` are 1-based line numbers (inclusive), or text that
 * the line contains (`to` is looked for from `from` on), so that an excerpt follows its lines when
 * the file changes around them. Either end left out is the file's.
 */
export interface SourceLines {
  from?: number | string;
  to?: number | string;
}

/** Sources longer than this show folded away unless the cell names the lines that matter. */
const SHOWN_SOURCE_LINES = 30;

/** The 1-based line range an excerpt names in `all`; throws for text that is not there. */
function lineRange(all: string[], where: SourceLines, file: string): [number, number] {
  const find = (at: number | string | undefined, start: number, fallback: number) => {
    if (at === undefined) return fallback;
    if (typeof at === "number") return Math.min(all.length, Math.max(1, at));
    const i = all.findIndex((line, j) => j >= start - 1 && line.includes(at));
    if (i < 0) throw new Error(`kernels/${file}: no line with "${at}" from line ${start} on`);
    return i + 1;
  };
  const from = find(where.from, 1, 1);
  return [from, Math.max(from, find(where.to, from, all.length))];
}

/**
 * Show a kernel's WGSL exactly as the file has it, with its title and defaults from the registry:
 * the `lines` that matter (one excerpt or several, numbered as in the file) with the whole file
 * one click away. Without `lines`, a short file shows whole and a long one folded.
 */
export async function showKernelSource(
  key: string,
  lines?: SourceLines | SourceLines[],
): Promise<void> {
  const spec = kernel(key);
  const all = (await loadKernelSource(spec.file)).replace(/\s+$/, "").split("\n");
  const ranges = (lines === undefined ? [] : [lines].flat())
    .map((where) => lineRange(all, where, spec.file));
  const whole = ranges.length === 0 && all.length <= SHOWN_SOURCE_LINES;
  const width = String(all.length).length;
  const excerpt = ranges.map(([from, to]) =>
    all.slice(from - 1, to).map((line, i) => `${String(from + i).padStart(width)}  ${line}`)
      .join("\n")
  ).join("\n...\n");
  const shown = whole ? all.join("\n") : excerpt;
  const where = `kernels/${spec.file}` +
    (ranges.length ? `, lines ${ranges.map(([a, b]) => `${a}-${b}`).join(", ")}` : "");
  const params = Object.entries(spec.params).map(([k, v]) => `${k}=${v}`).join(", ");
  const head = `${spec.title} (${where}; defaults: ${params || "none"})`;
  const wgsl = (code: string) =>
    `<pre><code class="language-wgsl">${escapeHtml(code)}</code></pre>`;
  await showBundle({
    "text/plain": shown ? `${head}\n\n${shown}` : head,
    "text/markdown": `**${spec.title}** (\`${where}\`; defaults: ${params || "none"})` +
      (shown ? "\n\n```wgsl\n" + shown + "\n```" : ""),
    "text/html": `<p><b>${escapeHtml(spec.title)}</b> (<code>${escapeHtml(where)}</code>; ` +
      `defaults: ${escapeHtml(params || "none")})</p>` + (shown ? wgsl(shown) : "") +
      (whole ? "" : `<details><summary>The whole kernel (${all.length} lines)</summary>` +
        `${wgsl(all.join("\n"))}</details>`),
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
      ...(ceilings ? ["roofline bound (GFLOP/s)", "roofline set by"] : []),
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
