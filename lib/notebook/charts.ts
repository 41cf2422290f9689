/**
 * Showing charts in notebooks as MIME bundles that render everywhere: vega-lite JSON
 * (interactive in JupyterLab, Jupyter Notebook and VS Code) with SVG and PNG fallbacks (nbconvert
 * HTML, GitHub); plotly JSON (JupyterLab with the plotly extension, VS Code) with a PNG fallback.
 * Building charts is lib/charts/ and rendering them lib/render.ts; this module only displays
 * them.
 */
import type { Chart } from "../charts/common.ts";
import { chartPng, chartSvg, svgToPng } from "../render.ts";
import {
  type DisplayBundle,
  type DisplayMetadata,
  inJupyter,
  type LiveDisplay,
  showBundle,
} from "./jupyter.ts";

/**
 * JupyterLab and VS Code render vega-lite under the v5 media type; our specs use only what v5
 * renders, so they are published there (with a v5 $schema, which the renderer checks).
 */
const VEGA_LITE_MIME = "application/vnd.vegalite.v5+json";
const V5_SCHEMA = "https://vega.github.io/schema/vega-lite/v5.json";

/**
 * The MIME bundle for a chart, fallback images included. A vega-lite bundle carries a PNG
 * because JupyterLab's vega renderer (@jupyterlab/vega5-extension) adds one to any vega-lite
 * output that lacks it, which marks a stored notebook modified as soon as it is opened.
 */
export async function chartBundle(chart: Chart): Promise<DisplayBundle> {
  const text = `[${chart.kind} chart: ${chart.name}]`;
  if (chart.kind === "vega-lite") {
    const svg = await chartSvg(chart);
    return {
      [VEGA_LITE_MIME]: { ...chart.spec, $schema: V5_SCHEMA },
      "image/svg+xml": svg,
      "image/png": encodeBase64(await svgToPng(svg)),
      "text/plain": text,
    };
  }
  return {
    "application/vnd.plotly.v1+json": chart.figure,
    "image/png": encodeBase64(await chartPng(chart)),
    "text/plain": text,
  };
}

/**
 * Display metadata for a bundle: its PNG (drawn at 2x for sharpness) shown at its CSS width, so
 * it fits the output area like the SVG charts instead of spreading to twice their size.
 */
export function chartMetadata(bundle: DisplayBundle): DisplayMetadata {
  const png = bundle["image/png"];
  if (typeof png !== "string") return {};
  // The width is the big-endian word at byte 16 (in IHDR): within the first 32 base64 chars.
  const head = Uint8Array.from(atob(png.slice(0, 32)), (c) => c.charCodeAt(0));
  const width = new DataView(head.buffer).getUint32(16);
  return { "image/png": { width: Math.round(width / 2) } };
}

/** Base64 of binary data, in chunks (spreading a large array into one call overflows the stack). */
function encodeBase64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}

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
  const metadata = chartMetadata(bundle);
  await (live ? live.update(bundle, metadata) : showBundle(bundle, metadata));
}
