/**
 * Screenshots of a notebook's "what changed" diff and its concept figure, as a reader meets them:
 * in JupyterLab with the notebook untrusted (a fresh Jupyter data folder holds no signature for
 * it), and on the built site. Needs a `jupyter` with JupyterLab on PATH (or JUPYTER=path) and
 * Debian's chromium; the site must be built first (`deno task site`).
 *
 *   deno run -A lab/screenshots/shoot.ts OUT_DIR 04_tiled 12_generated
 *
 * Writes OUT_DIR/<notebook>-{jupyterlab,site}-{diff,concept}.png and prints, per viewer, the
 * computed text-align of the diff's code and the concept figure's element, image type (an
 * untrusted JupyterLab shows the PNG, never the SVG) and whether it loaded.
 */
import { launchChromium, type Page, serveFolder } from "../../tests/browser.ts";

const [outDir, ...notebooks] = Deno.args;
if (!outDir || notebooks.length === 0) {
  console.error("usage: shoot.ts OUT_DIR NOTEBOOK...");
  Deno.exit(2);
}
await Deno.mkdir(outDir, { recursive: true });
const root = new URL("../..", import.meta.url).pathname;

/** Scroll the element `selector` (the first whose text matches `text`) to the top; clip a shot. */
async function shootElement(page: Page, find: string, path: string): Promise<void> {
  const box = await page.waitFor<{ x: number; y: number; w: number; h: number } | null>(
    `(() => { const el = ${find}; if (!el) return null; (el.closest(".jp-Cell") ?? el).scrollIntoView({ block: "start" });
      const r = el.getBoundingClientRect();
      if (r.height === 0) return null; // not laid out yet (JupyterLab renders cells lazily)
      return { x: r.x, y: r.y + window.scrollY, w: r.width, h: Math.min(r.height, 700) }; })()`,
    60_000,
  );
  await new Promise((r) => setTimeout(r, 1500));
  const { data } = await page.send<{ data: string }>("Page.captureScreenshot", {
    format: "png",
    captureBeyondViewport: false,
    clip: { x: 0, y: Math.max(0, box!.y - 40), width: 1200, height: box!.h + 80, scale: 1 },
  });
  await Deno.writeFile(path, Uint8Array.from(atob(data), (c) => c.charCodeAt(0)));
}

// What the checks read: the diff is the first <pre> with numbered "+"/"-" lines outside a folded
// <details> (the whole diff is folded below it); the concept figure the first image in an output.
// (JupyterLab keeps the notebooks opened before in hidden tabs.)
const SHOWN = `(e) => !e.closest("details:not([open]), .lm-mod-hidden")`;
const DIFF = `[...document.querySelectorAll("pre")].filter(${SHOWN})
  .find((p) => /^ *\\d* +\\d+ [+-] /m.test(p.textContent ?? ""))`;
const FIGURE = `[...document.querySelectorAll(".jp-OutputArea-output img, .output img, main img")]
  .find(${SHOWN})`;
const facts = `(() => { const d = ${DIFF}; const f = ${FIGURE};
  return { diffAlign: d ? getComputedStyle(d).textAlign : "no diff",
    figure: f ? f.tagName + " " + f.src.slice(5, f.src.indexOf(";")) + " " +
      (f.complete && f.naturalWidth > 0 ? "loaded" : "not loaded") + " " + f.naturalWidth + "x" +
      f.naturalHeight : "no figure" }; })()`;

/** JupyterLab on a free port with a fresh data folder: where its notebooks open, and a stop. */
async function jupyterLab(): Promise<{ url: string; stop: () => Promise<void> }> {
  const data = await Deno.makeTempDir({ prefix: "gemm-jupyter-data-" });
  // The notebooks name Deno's kernel: without its spec JupyterLab would ask for one in a dialog.
  await Deno.mkdir(`${data}/kernels/deno`, { recursive: true });
  await Deno.writeTextFile(
    `${data}/kernels/deno/kernel.json`,
    JSON.stringify({
      argv: [Deno.execPath(), "jupyter", "--kernel", "--conn", "{connection_file}"],
      display_name: "Deno",
      language: "typescript",
    }),
  );
  const port = 18000 + Math.floor(Math.random() * 1000);
  const server = new Deno.Command(Deno.env.get("JUPYTER") ?? "jupyter", {
    args: [
      "lab",
      "--no-browser",
      `--port=${port}`,
      "--ServerApp.token=",
      "--ServerApp.password=",
      `--ServerApp.root_dir=${root}`,
      "--LabApp.news_url=",
      "--allow-root",
    ],
    env: { JUPYTER_DATA_DIR: data, JUPYTER_CONFIG_DIR: data, JUPYTER_RUNTIME_DIR: data },
    stdout: "null",
    stderr: "null",
  }).spawn();
  const until = Date.now() + 60_000;
  while (Date.now() < until) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/api`)).ok) break;
    } catch { /* not yet listening */ }
    await new Promise((r) => setTimeout(r, 500));
  }
  // Opening a notebook makes JupyterLab write a checkpoint folder beside it; the tests read
  // every file under notebooks/, so one that was not there before goes again.
  const checkpoints = `${root}notebooks/.ipynb_checkpoints`;
  const hadCheckpoints = await Deno.stat(checkpoints).then(() => true, () => false);
  return {
    url: `http://127.0.0.1:${port}/lab/tree/notebooks`,
    async stop() {
      server.kill("SIGTERM");
      await server.status;
      await Deno.remove(data, { recursive: true }).catch(() => {});
      if (!hadCheckpoints) await Deno.remove(checkpoints, { recursive: true }).catch(() => {});
    },
  };
}

const { page, stop } = await launchChromium();
await page.send("Page.enable");
await page.send("Emulation.setDeviceMetricsOverride", {
  width: 1200,
  height: 900,
  deviceScaleFactor: 1,
  mobile: false,
});
const lab = await jupyterLab();
const site = serveFolder(`${root}site`);
try {
  for (const nb of notebooks) {
    const places = [
      ["jupyterlab", `${lab.url}/${nb}.ipynb`],
      ["site", `${site.url}/${nb}.html`],
    ];
    for (const [viewer, url] of places) {
      await page.open(url);
      if (viewer === "jupyterlab") {
        await page.waitFor(`document.querySelector(".jp-Notebook .jp-Cell")`, 90_000);
      }
      await shootElement(page, DIFF, `${outDir}/${nb}-${viewer}-diff.png`);
      await shootElement(page, FIGURE, `${outDir}/${nb}-${viewer}-concept.png`);
      console.log(`${nb} ${viewer}: ${JSON.stringify(await page.eval(facts))}`);
    }
  }
} finally {
  await site.close();
  await lab.stop();
  await stop();
}
