/**
 * The live part of the site: every ladder page gets a runner that validates and times its step
 * on the reader's GPU, and site/ladder.html runs the whole ladder. Everything the pages load is
 * copied into the site folder, so it works offline once loaded:
 *   assets/ladder.js   web/app.ts and the library it imports (runner, registry, models, charts,
 *                      vega, vega-lite, vega-embed), bundled for the browser by `deno bundle`
 *   kernels/           every WGSL file, fetched by the runner as the bench reads them from disk
 *   data/runs/         the recorded GPU-host runs the pages chart beside the reader's numbers
 *   data/recorded.json which record each page shows, chosen as the notebooks choose it
 * A rendered notebook page (site/NN_name.html from `tools/render_notebooks.ts`) gets the
 * runner added at its end; a step without one gets a page of its own. Every page then gets its
 * index, previous and next links (tools/site_pages.ts) in one story order: the notebook pages
 * render_notebooks.ts listed, each step page without a notebook at its number, the ladder last.
 *   deno task site-live                      (after `deno task site` has rendered the notebooks)
 *   deno run -A tools/build_site.ts --out DIR   (tests/site_test.ts builds into a temp folder)
 */
import { KERNELS, type KernelSpec } from "../lib/registry.ts";
import { currentCommit } from "../lib/record.ts";
import { recordedGpuRun, useRecord } from "../lib/notebook/recorded.ts";
import { notebookModule } from "./notebook_cells.ts";
import {
  escapeHtml,
  NOTEBOOK_PAGES,
  type SitePage,
  standalonePage,
  withNav,
} from "./site_pages.ts";

const ROOT = new URL("../", import.meta.url);
const MARK = "<!-- gemm-live -->";

/** The steps a page is made for: the ladder without its teaching variants. */
const SITE_STEPS: KernelSpec[] = KERNELS.filter((k) => !k.demo);

function argValue(name: string, fallback: string): string {
  const i = Deno.args.indexOf(name);
  return i >= 0 && Deno.args[i + 1] ? Deno.args[i + 1] : fallback;
}

/** Bundle web/app.ts for the browser; each step module gets its own import.meta.url back. */
async function bundle(out: string): Promise<void> {
  const file = `${out}/assets/ladder.js`;
  const run = async (cmd: string, args: string[]) => {
    const result = await new Deno.Command(cmd, { args, cwd: ROOT, stderr: "piped" }).output();
    if (!result.success) {
      throw new Error(
        `${cmd} ${args.join(" ")} failed:\n${new TextDecoder().decode(result.stderr)}`,
      );
    }
    return result;
  };
  const raw = `${file}.raw`;
  await run(Deno.execPath(), [
    "bundle",
    "--quiet",
    "--platform",
    "browser",
    "--output",
    raw,
    "web/app.ts",
  ]);
  const fixed = await run("awk", ["-f", "tools/step_urls.awk", raw]);
  await Deno.writeFile(file, fixed.stdout);
  await Deno.remove(raw);
}

async function copyTree(from: URL, to: string, keep: (name: string) => boolean) {
  await Deno.mkdir(to, { recursive: true });
  for await (const entry of Deno.readDir(from)) {
    if (entry.isDirectory) {
      await copyTree(new URL(`${entry.name}/`, from), `${to}/${entry.name}`, keep);
    } else if (entry.isFile && keep(entry.name)) {
      await Deno.copyFile(new URL(entry.name, from), `${to}/${entry.name}`);
    }
  }
}

/**
 * The record a step's notebook reads: the file it pins with useRecord, if its notebook pins one.
 */
async function notebookRecord(step: KernelSpec): Promise<string | undefined> {
  const url = new URL(`notebooks/${step.id}.ipynb`, ROOT);
  const text = await Deno.readTextFile(url).catch(() => undefined);
  if (text === undefined) return undefined;
  return notebookModule(text, url).match(/useRecord\("([^"]+)"\)/)?.[1];
}

/**
 * Which recorded run each page shows, as its notebook chooses it: the record the notebook pins,
 * else the newest GPU-host record covering its step; the ladder page, the whole ladder's record.
 */
async function recordedRuns(out: string) {
  const runs: Record<string, string> = {};
  const copy = async (found: { path: string } | undefined) => {
    if (!found) return undefined;
    const name = found.path.replace(/^.*\//, "");
    await Deno.mkdir(`${out}/data/runs`, { recursive: true });
    await Deno.copyFile(found.path, `${out}/data/runs/${name}`);
    return `data/runs/${name}`;
  };
  const ladder = await copy(await recordedGpuRun());
  try {
    for (const step of SITE_STEPS) {
      await useRecord(await notebookRecord(step));
      const path = await copy(await recordedGpuRun([step.name]));
      if (path) runs[step.name] = path;
    }
  } finally {
    await useRecord();
  }
  return { ladder, steps: runs };
}

/** The runner's mount point and its script; the bundle fills it in. */
function runnerBlock(attrs: string): string {
  return `${MARK}\n<link rel="stylesheet" href="assets/live.css">\n` +
    `<section id="gemm-live" ${attrs}><noscript>The live runner needs JavaScript.</noscript>` +
    `</section>\n<script type="module" src="assets/ladder.js"></script>\n`;
}

const LADDER: SitePage = { file: "ladder.html", title: "The whole ladder on your GPU" };

/**
 * A rendered page as a web server can serve it: Debian's nbconvert points its scripts
 * at file:///usr/share/javascript/, which a page over HTTP may not load. require.js is copied
 * into the site; MathJax (54 MB) is left out, as the notebooks have no TeX to typeset.
 */
async function servable(html: string, out: string): Promise<string> {
  const require = "file:///usr/share/javascript/requirejs/require.min.js";
  if (html.includes(require)) {
    await Deno.copyFile(new URL(require), `${out}/assets/require.min.js`);
    html = html.replaceAll(require, "assets/require.min.js");
  }
  html = html.replace(
    /<script[^>]*src="file:\/\/\/usr\/share\/javascript\/mathjax\/[^"]*">\s*<\/script>/g,
    "",
  )
    .replace(/<script type="text\/x-mathjax-config">[\s\S]*?<\/script>/g, "");
  // No favicon in the site: say so, or the browser asks for /favicon.ico and logs the 404.
  if (!html.includes('rel="icon"')) {
    html = html.replace("</head>", '<link rel="icon" href="data:,">\n</head>');
  }
  const left = /(?:src|href)="file:[^"]*"/.exec(html);
  if (left) throw new Error(`a rendered page still loads ${left[0]}, which a served page cannot`);
  return html;
}

const stepTitle = (step: KernelSpec) => `${step.id}: ${step.title}`;

/** The notebook pages that render_notebooks.ts wrote into `out`, in story order; none if none. */
async function notebookPages(out: string): Promise<SitePage[]> {
  try {
    return JSON.parse(await Deno.readTextFile(`${out}/${NOTEBOOK_PAGES}`));
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return [];
    throw e;
  }
}

/** Every page but the index in story order: a step without a notebook at its number. */
function storyOrder(notebooks: SitePage[]): SitePage[] {
  const have = new Set(notebooks.map((p) => p.file));
  const steps = SITE_STEPS.filter((s) => !have.has(`${s.id}.html`))
    .map((s) => ({ file: `${s.id}.html`, title: stepTitle(s) }));
  const byFile = (a: SitePage, b: SitePage) => a.file < b.file ? -1 : a.file > b.file ? 1 : 0;
  return [...[...notebooks, ...steps].sort(byFile), LADDER];
}

/** Add the runner to a rendered notebook page, or write a page for the step alone. */
async function stepPage(out: string, step: KernelSpec): Promise<void> {
  const file = `${out}/${step.id}.html`;
  const block = runnerBlock(`data-step="${step.name}"`);
  let html: string | undefined;
  try {
    html = await Deno.readTextFile(file);
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  if (html?.includes(MARK)) {
    html = html.slice(0, html.indexOf(MARK)) + html.slice(html.indexOf("</body>"));
  }
  html = html?.includes("</body>") ? html.replace("</body>", `${block}</body>`) : standalonePage(
    stepTitle(step),
    `<h1>${escapeHtml(stepTitle(step))}</h1>\n${block}`,
  );
  await Deno.writeTextFile(file, html);
}

/** Say on the index that the pages run on the reader's GPU (the notebooks' index when it exists). */
async function indexPage(out: string, notebooks: SitePage[]): Promise<void> {
  const file = `${out}/index.html`;
  let html: string | undefined;
  try {
    html = await Deno.readTextFile(file);
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  const rendered = new Set(notebooks.map((p) => p.file));
  const alone = SITE_STEPS.filter((s) => !rendered.has(`${s.id}.html`)).map((s) =>
    `<li><a href="${s.id}.html">${escapeHtml(stepTitle(s))}</a></li>`
  );
  const live = `${MARK}\n<h2>On your GPU</h2>\n<p>Every step's page ends with a runner that ` +
    `validates and times the step on your GPU, beside the recorded GPU-host run; ` +
    `<a href="${LADDER.file}">the whole ladder on your GPU</a> runs them all, with cuBLAS.</p>\n` +
    (alone.length ? `<ul>${alone.join("\n")}</ul>\n` : "");
  if (html?.includes(MARK)) {
    html = html.slice(0, html.indexOf(MARK)) + html.slice(html.indexOf("</body>"));
  }
  await Deno.writeTextFile(
    file,
    html?.includes("</body>")
      ? html.replace("</body>", `${live}</body>`)
      : standalonePage("gemm-ladder", `<h1>gemm-ladder</h1>\n${live}`),
  );
}

export async function buildSite(out: string): Promise<void> {
  await Deno.mkdir(`${out}/assets`, { recursive: true });
  await Deno.mkdir(`${out}/data`, { recursive: true });
  await bundle(out);
  await Deno.copyFile(new URL("web/live.css", ROOT), `${out}/assets/live.css`);
  await copyTree(new URL("kernels/", ROOT), `${out}/kernels`, (n) => n.endsWith(".wgsl"));
  const runs = await recordedRuns(out);
  const manifest = { commit: await currentCommit(), built: new Date().toISOString(), ...runs };
  await Deno.writeTextFile(`${out}/data/recorded.json`, JSON.stringify(manifest, null, 2) + "\n");
  for await (const entry of Deno.readDir(out)) {
    if (!entry.isFile || !entry.name.endsWith(".html")) continue;
    const file = `${out}/${entry.name}`;
    await Deno.writeTextFile(file, await servable(await Deno.readTextFile(file), out));
  }
  for (const step of SITE_STEPS) await stepPage(out, step);
  await Deno.writeTextFile(
    `${out}/${LADDER.file}`,
    standalonePage(LADDER.title, runnerBlock('data-page="ladder"')),
  );
  const notebooks = await notebookPages(out);
  const order = storyOrder(notebooks);
  for (const [at, { file }] of order.entries()) {
    const path = `${out}/${file}`;
    await Deno.writeTextFile(path, withNav(await Deno.readTextFile(path), order, at));
  }
  await indexPage(out, notebooks);
}

if (import.meta.main) {
  const given = argValue("--out", "site");
  const out = given.startsWith("/") ? given : `${Deno.cwd()}/${given}`;
  await buildSite(out);
  console.log(`site: live pages, bundle, kernels and records in ${out}/`);
}
