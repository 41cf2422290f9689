/**
 * HTML pages of executed notebooks for the site, rendered by Debian's nbconvert (its lab
 * template), and an index page linking them; tools/build_site.ts then adds the live runners.
 *
 *   deno run --allow-read --allow-write --allow-run tools/render_notebooks.ts [--executed DIR] [--out DIR]
 *
 * Renders every notebook of notebooks/ from its executed copy in --executed (default
 * site/executed, where `deno task notebooks` writes them) into --out (default site).
 *
 * Charts carry SVG (vega-lite) or PNG (plotly) fallbacks, which is what these pages show. Each SVG
 * is shown as an <img> with a data URL: nbconvert passes inline SVG through its HTML sanitiser,
 * which strips every drawing element and leaves only the text, and an <img> also keeps one
 * chart's ids from clashing with another's.
 */
import { type JsonObject, parseNotebook, serializeNotebook } from "./notebook_json.ts";
import { listNotebooks } from "./notebook_cells.ts";

const NBCONVERT = "jupyter-nbconvert";

const escape = (s: string) =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

/** The notebook's text with every SVG output that has no HTML shown as an <img>. */
function svgAsImages(text: string): { text: string; title: string | undefined } {
  const nb = parseNotebook(text);
  for (const cell of nb.cells) {
    for (const output of (cell.outputs ?? []) as JsonObject[]) {
      const data = output.data as JsonObject | undefined;
      const svg = data?.["image/svg+xml"];
      if (typeof svg !== "string" || "text/html" in data!) continue;
      const bytes = new TextEncoder().encode(svg);
      const encoded = btoa(Array.from(bytes, (b) => String.fromCharCode(b)).join(""));
      data!["text/html"] = `<img alt="chart" src="data:image/svg+xml;base64,${encoded}">`;
    }
  }
  const heading = nb.cells.find((c) => c.cell_type === "markdown")?.source.split("\n")[0];
  return {
    text: serializeNotebook(nb),
    title: heading?.replace(/^[# ]+/, "").replaceAll("`", ""),
  };
}

/** Render the executed copies of `notebooks` (by file name) from `executed` into `out`. */
export async function renderNotebooks(
  notebooks: string[],
  executed: string,
  out: string,
): Promise<string[]> {
  const staging = await Deno.makeTempDir({ prefix: "gemm-render-" });
  try {
    const pages: { file: string; title: string }[] = [];
    const inputs: string[] = [];
    for (const path of notebooks) {
      const name = path.slice(path.lastIndexOf("/") + 1);
      const stem = name.replace(/\.ipynb$/, "");
      const { text, title } = svgAsImages(await Deno.readTextFile(`${executed}/${name}`));
      await Deno.writeTextFile(`${staging}/${name}`, text);
      inputs.push(`${staging}/${name}`);
      pages.push({ file: `${stem}.html`, title: title || stem });
    }
    await Deno.mkdir(out, { recursive: true });
    const run = await new Deno.Command(NBCONVERT, {
      args: ["--to", "html", "--template", "lab", "--output-dir", out, ...inputs],
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (!run.success) {
      throw new Error(`${NBCONVERT} failed:\n${new TextDecoder().decode(run.stderr)}`);
    }
    const links = pages.map((p) => `<li><a href="${p.file}">${escape(p.title)}</a></li>`);
    await Deno.writeTextFile(
      `${out}/index.html`,
      "<!doctype html><meta charset=utf-8><title>gemm-ladder notebooks</title>" +
        "<style>body{font-family:sans-serif;max-width:50em;margin:2em auto}</style>" +
        `<h1>gemm-ladder notebooks</h1><ul style='list-style:none'>${links.join("\n")}</ul>\n`,
    );
    return pages.map((p) => p.file);
  } finally {
    await Deno.remove(staging, { recursive: true });
  }
}

function option(args: string[], name: string, fallback: string): string {
  const i = args.indexOf(name);
  if (i < 0) return fallback;
  if (!args[i + 1]) throw new Error(`${name} needs a folder`);
  return args[i + 1];
}

if (import.meta.main) {
  try {
    const executed = option(Deno.args, "--executed", "site/executed");
    const out = option(Deno.args, "--out", "site");
    const pages = await renderNotebooks(await listNotebooks(), executed, out);
    console.log(`site: ${pages.length} notebook pages in ${out}`);
  } catch (e) {
    console.error(`render_notebooks: ${(e as Error).message}`);
    Deno.exit(1);
  }
}
