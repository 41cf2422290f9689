/**
 * The site in a browser: the live pages are built (tools/build_site.ts, no notebook execution),
 * served on 127.0.0.1, and opened in headless Chromium on its software adapter (SwiftShader).
 * The naive, tiled and generated steps validate and time there, the whole-ladder page runs, the
 * live chart is drawn, nothing leaves 127.0.0.1 and the console stays clean; the bad cases (no
 * WebGPU, no timestamp-query, a kernel past the adapter's limits or features, a wrong kernel)
 * say so on the page, and a failure never shows a speed.
 */
import assert from "node:assert/strict";
import { RECORD_SCHEMA, recordFromJson } from "../lib/record.ts";
import { buildSite } from "../tools/build_site.ts";
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
