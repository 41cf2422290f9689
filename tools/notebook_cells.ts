/**
 * Notebook code cells as TypeScript modules, so `deno check` can type-check what readers run.
 * Each notebook becomes one module: its code cells in order (cells share one scope in the
 * kernel, as they do in a module), relative imports rewritten for the module's location.
 *
 *   deno run --allow-read --allow-write tools/notebook_cells.ts OUT_DIR [NOTEBOOK...]
 *   deno check --config deno.json OUT_DIR/*.ts
 */

interface NotebookJson {
  cells: { cell_type: string; source: string | string[] }[];
}

const RELATIVE_IMPORT = /(\bfrom\s+|\bimport\s*\(\s*|\bimport\s+)(["'])(\.{1,2}\/[^"']+)\2/g;

/** The code cells of a notebook as one module; relative imports are made absolute. */
export function notebookModule(notebookJson: string, notebookUrl: URL): string {
  const nb = JSON.parse(notebookJson) as NotebookJson;
  const name = notebookUrl.pathname.split("/").at(-1);
  const parts = [`// Code cells of ${name}, extracted for type-checking. Do not edit.`];
  nb.cells.forEach((cell, index) => {
    if (cell.cell_type !== "code") return;
    const source = Array.isArray(cell.source) ? cell.source.join("") : cell.source;
    const code = source.replace(
      RELATIVE_IMPORT,
      (_m, lead: string, quote: string, spec: string) =>
        `${lead}${quote}${new URL(spec, notebookUrl).href}${quote}`,
    );
    parts.push(`// --- cell ${index} ---`, code);
  });
  // A module with no import or export would be a script; force module scope.
  parts.push("export {};");
  return parts.join("\n") + "\n";
}

/** Write one module per notebook into `outDir`; returns the files written. */
export async function extractNotebooks(notebooks: string[], outDir: string): Promise<string[]> {
  await Deno.mkdir(outDir, { recursive: true });
  const written: string[] = [];
  for (const path of notebooks) {
    const url = new URL(path, `file://${Deno.cwd()}/`);
    const stem = url.pathname.split("/").at(-1)!.replace(/\.ipynb$/, "");
    const out = `${outDir.replace(/\/$/, "")}/${stem}.ts`;
    await Deno.writeTextFile(out, notebookModule(await Deno.readTextFile(url), url));
    written.push(out);
  }
  return written;
}

/** Every notebook in notebooks/, sorted. */
export async function listNotebooks(dir = new URL("../notebooks/", import.meta.url)) {
  const found: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    if (entry.isFile && entry.name.endsWith(".ipynb")) {
      found.push(new URL(entry.name, dir).pathname);
    }
  }
  return found.sort();
}

if (import.meta.main) {
  const [outDir, ...paths] = Deno.args;
  if (!outDir) {
    console.error("usage: notebook_cells.ts OUT_DIR [NOTEBOOK...]");
    Deno.exit(2);
  }
  const files = await extractNotebooks(paths.length ? paths : await listNotebooks(), outDir);
  console.log(files.join("\n"));
}
