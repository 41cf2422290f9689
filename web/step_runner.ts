/// <reference lib="dom" />
/**
 * The runner on a step's page: the reader picks the step's tile parameters and sizes, presses
 * run, and gets each result validated then timed on their GPU, in a table and on the roofline
 * beside the recorded GPU-host run (lib/charts, as the notebooks draw it).
 */
import { rooflineChart } from "../lib/charts/roofline.ts";
import { findKernel, type KernelSpec, type Params } from "../lib/registry.ts";
import type { KernelResult } from "../lib/record.ts";
import { fill, h } from "./dom.ts";
import {
  adapterError,
  adapterLine,
  chartOrWhy,
  downloadButton,
  liveRecord,
  readerGpu,
  recordedManifest,
  recordedRun,
  resultsTable,
  runStep,
  setState,
  sizesFor,
  whyNoWebGpu,
} from "./live.ts";
import { brokenOnPurpose } from "./test_hooks.ts";

/** One select per searched parameter; steps without a search space run their defaults. */
function paramControls(spec: KernelSpec): { el: HTMLElement; read(): Params } {
  const selects = Object.entries(spec.space ?? {}).map(([name, values]) => {
    const select = h(
      "select",
      { name, "aria-label": name },
      ...values.map((v) =>
        h("option", { value: String(v), selected: v === spec.params[name] }, String(v))
      ),
    );
    return { name, select };
  });
  const el = selects.length
    ? h(
      "span",
      { class: "params" },
      ...selects.flatMap(({ name, select }) => [h("label", {}, `${name} `, select), " "]),
    )
    : h("span", { class: "params" }, `parameters: ${JSON.stringify(spec.params)}`);
  return {
    el,
    read: () => Object.fromEntries(selects.map(({ name, select }) => [name, Number(select.value)])),
  };
}

export async function mountStepRunner(root: HTMLElement, name: string): Promise<void> {
  const found = findKernel(name);
  if (!found) {
    fill(root, h("p", { class: "error" }, `No step named "${name}" in this build.`));
    return;
  }
  const spec = await brokenOnPurpose(found);
  const controls = paramControls(spec);
  const run = h("button", { type: "button", class: "run" }, "Run on my GPU");
  const chart = h("div", { class: "chart" });
  const table = h("div", { class: "table" });
  const extra = h("div", { class: "extra" });
  fill(
    root,
    h("h2", {}, `Run ${spec.title} on your GPU`),
    h("p", {}, spec.idea),
    h(
      "p",
      { class: "note" },
      "Each size: fresh random A and B, C poisoned with NaN, one product checked against a " +
        "float64 reference, and only then timed with GPU timestamps (median of many passes).",
    ),
    h("div", { class: "controls" }, controls.el, run),
    h("p", { class: "status", role: "status" }),
    table,
    chart,
    extra,
  );
  const manifest = await recordedManifest();
  const recorded = await recordedRun(manifest.steps[spec.name]);
  if (recorded) await chartOrWhy(chart, () => rooflineChart(recorded));

  run.addEventListener("click", async () => {
    run.disabled = true;
    try {
      setState(root, "running", "Starting WebGPU...");
      let g;
      try {
        g = await readerGpu();
      } catch (e) {
        setState(root, "no-adapter", adapterError(e));
        return;
      }
      const { sizes, dropped } = sizesFor(g);
      // The step's defaults unless the reader changed one: then the runner may swap defaults that
      // exceed this adapter's limits for the nearest that fit (and says so in the row).
      const chosen = controls.read();
      const params = Object.entries(chosen).some(([k, v]) => spec.params[k] !== v)
        ? chosen
        : undefined;
      // Each press is one run: its table, chart and download hold only its own results.
      const results: KernelResult[] = [];
      for (const [i, n] of sizes.entries()) {
        setState(root, "running", `Running ${spec.id} at ${n} (${i + 1}/${sizes.length})...`);
        results.push(await runStep(g, spec, n, params));
        fill(table, resultsTable(results));
      }
      const mine = liveRecord(g, results, manifest.commit);
      await chartOrWhy(chart, () => rooflineChart(recorded ? [recorded, mine] : mine));
      fill(extra, downloadButton(() => mine, `${spec.id}-browser.json`));
      const failed = results.filter((r) => !r.validated).length;
      const summary = `${adapterLine(g)}. ${results.length - failed} validated, ${failed} failed` +
        (dropped.length ? `; sizes left out: ${dropped.join("; ")}` : "") + ".";
      setState(root, failed ? "failed" : "done", summary);
    } catch (e) {
      setState(root, "error", `Stopped: ${e instanceof Error ? e.message : e}`);
    } finally {
      run.disabled = false;
    }
  });
  // Ready only now that the button listens.
  const noGpu = whyNoWebGpu();
  if (noGpu) {
    run.disabled = true;
    setState(root, "no-webgpu", noGpu);
  } else {
    setState(root, "idle", "Press run: it takes seconds on a GPU, longer on a software adapter.");
  }
}
