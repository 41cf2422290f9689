/**
 * The site's notebook pages, rendered by Debian's nbconvert (its lab template), and an index
 * linking them in story order with each one's title and idea; tools/build_site.ts then adds the
 * live runners.
 *
 *   deno run --allow-read --allow-write --allow-run=jupyter-nbconvert tools/render_notebooks.ts \
 *     [--from DIR] [--out DIR] [NOTEBOOK ...]
 *
 * Renders each notebook (default: every notebooks/*.ipynb; a name or path picks some) as it is
 * found in --from (default notebooks/, as committed: the GPU host's outputs), into --out (default
 * site). Nothing is executed here: `deno task site-execute` runs the notebooks on this machine's
 * adapter first (into site/executed) and renders those.
 *
 * Every page links the index and the previous and next page, and says where its outputs were
 * executed: the device, date and commit in the notebook's metadata (`gemm_ladder`), and, for a
 * software adapter, that its times are a CPU's.
 *
 * Charts carry SVG (vega-lite) or PNG (plotly) fallbacks, which is what these pages show. Each SVG
 * is shown as an <img> with a data URL: nbconvert passes inline SVG through its HTML sanitiser,
 * which strips every drawing element and leaves only the text, and an <img> also keeps one
 * chart's ids from clashing with another's.
 */
import { type JsonObject, parseNotebook, serializeNotebook } from "./notebook_json.ts";
import { listNotebooks } from "./notebook_cells.ts";
import {
  escapeHtml,
  NOTEBOOK_PAGES,
  SITE_STYLE,
  type SitePage,
  standalonePage,
  withNav,
} from "./site_pages.ts";

const NBCONVERT = "jupyter-nbconvert";

/**
 * The rule lib/gpu.ts applies to an adapter's description: the notebook's metadata keeps only
 * the description.
 */
const SOFTWARE_ADAPTER = /llvmpipe|lavapipe|swiftshader|software/i;

/** Where a notebook's outputs were executed, as its metadata `gemm_ladder` records it. */
interface ExecutedOn {
  executed_on?: string;
  date?: string;
  commit?: string;
}

/** What the site shows of one notebook: its text ready for nbconvert, and what the index shows. */
interface NotebookPage extends SitePage {
  /** The title and the idea, with their inline markdown as HTML. */
  titleHtml: string;
  ideaHtml?: string;
  executed?: ExecutedOn;
  text: string;
}

/** Inline markdown (code, strong, emphasis, links) as HTML; enough for a title or a sentence. */
function inlineMarkdown(md: string): string {
  return escapeHtml(md.replace(/\s*\n\s*/g, " ").trim())
    .replace(/`([^`]+)`/g, "<code>$1</code>")
    .replace(/\*\*([^*]+)\*\*/g, "<strong>$1</strong>")
    .replace(/(^|[^\w*])[*_]([^*_]+)[*_](?=$|[^\w*])/g, "$1<em>$2</em>")
    .replace(/\[([^\]]+)\]\([^)]*\)/g, "$1");
}

const plainText = (html: string) =>
  html.replace(/<[^>]+>/g, "").replace(/&quot;/g, '"').replace(/&lt;/g, "<").replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");

/**
 * A notebook's idea in one sentence: the paragraph right under the title (a lesson's first line,
 * as the teaching style has it), or else the paragraph labelled "**The idea.**"; its first
 * sentence. A notebook whose opening is neither has none.
 */
export function ideaOf(firstMarkdown: string): string | undefined {
  const paragraphs = firstMarkdown.split(/\n\s*\n/).slice(1).map((p) => p.trim());
  const prose = (p: string | undefined) => p && /^[^\s#*_>|`<-]/.test(p) && !/^\d+\.\s/.test(p);
  const labelled = paragraphs.find((p) => /^\*\*The idea\.\*\*/.test(p));
  const chosen = prose(paragraphs[0])
    ? paragraphs[0]
    : labelled?.replace(/^\*\*The idea\.\*\*\s*/, "");
  if (!chosen) return undefined;
  const flat = chosen.replace(/\s*\n\s*/g, " ");
  return /^.*?[.!?](?=\s+[A-Z(*`_"]|$)/.exec(flat)?.[0] ?? flat;
}

/** The notebook ready for nbconvert, and its title, idea and where it was executed. */
function notebookPage(text: string, file: string): NotebookPage {
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
  const first = nb.cells.find((c) => c.cell_type === "markdown")?.source ?? "";
  const heading = /^#+\s+(.*)$/m.exec(first.split("\n")[0])?.[1];
  const titleHtml = inlineMarkdown(heading ?? file.replace(/\.html$/, ""));
  const idea = heading ? ideaOf(first) : undefined;
  return {
    file,
    title: plainText(titleHtml),
    titleHtml,
    ideaHtml: idea && inlineMarkdown(idea),
    executed: nb.metadata.gemm_ladder as ExecutedOn | undefined,
    text: serializeNotebook(nb),
  };
}

/** "2026-11-25 17:34 UTC" from the metadata's ISO date. */
const shownDate = (iso: string) =>
  /^\d{4}-\d\d-\d\dT\d\d:\d\d/.test(iso) ? `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC` : iso;

/** The visible line that says where a page's outputs were executed. */
export function sourceLine(executed: ExecutedOn | undefined): string {
  if (!executed?.executed_on) {
    return `<p class="gemm-source">Where these outputs were executed is not recorded in the ` +
      `notebook (a run that stops at an error records nothing).</p>\n`;
  }
  const device = escapeHtml(executed.executed_on);
  const when = [
    executed.date ? shownDate(executed.date) : "date not recorded",
    executed.commit ? `commit ${escapeHtml(executed.commit)}` : "no commit recorded",
  ].join(", ");
  if (SOFTWARE_ADAPTER.test(executed.executed_on)) {
    return `<p class="gemm-source software">These outputs come from a software adapter, ` +
      `<strong>${device}</strong> (${escapeHtml(when)}): the GPU code ran on a CPU, so its ` +
      `times are a CPU's, not a GPU's; the recorded tables and charts are the GPU host's.</p>\n`;
  }
  return `<p class="gemm-source">Outputs executed on <strong>${device}</strong> ` +
    `(${escapeHtml(when)}).</p>\n`;
}

/** A rendered page with the site's style, the notebook's title and where it was executed. */
function finishPage(html: string, page: NotebookPage): string {
  const body = /<body[^>]*>\n?/.exec(html);
  if (!body) throw new Error(`${page.file}: nbconvert wrote no <body>`);
  const top = body.index + body[0].length;
  return html.slice(0, top)
    .replace(/<title>[\s\S]*?<\/title>/, `<title>${escapeHtml(page.title)}</title>`)
    .replace("</head>", `${SITE_STYLE}</head>`) +
    sourceLine(page.executed) + html.slice(top);
}

function indexPage(pages: NotebookPage[]): string {
  const items = pages.map((p) =>
    `<li><a href="${p.file}">${p.titleHtml}</a>` +
    (p.ideaHtml ? `<p class="idea">${p.ideaHtml}</p>` : "") + `</li>`
  );
  return standalonePage(
    "gemm-ladder",
    `<h1>gemm-ladder</h1>\n<p>From a naive matrix multiplication to a WebGPU kernel that ` +
      `rivals cuBLAS, one idea per notebook. Each page says where its outputs were executed.</p>` +
      `\n<ul class="gemm-index">\n${items.join("\n")}\n</ul>\n`,
  );
}

/** Render `notebooks` (names or paths) as found in `from` into `out`; the pages in story order. */
export async function renderNotebooks(
  notebooks: string[],
  from: string,
  out: string,
): Promise<SitePage[]> {
  const staging = await Deno.makeTempDir({ prefix: "gemm-render-" });
  try {
    const pages: NotebookPage[] = [];
    const names = notebooks.map((path) => path.slice(path.lastIndexOf("/") + 1)).sort();
    for (const name of names) {
      const page = notebookPage(
        await Deno.readTextFile(`${from}/${name}`),
        name.replace(/\.ipynb$/, ".html"),
      );
      await Deno.writeTextFile(`${staging}/${name}`, page.text);
      pages.push(page);
    }
    await Deno.mkdir(`${out}/data`, { recursive: true });
    const run = await new Deno.Command(NBCONVERT, {
      args: [
        "--to",
        "html",
        "--template",
        "lab",
        "--output-dir",
        out,
        ...names.map((n) => `${staging}/${n}`),
      ],
      stdout: "piped",
      stderr: "piped",
    }).output().catch((e) => {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
      throw new Error(`${NBCONVERT} is not installed: sudo apt-get install jupyter-nbconvert`);
    });
    if (!run.success) {
      throw new Error(`${NBCONVERT} failed:\n${new TextDecoder().decode(run.stderr)}`);
    }
    const order: SitePage[] = pages.map(({ file, title }) => ({ file, title }));
    for (const [at, page] of pages.entries()) {
      const file = `${out}/${page.file}`;
      const html = finishPage(await Deno.readTextFile(file), page);
      await Deno.writeTextFile(file, withNav(html, order, at));
    }
    await Deno.writeTextFile(`${out}/index.html`, indexPage(pages));
    await Deno.writeTextFile(`${out}/${NOTEBOOK_PAGES}`, JSON.stringify(order, null, 2) + "\n");
    return order;
  } finally {
    await Deno.remove(staging, { recursive: true });
  }
}

function parseArgs(args: string[]) {
  const options = { from: "notebooks", out: "site", notebooks: [] as string[] };
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "--from" || args[i] === "--out") {
      if (!args[i + 1]) throw new Error(`${args[i]} needs a folder`);
      options[args[i] === "--from" ? "from" : "out"] = args[++i];
    } else if (args[i].startsWith("--")) {
      throw new Error(`unknown option ${args[i]}`);
    } else {
      options.notebooks.push(args[i]);
    }
  }
  return options;
}

if (import.meta.main) {
  try {
    const { from, out, notebooks } = parseArgs(Deno.args);
    const pages = await renderNotebooks(
      notebooks.length ? notebooks : await listNotebooks(),
      from,
      out,
    );
    console.log(`site: ${pages.length} notebook pages from ${from}/ in ${out}/`);
  } catch (e) {
    console.error(`render_notebooks: ${(e as Error).message}`);
    Deno.exit(1);
  }
}
