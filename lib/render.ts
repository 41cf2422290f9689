/**
 * Rendering charts without a browser: vega-lite -> SVG with vega's headless renderer, SVG ->
 * PNG with resvg (WebAssembly) and the DejaVu fonts embedded (resvg has no system fonts, so
 * without them every label would vanish), and self-contained interactive HTML with vega-embed or
 * plotly.js inlined, so the files work offline and drop straight into a blog post.
 */
import * as vega from "vega";
import { compile } from "vega-lite";
import { initWasm, Resvg } from "@resvg/resvg-wasm";
import type { Chart, PlotlyFigure, VegaLiteSpec } from "./charts/common.ts";
import { FONT } from "./font.ts";

/**
 * Debian's fonts-dejavu-core (tools/ensure_system.sh installs it), or $GEMM_FONT_DIR: the GPU
 * host has no package registry, so tools/gpu_notebooks.sh points it at copies carried in dist/.
 */
export const FONT_DIR = fontDir();

function fontDir(): string {
  try {
    const dir = Deno.env.get("GEMM_FONT_DIR");
    if (dir) return dir.endsWith("/") ? dir : `${dir}/`;
  } catch {
    // No permission to read the environment: the system fonts.
  }
  return "/usr/share/fonts/truetype/dejavu/";
}
/** Regular for labels, bold for titles: the two faces the chart specs use. */
const FONT_FILES = ["DejaVuSans.ttf", "DejaVuSans-Bold.ttf"];

/** Render a vega-lite spec to an SVG document, laid out with the embedded fonts' metrics. */
export async function vegaLiteToSvg(spec: VegaLiteSpec): Promise<string> {
  await fontMetrics();
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: "none" });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

/** The SVG of a chart (a plotly chart draws its static vega-lite twin). */
export function chartSvg(chart: Chart): Promise<string> {
  return vegaLiteToSvg(chart.kind === "plotly" ? chart.fallback : chart.spec);
}

let resvgReady: Promise<Uint8Array[]> | undefined;

/** Initialise resvg's WebAssembly once and load the font files it will embed. */
function resvg(): Promise<Uint8Array[]> {
  resvgReady ??= (async () => {
    const wasm = await Deno.readFile(
      new URL(import.meta.resolve("@resvg/resvg-wasm/index_bg.wasm")),
    );
    await initWasm(wasm);
    try {
      return await Promise.all(FONT_FILES.map((f) => Deno.readFile(FONT_DIR + f)));
    } catch (e) {
      throw new Error(
        `fonts missing in ${FONT_DIR} (${(e as Error).message}); ` +
          "install them: sudo apt-get install -y fonts-dejavu-core",
      );
    }
  })();
  resvgReady.catch(() => resvgReady = undefined);
  return resvgReady;
}

/** Advance widths (in em) of printable ASCII in the regular and bold faces. */
type Advances = Record<"regular" | "bold", Map<string, number>>;
let metricsReady: Promise<void> | undefined;

/**
 * Without a canvas vega guesses every character at 0.8 em, which makes charts far wider than
 * what they draw and cuts legend labels short. Measure the real advances of the embedded font
 * once (with resvg: the width "HcH" inks beyond "HH" is c's advance) and have vega use them.
 */
function fontMetrics(): Promise<void> {
  metricsReady ??= resvg().then((fontBuffers) => {
    const advances: Advances = { regular: new Map(), bold: new Map() };
    const size = 100;
    const ink = (text: string, weight: string) => {
      const escaped = text.replace(
        /[&<>]/g,
        (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;" })[c]!,
      );
      const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${8 * size}" ` +
        `height="${2 * size}"><text x="10" y="${size}" font-family="${FONT}" ` +
        `font-size="${size}" font-weight="${weight}" xml:space="preserve">${escaped}</text></svg>`;
      const r = new Resvg(svg, { font: { fontBuffers, loadSystemFonts: false } });
      try {
        const box = r.getBBox()!;
        const width = box.width;
        box.free();
        return width;
      } finally {
        r.free();
      }
    };
    for (const face of ["regular", "bold"] as const) {
      const weight = face === "bold" ? "bold" : "normal";
      const base = ink("HH", weight);
      for (let code = 32; code < 127; code++) {
        const c = String.fromCharCode(code);
        advances[face].set(c, (ink(`H${c}H`, weight) - base) / size);
      }
    }
    type TextItem = { fontSize?: number; fontWeight?: string | number; limit?: number };
    // vega exports textMetrics (vega-scenegraph's) but its typings do not declare it.
    const { textMetrics: metrics } = vega as unknown as {
      textMetrics: { width: (item: TextItem, text?: unknown) => number };
    };
    metrics.width = (item, text) => {
      const s = text == null ? "" : String(text).trim();
      const face = /bold|[6-9]00/.test(String(item.fontWeight ?? "")) ? "bold" : "regular";
      const em = [...s].reduce((w, c) => w + (advances[face].get(c) ?? 0.62), 0);
      const width = em * (item.fontSize != null ? Number(item.fontSize) || 0 : 11);
      // Labels longer than their limit are drawn cut to it.
      const limit = Number(item.limit) || 0;
      return limit > 0 ? Math.min(width, limit) : width;
    };
  });
  metricsReady.catch(() => metricsReady = undefined);
  return metricsReady;
}

/** Rasterise an SVG to PNG at `scale` (2 = sharp on high-density screens), fonts embedded. */
export async function svgToPng(svg: string, scale = 2): Promise<Uint8Array> {
  const fontBuffers = await resvg();
  const renderer = new Resvg(svg, {
    fitTo: { mode: "zoom", value: scale },
    background: "white",
    font: { fontBuffers, defaultFontFamily: FONT, sansSerifFamily: FONT, loadSystemFonts: false },
  });
  try {
    const image = renderer.render();
    const png = image.asPng();
    image.free();
    return png;
  } finally {
    renderer.free();
  }
}

/**
 * Base64 of binary data (a PNG in a notebook bundle), in chunks: spreading a large array into one
 * call overflows the stack.
 */
export function encodeBase64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}

/** A box in an SVG's user units. */
export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

/**
 * The box that an SVG's elements cover, text included (laid out with the embedded fonts), wherever
 * they lie: not clipped to the document's width and height, so a test can see what would be cut
 * off. Undefined for a document that draws nothing.
 */
export async function drawnBox(svg: string): Promise<Box | undefined> {
  const fontBuffers = await resvg();
  const renderer = new Resvg(svg, {
    font: { fontBuffers, defaultFontFamily: FONT, sansSerifFamily: FONT, loadSystemFonts: false },
  });
  try {
    const box = renderer.getBBox();
    if (!box) return undefined;
    const { x, y, width, height } = box;
    box.free();
    return { x, y, width, height };
  } finally {
    renderer.free();
  }
}

/** PNG of a chart at 2x. */
export async function chartPng(chart: Chart, scale = 2): Promise<Uint8Array> {
  return svgToPng(await chartSvg(chart), scale);
}

/**
 * Text of a browser build shipped inside an npm package, next to the package's entry module.
 * Importing the package (or its package.json) first makes Deno fetch it into its cache.
 */
async function browserBuild(pkg: "vega" | "vega-lite" | "vega-embed" | "plotly.js-dist-min") {
  const file = {
    "vega": "vega.min.js",
    "vega-lite": "vega-lite.min.js",
    "vega-embed": "vega-embed.min.js",
    "plotly.js-dist-min": "plotly.min.js",
  }[pkg];
  if (pkg === "vega-embed") await import("vega-embed");
  if (pkg === "plotly.js-dist-min") {
    // plotly's bundle needs a DOM to run; its package.json is enough to fetch the package.
    await import("plotly.js-dist-min/package.json", { with: { type: "json" } });
  }
  return await Deno.readTextFile(new URL(file, import.meta.resolve(pkg)));
}

const scriptCache = new Map<string, Promise<string>>();
function inlineScript(pkg: Parameters<typeof browserBuild>[0]): Promise<string> {
  let s = scriptCache.get(pkg);
  if (!s) {
    // "</script" inside the library would end the inline <script> element early.
    s = browserBuild(pkg).then((js) =>
      `<script>${js.replaceAll("</script", "<\\/script")}</script>`
    );
    scriptCache.set(pkg, s);
    s.catch(() => scriptCache.delete(pkg));
  }
  return s;
}

/** JSON safe to put inside a <script> element. */
const scriptJson = (value: unknown) => JSON.stringify(value).replaceAll("<", "\\u003c");

const escapeHtml = (s: string) =>
  s.replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]!);

function page(title: string, scripts: string[], body: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>body { font-family: "${FONT}", sans-serif; margin: 16px; } #chart { min-height: 200px; }</style>
${scripts.join("\n")}
</head>
<body>
<div id="chart"></div>
${body}
</body>
</html>
`;
}

/**
 * A self-contained HTML page (no network) that draws the chart interactively. Errors while
 * drawing are written into the page as `<pre id="chart-error">`, so headless checks can see them.
 */
export async function chartHtml(chart: Chart, title = chart.name): Promise<string> {
  const onError = `function showError(e) {
  const pre = document.createElement("pre");
  pre.id = "chart-error";
  pre.textContent = String(e && e.stack || e);
  document.body.appendChild(pre);
}`;
  if (chart.kind === "plotly") {
    return page(
      title,
      [await inlineScript("plotly.js-dist-min")],
      `<script>
${onError}
const figure = ${scriptJson(chart.figure satisfies PlotlyFigure)};
Plotly.newPlot("chart", figure.data, figure.layout, figure.config)
  .then(() => document.body.dataset.rendered = "true", showError);
</script>`,
    );
  }
  const scripts = await Promise.all([
    inlineScript("vega"),
    inlineScript("vega-lite"),
    inlineScript("vega-embed"),
  ]);
  return page(
    title,
    scripts,
    `<script>
${onError}
const spec = ${scriptJson(chart.spec)};
vegaEmbed("#chart", spec, {
  renderer: "svg",
  actions: { export: true, source: false, compiled: false, editor: false },
}).then(() => document.body.dataset.rendered = "true", showError);
</script>`,
  );
}
