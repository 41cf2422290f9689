/**
 * Bring the outputs of notebooks executed on the GPU host (tools/gpu_notebooks.sh) into the
 * committed notebooks, cell by cell (matched by cell id), keeping the committed prose: a
 * markdown cell edited after the run keeps its edit, and a code cell whose source differs from
 * the one that ran is refused, because its outputs would no longer come from its code. The
 * notebook's stamp (device, commit, date) and the kernel's language_info come with the outputs.
 * Every notebook named is written in the form JupyterLab saves (tools/notebook_json.ts).
 *
 *   deno run --allow-read --allow-write=notebooks tools/adopt_outputs.ts EXECUTED_DIR [NB ...]
 *
 * With no NB, every notebook of EXECUTED_DIR. Exit status 1 when a notebook was refused.
 */
import { type Cell, type Notebook, parseNotebook, serializeNotebook } from "./notebook_json.ts";

/** The committed notebook with the executed one's outputs, or why they cannot be adopted. */
export function adoptOutputs(
  committed: Notebook,
  executed: Notebook,
): { notebook: Notebook } | { refused: string } {
  const ran = new Map<string, Cell>();
  for (const cell of executed.cells) ran.set(String(cell.id), cell);
  const cells: Cell[] = [];
  for (const cell of committed.cells) {
    if (cell.cell_type !== "code") {
      cells.push(cell);
      continue;
    }
    const done = ran.get(String(cell.id));
    if (!done) return { refused: `code cell ${cell.id} did not run` };
    if (done.source !== cell.source) {
      return { refused: `code cell ${cell.id} changed after it ran` };
    }
    cells.push({
      ...cell,
      execution_count: done.execution_count,
      metadata: done.metadata,
      outputs: done.outputs,
    });
  }
  return { notebook: { ...committed, metadata: executed.metadata, cells } };
}

if (import.meta.main) {
  const [dir, ...named] = Deno.args;
  if (!dir) {
    console.error("usage: tools/adopt_outputs.ts EXECUTED_DIR [notebooks/NN.ipynb ...]");
    Deno.exit(2);
  }
  const names = named.length
    ? named.map((p) => p.split("/").at(-1)!)
    : [...Deno.readDirSync(dir)].map((e) => e.name).filter((n) => n.endsWith(".ipynb")).sort();
  let refused = 0;
  for (const name of names) {
    const target = `notebooks/${name}`;
    const result = adoptOutputs(
      parseNotebook(await Deno.readTextFile(target)),
      parseNotebook(await Deno.readTextFile(`${dir}/${name}`)),
    );
    if ("refused" in result) {
      console.error(`${name}: refused: ${result.refused}`);
      refused++;
      continue;
    }
    await Deno.writeTextFile(target, serializeNotebook(result.notebook));
    console.log(`${name}: outputs adopted`);
  }
  if (refused) Deno.exit(1);
}
