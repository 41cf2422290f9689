/// <reference lib="dom" />
/**
 * What both live pages share: the reader's adapter (or why there is none), the sizes that fit
 * it, the recorded GPU-host runs, a live run as a run record, the results table and the charts.
 * Kernels run through lib/runner.ts, the same validated runner as the bench and the notebooks.
 */
import embed from "vega-embed";
import type { Chart } from "../lib/charts/common.ts";
import { GemmError } from "../lib/errors.ts";
import { acquireGpu, type Gpu } from "../lib/gpu.ts";
import { square } from "../lib/matrix.ts";
import { ladderSizes } from "../lib/sizes.ts";
import { platform } from "../lib/platform.ts";
import {
  type KernelResult,
  liveRunRecord,
  recordFromJson,
  recordToJson,
  type RunRecord,
} from "../lib/record.ts";
import type { KernelSpec, Params } from "../lib/registry.ts";
import { runKernel } from "../lib/runner.ts";
import { fill, h } from "./dom.ts";

/** What the build wrote to data/recorded.json: which record each page shows. */
export interface RecordedManifest {
  commit: string;
  built: string;
  /** The newest GPU-host record of the whole ladder. */
  ladder?: string;
  /** Per step name: the record its notebook reads (pinned, else the newest with it validated). */
  steps: Record<string, string>;
}

/** The page's query string: test hooks and size choices (`?sizes=64,128`). */
export const query = new URLSearchParams(location.search);

let manifest: Promise<RecordedManifest> | undefined;
export function recordedManifest(): Promise<RecordedManifest> {
  manifest ??= platform.readText("data/recorded.json").then((t) => JSON.parse(t));
  return manifest;
}

/** A recorded run from the site's data/runs/, or undefined when none was committed. */
export async function recordedRun(path: string | undefined): Promise<RunRecord | undefined> {
  return path ? recordFromJson(await platform.readText(path), path) : undefined;
}

/** Why this browser cannot run the kernels, before anything is tried (undefined: it may). */
export function whyNoWebGpu(): string | undefined {
  if (!isSecureContext) {
    return "WebGPU needs a secure context: open this page over https or from localhost " +
      `(it was served from ${location.origin}). The recorded numbers below are still shown.`;
  }
  if (!("gpu" in navigator) || !navigator.gpu) {
    return "This browser has no WebGPU (navigator.gpu is missing), so the kernels cannot run " +
      "here. Recent Chrome, Edge and Safari have it; on Linux, Chrome needs " +
      "--enable-unsafe-webgpu. The recorded numbers below are still shown.";
  }
  return undefined;
}

let gpu: Promise<Gpu> | undefined;

/** The reader's device, acquired once per page with raised limits (lib/gpu.ts). */
export function readerGpu(): Promise<Gpu> {
  gpu ??= acquireGpu();
  gpu.catch(() => gpu = undefined);
  return gpu;
}

/** A message for an error while acquiring the adapter. */
export function adapterError(e: unknown): string {
  const why = e instanceof Error ? e.message : String(e);
  return e instanceof GemmError && e.kind === "no-adapter"
    ? `No WebGPU adapter: ${why}. The browser may have WebGPU switched off or blocklisted ` +
      "for this GPU."
    : `Could not start WebGPU: ${why}`;
}

/** One line on the adapter, and what the timings will be. */
export function adapterLine(g: Gpu): string {
  const s = g.summary;
  const name = s.description;
  const timing = g.has("timestamp-query")
    ? "GPU timestamps (timestamp-query)"
    : "no timestamp-query on this adapter (in Chrome it may be behind " +
      "chrome://flags/#enable-webgpu-developer-features): times are wall-clock batches, " +
      "coarser";
  return `${name}${s.software ? " (software adapter)" : ""}; timed with ${timing}`;
}

/** Square sizes for this adapter: the notebooks' choice (or ?sizes=), those that fit it. */
export function sizesFor(g: Gpu): { sizes: number[]; dropped: string[] } {
  const asked = query.get("sizes")?.split(",").map(Number).filter((n) => n > 0 && n % 1 === 0);
  const lim = g.device.limits;
  const cap = Math.min(lim.maxStorageBufferBindingSize, lim.maxBufferSize);
  const wanted = asked?.length ? asked : ladderSizes(g.summary);
  const fits = (n: number) => n * n * 4 <= cap;
  return {
    sizes: wanted.filter(fits),
    dropped: wanted.filter((n) => !fits(n)).map((n) =>
      `${n} x ${n} needs ${n * n * 4} bytes per matrix; this adapter's buffers hold ${cap}`
    ),
  };
}

/** Validate then time one kernel at one square size on the reader's device. */
export function runStep(
  g: Gpu,
  spec: KernelSpec,
  n: number,
  params?: Params,
): Promise<KernelResult> {
  return runKernel(g, spec, square(n), { params, budgetMs: g.summary.software ? 300 : 400 });
}

/** The reader's results as a run record in the bench's schema (lib/record.ts). */
export function liveRecord(g: Gpu, results: KernelResult[], commit: string): RunRecord {
  return liveRunRecord(g.summary, results, {
    commit,
    runtime: `none: a browser (${navigator.userAgent})`,
    note: `live run in the browser, ${location.pathname.replace(/^.*\//, "")}`,
  });
}

const fmt = (x: number | undefined, digits = 3) =>
  x === undefined || !Number.isFinite(x) ? "" : Number(x.toPrecision(digits)).toLocaleString("en");

/** One table row per result: validated and timed, or the failure, never a speed for a failure. */
export function resultsTable(results: KernelResult[]): HTMLTableElement {
  const row = (r: KernelResult) => {
    const params = Object.entries(r.params).map(([k, v]) => `${k}=${v}`).join(" ");
    const ok = r.validated;
    return h(
      "tr",
      { class: ok ? "ok" : "failed", "data-kernel": r.kernel, "data-validated": String(ok) },
      h("td", {}, r.kernel),
      h("td", {}, `${r.m}x${r.k}x${r.n}`),
      h("td", {}, r.adapted ? `${params} (${r.adapted})` : params),
      h("td", {}, ok ? `validated (rel. error ${r.relErr.toExponential(1)})` : "FAILED"),
      h("td", { class: "num" }, ok ? fmt(r.medianMs) : ""),
      h("td", { class: "num" }, ok ? fmt(r.gflops) : ""),
      h(
        "td",
        {},
        ok ? (r.timing ?? "") : `${r.errorKind ?? "error"}: ${r.error ?? "no reason given"}`,
      ),
    );
  };
  return h(
    "table",
    { class: "gemm-results" },
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        ...["kernel", "shape", "parameters", "check against float64", "ms", "GFLOP/s", "timer"]
          .map((c) => h("th", {}, c)),
      ),
    ),
    h("tbody", {}, ...results.map(row)),
  );
}

/** Draw a chart from lib/charts with vega-embed; its menu exports SVG and PNG, offline. */
export async function showChart(el: HTMLElement, chart: Chart): Promise<void> {
  const spec = chart.kind === "vega-lite" ? chart.spec : chart.fallback;
  await embed(el, spec, {
    renderer: "svg",
    actions: { export: true, source: false, compiled: false, editor: false },
    downloadFileName: chart.name,
  });
}

/** A chart, or the reason it cannot be drawn, in `el`. */
export async function chartOrWhy(el: HTMLElement, build: () => Chart): Promise<void> {
  try {
    await showChart(el, build());
  } catch (e) {
    fill(el, h("p", { class: "note" }, `No chart: ${e instanceof Error ? e.message : e}`));
  }
}

/** A button that saves a run record as JSON. */
export function downloadButton(record: () => RunRecord, name: string): HTMLButtonElement {
  return h("button", {
    type: "button",
    class: "download",
    onclick: () => {
      const url = URL.createObjectURL(
        new Blob([recordToJson(record())], { type: "application/json" }),
      );
      h("a", { href: url, download: name }).click();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    },
  }, "Download your numbers (run record JSON)");
}

/** The page's state for readers and tests: idle, running, done, failed. */
export function setState(root: HTMLElement, state: string, message?: string): void {
  root.dataset.state = state;
  const status = root.querySelector<HTMLElement>(".status");
  if (status && message !== undefined) status.textContent = message;
}
