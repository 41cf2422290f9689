/**
 * The thin layer notebooks call: one adapter per kernel session, sizes that follow the adapter,
 * rich displays (markdown, HTML, plain text) that fall back to the console outside Jupyter,
 * kernel sources shown from their files, predictions from the registry's cost model, and live
 * validated runs. The recorded GPU-host side is in notebook_records.ts.
 */
import { measureCeilings } from "./ceilings.ts";
import { acquireGpu, type DeviceSummary, type Gpu, loadKernelSource } from "./gpu.ts";
import { type Shape, shapeLabel } from "./matrix.ts";
import type { Ceilings, KernelResult } from "./record.ts";
import { findKernel, KERNELS, type KernelSpec, type Params } from "./registry.ts";
import { kernelParams, runKernel } from "./runner.ts";

// ---------------------------------------------------------------------------------------------
// Display: Jupyter MIME bundles in the kernel, plain text on the console elsewhere (tests, CLI).

/** A Jupyter MIME bundle: "text/plain" is always present, the rest are richer renderings. */
export type DisplayBundle = { "text/plain": string } & Record<string, unknown>;

type JupyterDisplay = (obj: unknown, opts: Record<string, unknown>) => Promise<void>;

/** Deno.jupyter.display inside `deno jupyter`; undefined elsewhere (where touching it throws). */
function jupyterDisplay(): JupyterDisplay | undefined {
  try {
    return (Deno as unknown as { jupyter: { display: JupyterDisplay } }).jupyter.display;
  } catch {
    return undefined;
  }
}

/** True inside a Jupyter kernel. */
export function inJupyter(): boolean {
  return jupyterDisplay() !== undefined;
}

/**
 * Show a bundle. `displayId` names a display so later calls with `update: true` replace it in
 * place (progress of long runs); outside Jupyter updates print a new line.
 */
export async function showBundle(
  bundle: DisplayBundle,
  opts: { displayId?: string; update?: boolean } = {},
): Promise<void> {
  const display = jupyterDisplay();
  if (!display) {
    console.log(bundle["text/plain"]);
    return;
  }
  await display(bundle, {
    raw: true,
    ...(opts.displayId ? { display_id: opts.displayId } : {}),
    ...(opts.update ? { update: true } : {}),
  });
}

const escapeHtml = (s: string) =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

/** Inline markdown used in generated notes (`code`, **bold**) as HTML. */
function inlineHtml(s: string): string {
  return escapeHtml(s).replace(/`([^`]+)`/g, "<code>$1</code>").replace(
    /\*\*([^*]+)\*\*/g,
    "<b>$1</b>",
  );
}

/** Show a short markdown note (paragraphs, inline code and bold; also rendered to HTML). */
export async function showNote(markdown: string): Promise<void> {
  const html = markdown.trim().split(/\n\s*\n/).map((p) => `<p>${inlineHtml(p)}</p>`).join("\n");
  await showBundle({ "text/plain": markdown.trim(), "text/markdown": markdown, "text/html": html });
}

/** A table cell: numbers are formatted to 3 significant digits, undefined shows as "-". */
export type Cell = string | number | boolean | undefined;

/** Format a number for tables: 3 significant digits, thousands separators, "-" for missing. */
export function fmt(x: Cell, digits = 3): string {
  if (x === undefined) return "-";
  if (typeof x !== "number") return String(x);
  if (Number.isNaN(x)) return "NaN";
  if (!Number.isFinite(x)) return String(x);
  if (Number.isInteger(x) && Math.abs(x) < 1e15) return x.toLocaleString("en-US");
  if (x !== 0 && Math.abs(x) < 1e-3) return x.toExponential(digits - 1);
  return Number(x.toPrecision(digits)).toLocaleString("en-US", { maximumFractionDigits: 6 });
}

/** A table as markdown, HTML and aligned plain text. */
export function tableBundle(columns: string[], rows: Cell[][], caption?: string): DisplayBundle {
  // Short rows are padded with "-" so a missing trailing value can never break the table.
  const text = rows.map((r) => columns.map((_, i) => fmt(r[i])));
  const widths = columns.map((c, i) => Math.max(c.length, ...text.map((r) => r[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i])).join("  ");
  const plain = [
    ...(caption ? [caption] : []),
    line(columns),
    line(widths.map((w) => "-".repeat(w))),
    ...text.map(line),
  ].join("\n");
  const md = [
    ...(caption ? [`**${caption}**`, ""] : []),
    `| ${columns.join(" | ")} |`,
    `|${columns.map(() => " --- ").join("|")}|`,
    ...text.map((r) => `| ${r.map((c) => c.replace(/\|/g, "\\|")).join(" | ")} |`),
  ].join("\n");
  const numeric = (i: number) => rows.length > 0 && rows.every((r) => typeof r[i] !== "string");
  const td = (tag: string, c: string, i: number) =>
    `<${tag} style="text-align:${numeric(i) ? "right" : "left"}">${escapeHtml(c)}</${tag}>`;
  const html = `<table>${caption ? `<caption>${escapeHtml(caption)}</caption>` : ""}` +
    `<thead><tr>${columns.map((c, i) => td("th", c, i)).join("")}</tr></thead><tbody>` +
    text.map((r) => `<tr>${r.map((c, i) => td("td", c, i)).join("")}</tr>`).join("") +
    `</tbody></table>`;
  return { "text/plain": plain, "text/markdown": md, "text/html": html };
}

/** Show a table (see tableBundle). */
export async function showTable(columns: string[], rows: Cell[][], caption?: string) {
  await showBundle(tableBundle(columns, rows, caption));
}

// ---------------------------------------------------------------------------------------------
// Session: one adapter per kernel, its ceilings measured once, sizes that fit the adapter.

/** What every notebook cell works with. */
export interface Session {
  gpu: Gpu;
  summary: DeviceSummary;
  /** True on a software (CPU) adapter: sizes shrink so a notebook takes a minute or two. */
  software: boolean;
  /** Square sizes for ladder runs on this adapter. */
  sizes: number[];
}

let current: Promise<Session> | undefined;

/**
 * The reader's adapter, acquired once per notebook kernel (later calls return the same one).
 * Set GEMM_SIZES=256,512 to choose the ladder sizes yourself.
 */
export function session(): Promise<Session> {
  current ??= acquireGpu().then((gpu) => ({
    gpu,
    summary: gpu.summary,
    software: gpu.summary.software,
    sizes: sizesFromEnv() ?? ladderSizes(gpu.summary),
  }));
  current.catch(() => current = undefined);
  return current;
}

function sizesFromEnv(): number[] | undefined {
  let raw: string | undefined;
  try {
    raw = Deno.env.get("GEMM_SIZES");
  } catch {
    return undefined;
  }
  const sizes = raw?.split(",").map(Number).filter((n) => Number.isInteger(n) && n > 0);
  return sizes?.length ? sizes : undefined;
}

/** Square sizes a notebook runs: small on a software adapter, the bench's sizes on a GPU. */
export function ladderSizes(summary: DeviceSummary): number[] {
  return summary.software ? [128, 256] : [1024, 2048, 4096];
}

/** The largest ladder size of this session: the one single-size lessons use. */
export function mainSize(s: Session): number {
  return Math.max(...s.sizes);
}

/** A square shape. */
export function square(n: number): Shape {
  return { m: n, k: n, n };
}

let ceilingsCache: { gpu: Gpu; ceilings: Promise<Ceilings> } | undefined;

/** This adapter's measured bandwidth and FP32 ceilings (measured once per session). */
export function adapterCeilings(gpu: Gpu): Promise<Ceilings> {
  if (ceilingsCache?.gpu !== gpu) ceilingsCache = { gpu, ceilings: measureCeilings(gpu) };
  return ceilingsCache.ceilings;
}

/**
 * Start a notebook: the session, this adapter's measured ceilings, and one line saying where
 * the code runs and at which sizes.
 */
export async function openNotebook(): Promise<{ s: Session; ceilings: Ceilings }> {
  const s = await session();
  const ceilings = await adapterCeilings(s.gpu);
  await showNote(
    `Running on **${s.summary.description}**${s.software ? " (a software adapter)" : ""}; ` +
      `sizes ${s.sizes.join(", ")}; measured ceilings ${fmt(ceilings.bandwidthGBs)} GB/s and ` +
      `${fmt(ceilings.fp32Gflops)} GFLOP/s.`,
  );
  return { s, ceilings };
}

/** Show the adapter: name, vendor, software or not, subgroup size, features, raised limits. */
export async function showAdapter(summary: DeviceSummary): Promise<void> {
  const rows: Cell[][] = [
    ["adapter", summary.description],
    ["vendor / architecture", `${summary.vendor || "-"} / ${summary.architecture || "-"}`],
    ["software (runs on the CPU)", summary.software],
    ["subgroup size", subgroupLabel(summary)],
    ["features", summary.features.join(", ") || "(none)"],
    ...Object.entries(summary.limits).map(([k, v]): Cell[] => [k, v.toLocaleString("en-US")]),
  ];
  await showTable(["property", "value"], rows, "Your WebGPU adapter");
}

function subgroupLabel(s: DeviceSummary): string {
  if (s.subgroupMinSize === undefined) return "not reported";
  return s.subgroupMinSize === s.subgroupMaxSize
    ? String(s.subgroupMinSize)
    : `${s.subgroupMinSize}..${s.subgroupMaxSize}`;
}

/** Show measured ceilings and the ridge point they imply. */
export async function showCeilings(c: Ceilings, source: string): Promise<void> {
  await showTable(["ceiling", "value"], [
    ["memory bandwidth (GB/s)", c.bandwidthGBs],
    ["FP32 FMA throughput (GFLOP/s)", c.fp32Gflops],
    ["ridge point (FLOP/byte)", c.fp32Gflops / c.bandwidthGBs],
  ], `Measured ceilings: ${source}`);
}

// ---------------------------------------------------------------------------------------------
// Kernels: source from the file, prediction from the registry model.

/** The registry entry for an id, name or number; throws a clear error for an unknown one. */
export function kernel(key: string): KernelSpec {
  const spec = findKernel(key) ?? KERNELS.find((s) => s.id === key);
  if (!spec) {
    throw new Error(
      `no kernel "${key}" in the registry (known: ${KERNELS.map((s) => s.id).join(", ")})`,
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
  /** min(FP32 roof, bandwidth x intensity) when ceilings are given. */
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
    p.boundGflops = Math.min(ceilings.fp32Gflops, memoryBound);
    p.boundBy = memoryBound < ceilings.fp32Gflops ? "memory" : "compute";
  }
  return p;
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

// ---------------------------------------------------------------------------------------------
// Live runs on the reader's adapter.

/** Options of a live run. */
export interface LiveOptions {
  /** Square sizes (default: the session's ladder sizes). */
  sizes?: number[];
  /** Explicit shapes instead of sizes (e.g. odd shapes). */
  shapes?: Shape[];
  /** Tile parameters per kernel id. */
  params?: Record<string, Params>;
  /** Skip timing: validate only (for broken demo kernels and shape checks). */
  validateOnly?: boolean;
  /** Timed GPU time per result (default: 300 ms on software adapters, 400 ms on GPUs). */
  budgetMs?: number;
  /** Ceilings for the "% of bound" column. */
  ceilings?: Ceilings;
}

/**
 * Validate then time each kernel at each size on the reader's adapter, showing progress in
 * place and then the table: validation, relative error, GPU time, GFLOP/s, model, bound.
 */
export async function runLive(
  s: Session,
  keys: string[],
  opts: LiveOptions = {},
): Promise<KernelResult[]> {
  const shapes = opts.shapes ?? (opts.sizes ?? s.sizes).map(square);
  const specs = keys.map(kernel);
  const displayId = `live-${crypto.randomUUID()}`;
  const results: KernelResult[] = [];
  const total = specs.length * shapes.length;
  for (const spec of specs) {
    for (const shape of shapes) {
      await showBundle(
        {
          "text/plain": `running ${spec.id} at ${shapeLabel(shape)} (${
            results.length + 1
          }/${total})`,
        },
        { displayId, update: results.length > 0 },
      );
      results.push(
        await runKernel(s.gpu, spec, shape, {
          params: opts.params?.[spec.id],
          skipTiming: opts.validateOnly,
          budgetMs: opts.budgetMs ?? (s.software ? 300 : 400),
        }),
      );
    }
  }
  await showBundle(liveTable(results, opts.ceilings, s.summary), { displayId, update: true });
  return results;
}

function liveTable(results: KernelResult[], ceilings: Ceilings | undefined, d: DeviceSummary) {
  const timed = results.some((r) => r.gflops !== undefined);
  return tableBundle(
    [
      "kernel",
      "shape",
      "validated",
      "rel. error",
      ...(timed ? ["median ms", "GFLOP/s", "FLOP/byte (model)"] : []),
      ...(timed && ceilings ? ["% of bound"] : []),
      ...(results.some((r) => r.error) ? ["error"] : []),
    ],
    results.map((r) => {
      const bound = ceilings
        ? Math.min(ceilings.fp32Gflops, ceilings.bandwidthGBs * r.intensity)
        : undefined;
      return [
        r.kernel,
        shapeLabel(r),
        r.validated,
        r.relErr,
        ...(timed ? [r.medianMs, r.gflops, r.intensity] : []),
        ...(timed && ceilings ? [r.gflops && bound ? (100 * r.gflops) / bound : undefined] : []),
        ...(results.some((x) => x.error) ? [shortError(r.error)] : []),
      ];
    }),
    `Live on ${d.description}${d.software ? " (software adapter)" : ""}`,
  );
}

function shortError(e: string | undefined): string | undefined {
  if (!e) return undefined;
  const first = e.split("\n")[0];
  return first.length > 160 ? first.slice(0, 157) + "..." : first;
}

/**
 * Validate and time one kernel with several tile-parameter sets at one shape, showing a table
 * with the parameters of each row.
 */
export async function runParamSweep(
  s: Session,
  key: string,
  paramSets: Params[],
  shape: Shape = square(mainSize(s)),
  opts: Pick<LiveOptions, "budgetMs" | "ceilings"> = {},
): Promise<KernelResult[]> {
  const spec = kernel(key);
  const displayId = `sweep-${crypto.randomUUID()}`;
  const results: KernelResult[] = [];
  for (const params of paramSets) {
    await showBundle(
      { "text/plain": `running ${spec.id} ${JSON.stringify(params)} at ${shapeLabel(shape)}` },
      { displayId, update: results.length > 0 },
    );
    results.push(
      await runKernel(s.gpu, spec, shape, {
        params,
        budgetMs: opts.budgetMs ?? (s.software ? 300 : 400),
      }),
    );
  }
  const label = (p: Params) => Object.entries(p).map(([k, v]) => `${k}=${v}`).join(" ");
  await showBundle(
    tableBundle(
      [
        "parameters",
        "validated",
        "rel. error",
        "median ms",
        "GFLOP/s",
        "FLOP/byte (model)",
        "note",
      ],
      results.map((r, i) => [
        label(paramSets[i]),
        r.validated,
        r.relErr,
        r.medianMs,
        r.gflops,
        r.intensity,
        shortError(r.error),
      ]),
      `${spec.id} at ${shapeLabel(shape)} on ${s.summary.description}`,
    ),
    { displayId, update: true },
  );
  return results;
}

/**
 * Say, with the live numbers, how the measurement compares with the model's bound: what
 * fraction of the bound each result reached and which ceiling the model says limits it.
 */
export async function showGap(results: KernelResult[], ceilings: Ceilings): Promise<void> {
  const lines = results.filter((r) => r.gflops !== undefined).map((r) => {
    const p = predict(r.kernel, r, ceilings, r.params);
    const pct = (100 * r.gflops!) / p.boundGflops!;
    return `- \`${r.kernel}\` at ${shapeLabel(r)}: ${fmt(r.gflops)} GFLOP/s measured against a ` +
      `${p.boundBy}-bound model limit of ${fmt(p.boundGflops)} GFLOP/s ` +
      `(${fmt(p.intensity)} FLOP/byte), so **${fmt(pct)}%** of the bound.`;
  });
  if (!lines.length) {
    await showNote("No timed result to compare with the model.");
    return;
  }
  await showBundle({
    "text/plain": lines.join("\n"),
    "text/markdown": lines.join("\n"),
    "text/html": `<ul>${lines.map((l) => `<li>${inlineHtml(l.slice(2))}</li>`).join("")}</ul>`,
  });
}
