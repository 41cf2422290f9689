/**
 * Showing charts in notebooks as MIME bundles that render everywhere: vega-lite JSON
 * (interactive in JupyterLab, Jupyter Notebook and VS Code) with SVG and PNG fallbacks (nbconvert
 * HTML, GitHub); plotly JSON (JupyterLab with the plotly extension, VS Code) with a PNG fallback.
 * Building charts is lib/charts/ and rendering them lib/render.ts; this module only displays
 * them.
 */
import type { Chart } from "../charts/common.ts";
import { chartPng, chartSvg, encodeBase64, svgToPng } from "../render.ts";
import { type DisplayBundle, inJupyter, type LiveDisplay, showBundle } from "./jupyter.ts";

/**
 * JupyterLab and VS Code render vega-lite under the v5 media type; our specs use only what v5
 * renders, so they are published there (with a v5 $schema, which the renderer checks).
 */
const VEGA_LITE_MIME = "application/vnd.vegalite.v5+json";
const V5_SCHEMA = "https://vega.github.io/schema/vega-lite/v5.json";

/**
 * The MIME bundle for a chart, fallback images included. A vega-lite bundle carries a PNG
 * because JupyterLab's vega renderer (@jupyterlab/vega5-extension) adds one to any vega-lite
 * output that lacks it, which marks a stored notebook modified as soon as it is opened. The PNG is
 * drawn at the size the chart is shown, so the notebook stores each chart's pixels once.
 */
export async function chartBundle(chart: Chart): Promise<DisplayBundle> {
  const text = `[${chart.kind} chart: ${chart.name}]`;
  if (chart.kind === "vega-lite") {
    const svg = await chartSvg(chart);
    return {
      [VEGA_LITE_MIME]: { ...chart.spec, $schema: V5_SCHEMA },
      "image/svg+xml": svg,
      "image/png": encodeBase64(await svgToPng(svg, SHOWN_SCALE)),
      "text/plain": text,
    };
  }
  return {
    "application/vnd.plotly.v1+json": chart.figure,
    "image/png": encodeBase64(await chartPng(chart, SHOWN_SCALE)),
    "text/plain": text,
  };
}

/** One PNG pixel per CSS pixel: the chart's own size, as its SVG is shown. */
const SHOWN_SCALE = 1;

/**
 * Display a chart in the notebook, as a new output or in place of `live`'s (partial charts of a
 * long sweep). Outside a kernel it prints one line and renders nothing.
 */
export async function showChart(chart: Chart, live?: LiveDisplay): Promise<void> {
  if (!inJupyter()) {
    console.log(`[${chart.kind} chart: ${chart.name}] (not in a notebook; use tools/export.ts)`);
    return;
  }
  const bundle = await chartBundle(chart);
  await (live ? live.update(bundle) : showBundle(bundle));
}
