/**
 * The site in a browser: the live pages are built (tools/build_site.ts, no notebook execution),
 * served on 127.0.0.1, and opened in headless Chromium on its software adapter (SwiftShader).
 * The naive, tiled and generated steps validate and time there, the whole-ladder page runs, the
 * live chart is drawn, nothing leaves 127.0.0.1 and the console stays clean; the bad cases (no
 * WebGPU, no timestamp-query, a kernel past the adapter's limits or features, a wrong kernel)
 * say so on the page, and a failure never shows a speed.
 *
 * The notebook pages: `deno task site`'s own render command, allowed to start nothing but
 * nbconvert (so no kernel), renders three committed notebooks; the index links them in story
 * order with their titles and ideas, every page links the index and its neighbours, each says
 * where its outputs were executed (a software adapter by name), and in Chromium no text cell
 * takes nbconvert's right alignment, diffs keep their indentation, and every figure shows.
 */
import assert from "node:assert/strict";
import { RECORD_SCHEMA, recordFromJson } from "../lib/record.ts";
import { KERNELS } from "../lib/registry.ts";
import { buildSite } from "../tools/build_site.ts";
import { parseNotebook, serializeNotebook } from "../tools/notebook_json.ts";
import { renderNotebooks } from "../tools/render_notebooks.ts";
import { launchChromium, type Page, serveFolder } from "./browser.ts";
import { assertPngNotBlank } from "./png.ts";

interface Row {
  kernel: string;
  validated: string;
  cells: string[];
}

const ENDED = `["done", "failed", "error", "no-adapter"]
  .includes(document.getElementById("gemm-live")?.dataset.state)`;

/** Open a live page, press run, wait for the end; the state, status line and result rows. */
async function runPage(page: Page, url: string, before = "") {
  await page.open(url);
  await page.waitFor(`document.getElementById("gemm-live")?.dataset.state === "idle"`, 20_000);
  if (before) await page.eval(before);
  await page.eval(`document.querySelector("#gemm-live button.run").click()`);
  await page.waitFor(ENDED, 90_000);
  return await page.eval<{ state: string; status: string; rows: Row[] }>(`({
    state: document.getElementById("gemm-live").dataset.state,
    status: document.querySelector("#gemm-live .status").textContent,
    rows: [...document.querySelectorAll(".gemm-results tbody tr")].map((tr) => ({
      kernel: tr.dataset.kernel,
      validated: tr.dataset.validated,
      cells: [...tr.children].map((td) => td.textContent),
    })),
  })`);
}

/** A file's text once it exists (a download lands a moment after the click). */
async function waitForFile(path: string): Promise<string> {
  for (let i = 0; i < 100; i++) {
    try {
      return await Deno.readTextFile(path);
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`${path} never appeared`);
}

/** Every row validated and timed: a positive GFLOP/s and the GPU timestamp clock. */
function assertTimed(rows: Row[], kernel: string, count: number) {
  assert.equal(rows.length, count, `${kernel}: ${JSON.stringify(rows)}`);
  for (const r of rows) {
    assert.equal(r.kernel, kernel);
    assert.equal(r.validated, "true", `${kernel} failed: ${r.cells.join(" | ")}`);
    assert.match(r.cells[3], /^validated \(rel\. error/);
    assert.ok(Number(r.cells[5].replace(/,/g, "")) > 0, `${kernel}: no GFLOP/s`);
    assert.equal(r.cells[6], "timestamp-query");
  }
}

/** A failed row: its kind and reason shown, no time and no GFLOP/s. */
function assertFailedRow(r: Row, kind: string, reason: RegExp) {
  assert.equal(r.validated, "false");
  assert.equal(r.cells[3], "FAILED");
  assert.equal(r.cells[4], "", "a failure shows no time");
  assert.equal(r.cells[5], "", "a failure shows no GFLOP/s");
  assert.ok(r.cells[6].startsWith(`${kind}: `), r.cells[6]);
  assert.match(r.cells[6], reason);
}

Deno.test("site: live pages validate and time kernels in headless Chromium (SwiftShader)", async () => {
  const out = await Deno.makeTempDir({ prefix: "gemm-site-" });
  await buildSite(out);
  const server = serveFolder(out);
  const chromium = await launchChromium();
  const { page } = chromium;
  const problems: string[] = [];
  const offsite: string[] = [];
  page.on((method, p) => {
    const text = JSON.stringify(p).slice(0, 400);
    if (method === "Runtime.exceptionThrown") problems.push(`exception: ${text}`);
    if (method === "Runtime.consoleAPICalled" && (p.type === "error" || p.type === "warning")) {
      problems.push(`console.${p.type}: ${text}`);
    }
    if (method === "Log.entryAdded") {
      const entry = p.entry as { level: string; text: string; url?: string };
      if (entry.level === "error") problems.push(`log: ${entry.text} ${entry.url ?? ""}`);
    }
    if (method === "Network.requestWillBeSent") {
      const url = (p.request as { url: string }).url;
      if (!/^(data|blob):/.test(url) && !url.startsWith(server.url)) offsite.push(url);
    }
  });
  try {
    // With no notebook rendered, the step pages and the ladder still link their neighbours.
    const ladderNav = navLinks(await Deno.readTextFile(`${out}/ladder.html`));
    const lastStep = KERNELS.filter((k) => !k.demo).at(-1)!.id;
    assert.deepEqual(ladderNav, Array(2).fill({ prev: `${lastStep}.html`, next: undefined }));

    for (const domain of ["Runtime", "Log", "Page", "Network"]) await page.send(`${domain}.enable`);

    const naive = await runPage(page, `${server.url}/02_naive.html?sizes=64`);
    assert.equal(naive.state, "done", naive.status);
    assertTimed(naive.rows, "02_naive", 1);
    assert.match(naive.status, /swiftshader \(software adapter\); timed with GPU timestamps/);

    const tiled = await runPage(page, `${server.url}/04_tiled.html?sizes=64,128`);
    assert.equal(tiled.state, "done", tiled.status);
    assertTimed(tiled.rows, "04_tiled", 2);
    // The live chart: the recorded GPU-host run and the reader's, on one roofline.
    const legend = await page.eval<string>(
      `document.querySelector("#gemm-live .chart svg")?.textContent ?? ""`,
    );
    assert.match(legend, /NVIDIA H200/);
    assert.match(legend, /swiftshader \(software\)/);
    const box = await page.eval<{ x: number; y: number; width: number; height: number }>(
      `(() => { const r = document.querySelector("#gemm-live .chart svg").getBoundingClientRect();
        return { x: r.x + scrollX, y: r.y + scrollY, width: r.width, height: r.height }; })()`,
    );
    const { data } = await page.send<{ data: string }>("Page.captureScreenshot", {
      format: "png",
      clip: { ...box, scale: 1 },
      captureBeyondViewport: true,
    });
    await assertPngNotBlank(Uint8Array.from(atob(data), (c) => c.charCodeAt(0)), 300);
    await assertPngNotBlank(await page.screenshot(), 300);

    // Without timestamp-query the page says so and times with wall-clock batches.
    const wallClock = await runPage(page, `${server.url}/04_tiled.html?sizes=64&notimestamps`);
    assert.equal(wallClock.state, "done", wallClock.status);
    assert.match(wallClock.status, /no timestamp-query on this adapter/);
    assert.equal(wallClock.rows[0].validated, "true");
    assert.equal(wallClock.rows[0].cells[6], "wall-clock-batch");

    // 05's defaults need 512 invocations; SwiftShader offers WebGPU's default 256: the page runs
    // the nearest parameters that fit and says so in the row.
    const blocktile = await runPage(page, `${server.url}/05_blocktile_1d.html?sizes=64`);
    assert.equal(blocktile.state, "done", blocktile.status);
    assertTimed(blocktile.rows, "05_blocktile_1d", 1);
    assert.match(
      blocktile.rows[0].cells[2],
      /exceeds maxComputeInvocationsPerWorkgroup \(256\); ran /,
    );

    const generated = await runPage(page, `${server.url}/12_generated.html?sizes=64`);
    assert.equal(generated.state, "done", generated.status);
    assertTimed(generated.rows, "12_generated", 1);

    // Step 13 picks its plan in the browser too (no tuning file there: the model's pick).
    const shapes = await runPage(page, `${server.url}/13_shapes.html?sizes=64`);
    assert.equal(shapes.state, "done", shapes.status);
    assertTimed(shapes.rows, "13_shapes", 1);
    // At 256 the model splits K: the split-K kernel compiles in Tint (its loop bound uniform).
    const split = await runPage(page, `${server.url}/13_shapes.html?sizes=256`);
    assert.equal(split.state, "done", split.status);
    assertTimed(split.rows, "13_shapes", 1);

    const ladder = await runPage(
      page,
      `${server.url}/ladder.html?kernels=naive,tiled,generated,f16&sizes=64`,
    );
    assert.equal(ladder.state, "failed", ladder.status);
    assert.deepEqual(ladder.rows.map((r) => r.validated), ["true", "true", "true", "false"]);
    assertFailedRow(ladder.rows[3], "feature", /shader-f16/);
    const charts = await page.eval<number>(`document.querySelectorAll("#gemm-live svg").length`);
    assert.ok(charts >= 3, `${charts} charts on the ladder page`);
    // Each chart's menu saves it as SVG or PNG (vega-embed, nothing fetched).
    const actions = await page.eval<string[]>(
      `[...document.querySelectorAll("#gemm-live .vega-actions a")].map((a) => a.textContent)`,
    );
    assert.ok(actions.includes("Save as SVG") && actions.includes("Save as PNG"), `${actions}`);
    // The reader's numbers download as a run record the library reads back.
    const downloads = `${out}/downloads`;
    await page.send("Page.setDownloadBehavior", { behavior: "allow", downloadPath: downloads });
    await page.eval(`document.querySelector("#gemm-live button.download").click()`);
    const record = recordFromJson(await waitForFile(`${downloads}/ladder-browser.json`));
    assert.equal(record.schema, RECORD_SCHEMA);
    assert.match(record.device.description, /swiftshader/);
    assert.deepEqual(record.results.map((r) => [r.kernel, r.validated]), [
      ["02_naive", true],
      ["04_tiled", true],
      ["12_generated", true],
      ["14_f16", false],
    ]);
    assert.ok(record.results.slice(0, 3).every((r) => r.gflops! > 0 && r.m === 64));
    assert.equal(record.results[3].gflops, undefined);

    // A tile too big for the adapter's workgroup limit (SwiftShader: 256 invocations).
    const big = await runPage(
      page,
      `${server.url}/04_tiled.html?sizes=64`,
      `(() => { const s = document.querySelector("select[name=TILE]"); s.value = "32"; })()`,
    );
    assert.equal(big.state, "failed");
    assertFailedRow(big.rows[0], "limit", /maxComputeInvocationsPerWorkgroup/);

    const wrong = await runPage(page, `${server.url}/02_naive.html?sizes=64&wrong`);
    assert.equal(wrong.state, "failed");
    assertFailedRow(wrong.rows[0], "wrong-result", /error [0-9.e+]+x its bound/);

    await page.open(`${server.url}/04_tiled.html?nowebgpu`);
    await page.waitFor(`document.getElementById("gemm-live")?.dataset.state`, 20_000);
    const none = await page.eval<{ state: string; status: string; disabled: boolean }>(`({
      state: document.getElementById("gemm-live").dataset.state,
      status: document.querySelector("#gemm-live .status").textContent,
      disabled: document.querySelector("#gemm-live button.run").disabled,
    })`);
    assert.equal(none.state, "no-webgpu");
    assert.match(none.status, /This browser has no WebGPU/);
    assert.ok(none.disabled);

    assert.deepEqual(problems, [], "console errors");
    assert.deepEqual(offsite, [], "requests outside the site");
    assert.ok(server.requests.some((p) => p.startsWith("/kernels/04_tiled/kernel.wgsl")));
  } finally {
    await chromium.stop();
    await server.close();
    await Deno.remove(out, { recursive: true });
  }
});

const ROOT = new URL("../", import.meta.url).pathname;

/** The previous and next pages a page's navigation bars link (top and bottom), each with the index. */
function navLinks(html: string): { prev?: string; next?: string }[] {
  return [...html.matchAll(/<nav class="gemm-nav">([\s\S]*?)<\/nav>/g)].map(([, bar]) => {
    assert.match(bar, /<a class="index" href="index.html">/);
    return {
      prev: /rel="prev" href="([^"]+)"/.exec(bar)?.[1],
      next: /rel="next" href="([^"]+)"/.exec(bar)?.[1],
    };
  });
}

/** A notebook's title and the text of its first markdown cell, markdown marks dropped. */
async function notebookText(name: string) {
  const nb = parseNotebook(await Deno.readTextFile(`${ROOT}notebooks/${name}.ipynb`));
  const first = nb.cells.find((c) => c.cell_type === "markdown")!.source;
  const plain = (s: string) => s.replace(/[`*_]/g, "").replace(/\s+/g, " ").trim();
  return {
    title: plain(first.split("\n")[0].replace(/^#+/, "")),
    opening: plain(first),
    stamp: nb.metadata.gemm_ladder as { executed_on: string; date: string; commit: string },
  };
}

const stripTags = (html: string) =>
  html.replace(/<[^>]+>/g, "").replace(/&quot;/g, '"').replace(/&amp;/g, "&").replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">");

Deno.test("site: the default build renders the committed notebooks, runs no kernel, links every page", async () => {
  // deno task site renders with this command; allowed to run only nbconvert, it can start no
  // kernel, and nothing before it executes the notebooks.
  const tasks = JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`)).tasks;
  assert.doesNotMatch(tasks.site, /task notebooks|execute_notebook/);
  const render = (tasks.site as string).split("&&").map((c) => c.trim().split(/\s+/))
    .find((words) => words.includes("tools/render_notebooks.ts"));
  assert.ok(render, tasks.site);
  assert.deepEqual(render.filter((w) => /^(-A|--allow-all|--allow-run)/.test(w)), [
    "--allow-run=jupyter-nbconvert",
  ]);
  const names = ["00_setup", "04_tiled", "15_summary"];
  const out = await Deno.makeTempDir({ prefix: "gemm-site-notebooks-" });
  const chromium = await launchChromium();
  const server = serveFolder(out);
  try {
    const run = await new Deno.Command(Deno.execPath(), {
      args: [...render.slice(1), "--out", out, ...names.map((n) => `${n}.ipynb`)],
      cwd: ROOT,
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.ok(run.success, new TextDecoder().decode(run.stderr));
    await buildSite(out);

    // The index: every notebook in story order, with its title and its idea in one sentence.
    const index = await Deno.readTextFile(`${out}/index.html`);
    const items = [
      ...index.matchAll(/<li><a href="([^"]+)">(.*?)<\/a>(?:<p class="idea">(.*?)<\/p>)?/g),
    ];
    assert.deepEqual(items.slice(0, names.length).map((m) => m[1]), names.map((n) => `${n}.html`));
    for (const [i, name] of names.entries()) {
      const { title, opening } = await notebookText(name);
      assert.equal(stripTags(items[i][2]), title);
      const idea = stripTags(items[i][3] ?? "");
      assert.ok(idea.length > 0 && opening.includes(idea), `${name}'s idea: "${idea}"`);
    }
    assert.match(index, /<a href="ladder.html">/);

    // Story order: the notebooks, each step without a rendered notebook at its number, the ladder.
    const order = [...Deno.readDirSync(out)].map((e) => e.name)
      .filter((f) => /^\d\d_.*\.html$/.test(f)).sort();
    order.push("ladder.html");
    for (const [i, file] of order.entries()) {
      const links = navLinks(await Deno.readTextFile(`${out}/${file}`));
      assert.deepEqual(links, Array(2).fill({ prev: order[i - 1], next: order[i + 1] }), file);
    }

    // Each notebook page says where its outputs were executed, from its metadata, and names a
    // software adapter as one.
    for (const name of names) {
      const { stamp } = await notebookText(name);
      const html = await Deno.readTextFile(`${out}/${name}.html`);
      const when = `${stamp.date.slice(0, 10)} ${
        stamp.date.slice(11, 16)
      } UTC, commit ${stamp.commit}`;
      const line = stripTags(/<p class="gemm-source[^"]*">(.*?)<\/p>/.exec(html)?.[1] ?? "");
      if (/llvmpipe|lavapipe|swiftshader|software/i.test(stamp.executed_on)) {
        assert.ok(
          line.startsWith(
            `These outputs come from a software adapter, ${stamp.executed_on} (${when})`,
          ),
          line,
        );
      } else {
        assert.equal(line, `Outputs executed on ${stamp.executed_on} (${when}).`);
        assert.doesNotMatch(html, /software adapter, <strong>/);
      }
    }

    // In a browser: the line is at the top, no text takes nbconvert's right alignment, a diff
    // keeps its indentation, every figure shows within the page.
    const { page } = chromium;
    await page.send("Page.enable");
    await page.open(`${server.url}/04_tiled.html`);
    const seen = await page.eval<{
      sourceTop: number;
      inherited: string[];
      diffLines: { align: string; space: string }[];
      figures: { loaded: boolean; right: number }[];
      width: number;
    }>(`(() => {
      const own = (el) => /text-align/.test(el.getAttribute("style") ?? "");
      return {
        sourceTop: document.querySelector(".gemm-source").getBoundingClientRect().top,
        inherited: [...document.querySelectorAll(".jp-OutputArea-output td")]
          .filter((td) => getComputedStyle(td).textAlign === "right" && !own(td))
          .map((td) => td.textContent),
        diffLines: [...document.querySelectorAll(".jp-OutputArea-output pre > span")]
          .filter((line) => /^ *\\d* +\\d* [-+] /.test(line.textContent))
          .map((line) => {
            const pre = getComputedStyle(line.parentElement);
            return { align: pre.textAlign, space: pre.whiteSpace };
          }),
        figures: [...document.querySelectorAll(".jp-OutputArea-output img")].map((img) => ({
          loaded: img.complete && img.naturalWidth > 0,
          right: img.getBoundingClientRect().right,
        })),
        width: document.documentElement.clientWidth,
      };
    })()`);
    assert.ok(seen.sourceTop < 200, `the source line starts ${seen.sourceTop} px down`);
    assert.deepEqual(seen.inherited, [], "cells right-aligned by nbconvert's style");
    // The diff's changed lines, in a <pre> that keeps their indentation (pre or pre-wrap),
    // left-aligned (left, or start in a left-to-right page).
    assert.ok(seen.diffLines.length > 10, `${seen.diffLines.length} diff lines`);
    for (const line of seen.diffLines) {
      assert.ok(["left", "start"].includes(line.align), JSON.stringify(line));
      assert.ok(["pre", "pre-wrap"].includes(line.space), JSON.stringify(line));
    }
    assert.ok(seen.figures.length >= 2, `${seen.figures.length} figures`);
    for (const f of seen.figures) assert.ok(f.loaded && f.right <= seen.width, JSON.stringify(f));
  } finally {
    await chromium.stop();
    await server.close();
    await Deno.remove(out, { recursive: true });
  }
});

Deno.test("site: a page executed on a software adapter names it", async () => {
  const tasks = JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`)).tasks;
  assert.match(
    tasks["site-execute"],
    /task notebooks && .*render_notebooks\.ts --from site\/executed/,
  );
  // What `deno task notebooks` leaves in site/executed: the adapter and date, no commit.
  const from = await Deno.makeTempDir({ prefix: "gemm-site-executed-" });
  const out = `${from}/site`;
  try {
    const nb = parseNotebook(await Deno.readTextFile(`${ROOT}notebooks/00_setup.ipynb`));
    nb.metadata.gemm_ladder = {
      executed_on: "llvmpipe (LLVM 19.1.7, 256 bits)",
      date: "2026-11-26T08:00:00Z",
    };
    await Deno.writeTextFile(`${from}/00_setup.ipynb`, serializeNotebook(nb));
    await renderNotebooks(["00_setup.ipynb"], from, out);
    const line = /<p class="gemm-source software">(.*?)<\/p>/.exec(
      await Deno.readTextFile(`${out}/00_setup.html`),
    )?.[1];
    assert.ok(line, "no software-adapter line");
    assert.match(
      stripTags(line),
      /^These outputs come from a software adapter, llvmpipe \(LLVM 19\.1\.7, 256 bits\) \(2026-11-26 08:00 UTC, no commit recorded\)/,
    );
  } finally {
    await Deno.remove(from, { recursive: true });
  }
});
