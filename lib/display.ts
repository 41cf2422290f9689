/**
 * Showing charts in notebooks (Deno's Jupyter kernel) as MIME bundles that render everywhere:
 * vega-lite JSON (interactive in JupyterLab and VS Code) with an SVG fallback (nbconvert HTML,
 * GitHub); plotly JSON (JupyterLab with the plotly extension, VS Code) with a PNG fallback.
 * `liveDisplay` updates one output in place, for long sweeps.
 */
import type { Chart } from "./charts/common.ts";
import { chartPng, chartSvg } from "./render.ts";

/** A Jupyter MIME bundle: media type -> data (strings, or JSON objects). */
export type MimeBundle = Record<string, string | object>;

/**
 * JupyterLab and VS Code render vega-lite under the v5 media type; our specs use only what v5
 * renders, so they are published there (with a v5 $schema, which the renderer checks).
 */
const VEGA_LITE_MIME = "application/vnd.vegalite.v5+json";
const V5_SCHEMA = "https://vega.github.io/schema/vega-lite/v5.json";

/** The MIME bundle for a chart, fallback images included. */
export async function chartBundle(chart: Chart): Promise<MimeBundle> {
  const text = `[${chart.kind} chart: ${chart.name}]`;
  if (chart.kind === "vega-lite") {
    return {
      [VEGA_LITE_MIME]: { ...chart.spec, $schema: V5_SCHEMA },
      "image/svg+xml": await chartSvg(chart),
      "text/plain": text,
    };
  }
  return {
    "application/vnd.plotly.v1+json": chart.figure,
    "image/png": encodeBase64(await chartPng(chart)),
    "text/plain": text,
  };
}

/** Base64 of binary data, in chunks (spreading a large array into one call overflows the stack). */
function encodeBase64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}

type Jupyter = typeof Deno.jupyter;

/** Deno.jupyter inside the kernel; undefined elsewhere (reading it outside the kernel throws). */
function jupyter(): Jupyter | undefined {
  try {
    return Deno.jupyter;
  } catch {
    return undefined;
  }
}

/** Display a chart in the notebook; outside a kernel it prints one line instead. */
export async function show(chart: Chart): Promise<void> {
  const j = jupyter();
  if (!j) {
    console.log(`[${chart.kind} chart: ${chart.name}] (not in a notebook; use tools/export.ts)`);
    return;
  }
  await j.display(await chartBundle(chart), { raw: true });
}

/** One notebook output updated in place: progress text first, then partial charts. */
export interface LiveDisplay {
  readonly id: string;
  /** Replace the output with a chart, or with a line of progress (Markdown). */
  update(content: Chart | string): Promise<void>;
}

/** An updatable display (Jupyter display_id). Outside a kernel, progress lines go to stderr. */
export function liveDisplay(id = `gemm-${crypto.randomUUID()}`): LiveDisplay {
  let shown = false;
  return {
    id,
    async update(content) {
      const j = jupyter();
      if (!j) {
        if (typeof content === "string") console.error(content);
        return;
      }
      const bundle = typeof content === "string"
        ? { "text/markdown": content, "text/plain": content }
        : await chartBundle(content);
      await j.display(bundle, { raw: true, display_id: id, update: shown });
      shown = true;
    },
  };
}
