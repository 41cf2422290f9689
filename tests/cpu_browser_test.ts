/**
 * The CPU ladder's WebAssembly rungs run in a browser as in Deno: the SIMD kernel and the threaded
 * one, bundled for the browser and checked in headless Chromium on a cross-origin-isolated page
 * (the COOP and COEP headers SharedArrayBuffer needs).
 */
import assert from "node:assert/strict";
import { launchChromium, serveFolder } from "./browser.ts";

const root = new URL("../", import.meta.url).pathname;

Deno.test("cpu ladder in Chromium: WebAssembly SIMD and threads validate", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gemm-cpu-page-" });
  const bundle = async (entry: string, out: string) => {
    const r = await new Deno.Command(Deno.execPath(), {
      args: ["bundle", "--quiet", "--platform", "browser", "--output", `${dir}/${out}`, entry],
      cwd: root,
      stderr: "piped",
    }).output();
    assert.ok(r.success, new TextDecoder().decode(r.stderr));
  };
  await bundle("tests/fixtures/cpu_page.ts", "cpu.js");
  await bundle("lib/cpu_worker.ts", "cpu_worker.js");
  await Deno.writeTextFile(`${dir}/index.html`, '<script type="module" src="cpu.js"></script>');
  const server = serveFolder(dir, {
    "cross-origin-opener-policy": "same-origin",
    "cross-origin-embedder-policy": "require-corp",
  });
  const chromium = await launchChromium();
  const { page } = chromium;
  const problems: string[] = [];
  page.on((method, p) => {
    if (method === "Runtime.exceptionThrown") problems.push(JSON.stringify(p).slice(0, 400));
  });
  try {
    for (const domain of ["Runtime", "Page"]) await page.send(`${domain}.enable`);
    await page.open(`${server.url}/index.html`);
    await page.waitFor("typeof window.cpuCheck === 'function'", 20_000);
    const r = await page.eval<Record<string, boolean>>("cpuCheck()");
    assert.deepEqual(problems, []);
    assert.deepEqual(r, { relaxed: r.relaxed, isolated: true, simd: true, threads: true });
    console.log(`Chromium: relaxed SIMD ${r.relaxed}, threads on a cross-origin-isolated page`);
  } finally {
    await chromium.stop();
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
});
