/**
 * The layout of the product: every step has its folder and its notebook and every notebook its
 * step; nothing in lib/, kernels/ or notebooks/ reaches into lab/; reader-facing text explains
 * instead of narrating the lab's history.
 */
import assert from "node:assert/strict";
import { KERNELS } from "../lib/registry.ts";

const root = new URL("../", import.meta.url);

async function namesIn(dir: string, keep: (name: string) => boolean): Promise<string[]> {
  const names: string[] = [];
  for await (const e of Deno.readDir(new URL(dir, root))) if (keep(e.name)) names.push(e.name);
  return names.sort();
}

async function filesUnder(dir: string, ext: RegExp): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(new URL(dir, root))) {
    const path = `${dir}${e.name}`;
    if (e.isDirectory) out.push(...await filesUnder(`${path}/`, ext));
    else if (ext.test(e.name)) out.push(path);
  }
  return out;
}

/** The notebooks that belong to no step: the set-up, the CPU and the closing summary. */
const NOT_STEPS = /^(00_setup|01_cpu|\d\d_summary)$/;

Deno.test("layout: every step has a folder and a notebook, every notebook a step", async () => {
  const steps = KERNELS.filter((s) => !s.demo).map((s) => s.id);
  const folders = await namesIn("kernels/", (n) => /^\d\d_/.test(n));
  for (const id of steps) assert.ok(folders.includes(id), `step ${id} has no kernels/${id}/`);
  for (const f of folders) assert.ok(steps.includes(f), `kernels/${f}/ is not in lib/registry.ts`);
  const notebooks = (await namesIn("notebooks/", (n) => n.endsWith(".ipynb")))
    .map((n) => n.slice(0, -".ipynb".length));
  for (const id of steps) {
    assert.ok(notebooks.includes(id), `step ${id} has no notebooks/${id}.ipynb`);
  }
  for (const nb of notebooks) {
    assert.ok(NOT_STEPS.test(nb) || steps.includes(nb), `notebooks/${nb}.ipynb has no step`);
  }
  for (const name of ["00_setup", "01_cpu"]) assert.ok(notebooks.includes(name), `no ${name}`);
  const summary = notebooks.filter((n) => /_summary$/.test(n));
  assert.equal(summary.length, 1, "one summary notebook");
  assert.equal(summary[0], notebooks.at(-1), "the summary comes last");
});

Deno.test("layout: lib/, kernels/ and notebooks/ do not depend on lab/", async () => {
  const files = [
    ...await filesUnder("lib/", /\.ts$/),
    ...await filesUnder("kernels/", /\.(ts|wgsl)$/),
    ...await filesUnder("notebooks/", /\.ipynb$/),
  ];
  const offenders = [];
  for (const file of files) {
    const raw = await Deno.readTextFile(new URL(file, root));
    // A notebook's code is its code cells; its Sources cell may cite the lab's files.
    const text = file.endsWith(".ipynb")
      ? (JSON.parse(raw).cells as { cell_type: string; source: string[] }[])
        .filter((c) => c.cell_type === "code").map((c) => c.source.join("")).join("\n")
      : raw;
    if (/from\s+["'][./]*lab\/|import\(["'][./]*lab\/|["'`]lab\//.test(text)) offenders.push(file);
  }
  assert.deepEqual(offenders, [], `these reach into lab/: ${offenders.join(", ")}`);
});

/** Lab history in reader-facing text: rounds, probe runs, run numbers, hash-named sources. */
const DIARY = /\bround [0-9]|probe run|\brun [0-9]+\b|[0-9a-f]{16}\.txt/i;

Deno.test("reader-facing text says what and why, not the lab's history", async () => {
  const files = [
    "README.md",
    ...await filesUnder("notebooks/", /\.ipynb$/),
    ...await filesUnder("kernels/", /\.(ts|wgsl|md)$/),
  ];
  const offenders: string[] = [];
  for (const file of files) {
    const lines = (await Deno.readTextFile(new URL(file, root))).split("\n");
    lines.forEach((line, i) => {
      const hit = DIARY.exec(line);
      if (hit) offenders.push(`${file}:${i + 1}: "${hit[0]}"`);
    });
  }
  assert.deepEqual(offenders, [], `lab history in reader-facing text:\n${offenders.join("\n")}`);
});
