/// <reference lib="dom" />
/**
 * The whole ladder on the reader's GPU: every step validated then timed at one size, beside
 * the recorded GPU-host run and its cuBLAS, on the same charts as the notebooks; the reader's
 * numbers download as a run record in the bench's schema.
 */
import { ladderChart } from "../lib/charts/ladder.ts";
import { rooflineChart } from "../lib/charts/roofline.ts";
import { findKernel, KERNELS, type KernelSpec } from "../lib/registry.ts";
import type { KernelResult } from "../lib/record.ts";
import { fill, h } from "./dom.ts";
import {
  adapterError,
  adapterLine,
  chartOrWhy,
  downloadButton,
  liveRecord,
  query,
  readerGpu,
  recordedManifest,
  recordedRun,
  resultsTable,
  runStep,
  setState,
  sizesFor,
  whyNoWebGpu,
} from "./live.ts";

/** The ladder's steps, or those named by `?kernels=naive,tiled`. */
function ladderSteps(): KernelSpec[] {
  const named = query.get("kernels")?.split(",").map((k) => findKernel(k));
  return named?.length ? named.filter((k): k is KernelSpec => !!k) : KERNELS.filter((k) => !k.demo);
}

export async function mountLadderRunner(root: HTMLElement): Promise<void> {
  const steps = ladderSteps();
  const run = h("button", { type: "button", class: "run" }, "Run the ladder on my GPU");
  const size = h("select", { name: "size", "aria-label": "size" });
  const [roofline, yours, theirs] = [0, 1, 2].map(() => h("div", { class: "chart" }));
  const table = h("div", { class: "table" });
  const extra = h("div", { class: "extra" });
  fill(
    root,
    h("h1", {}, "The ladder on your GPU"),
    h(
      "p",
      {},
      `${steps.length} kernels, from ${steps[0]?.title} to ${steps.at(-1)?.title}, each ` +
        "checked against a float64 reference on fresh random inputs and then timed with GPU " +
        "timestamps, beside the recorded GPU-host run and cuBLAS (TF32 off) measured there.",
    ),
    h("div", { class: "controls" }, h("label", {}, "size N ", size), " ", run),
    h(
      "p",
      { class: "note" },
      "A step the adapter cannot run (a missing feature such as shader-f16, a tile past its " +
        "limits) or a result that fails the check is listed as a failure with the reason, " +
        "never as a speed.",
    ),
    h("p", { class: "status", role: "status" }),
    table,
    roofline,
    h("div", { class: "pair" }, yours, theirs),
    extra,
  );
  const manifest = await recordedManifest();
  const recorded = await recordedRun(manifest.ladder);
  if (recorded) await chartOrWhy(theirs, () => ladderChart(recorded));
  const noGpu = whyNoWebGpu();
  if (noGpu) {
    run.disabled = true;
    setState(root, "no-webgpu", noGpu);
    return;
  }
  let g;
  try {
    g = await readerGpu();
  } catch (e) {
    run.disabled = true;
    setState(root, "no-adapter", adapterError(e));
    return;
  }
  // The sizes the notebooks run on this adapter (the largest picked), or those of ?sizes=.
  const { sizes, dropped } = sizesFor(g);
  fill(
    size,
    ...sizes.map((n) => h("option", { value: String(n), selected: n === sizes.at(-1) }, String(n))),
  );
  setState(
    root,
    "idle",
    `${adapterLine(g)}. Pick a size and run` +
      (dropped.length ? ` (left out: ${dropped.join("; ")}).` : "."),
  );

  run.addEventListener("click", async () => {
    run.disabled = true;
    try {
      const n = Number(size.value);
      const results: KernelResult[] = [];
      for (const [i, spec] of steps.entries()) {
        setState(root, "running", `Running ${spec.id} at ${n} (${i + 1}/${steps.length})...`);
        results.push(await runStep(g, spec, n));
        fill(table, resultsTable(results));
      }
      const mine = liveRecord(g, results, manifest.commit);
      await chartOrWhy(roofline, () => rooflineChart(recorded ? [recorded, mine] : mine));
      await chartOrWhy(yours, () => ladderChart(mine));
      fill(extra, downloadButton(() => mine, "ladder-browser.json"));
      const failed = results.filter((r) => !r.validated).length;
      setState(
        root,
        failed ? "failed" : "done",
        `${adapterLine(g)}. At ${n}: ${results.length - failed} validated, ${failed} failed.`,
      );
    } catch (e) {
      setState(root, "error", `Stopped: ${e instanceof Error ? e.message : e}`);
    } finally {
      run.disabled = false;
    }
  });
}
