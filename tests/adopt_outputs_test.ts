import assert from "node:assert/strict";
import { adoptOutputs } from "../tools/adopt_outputs.ts";
import type { Notebook } from "../tools/notebook_json.ts";

const notebook = (prose: string, code: string, outputs: unknown[] = []): Notebook => ({
  cells: [
    { cell_type: "markdown", id: "a", metadata: {}, source: prose },
    {
      cell_type: "code",
      id: "b",
      metadata: { expect: [] },
      source: code,
      execution_count: outputs.length ? 1 : null,
      outputs: outputs as never,
    },
  ],
  metadata: {},
  nbformat: 4,
  nbformat_minor: 5,
});

Deno.test("adopting outputs keeps the committed prose and takes the run's outputs and stamp", () => {
  const ran = notebook("old prose", "1 + 1", [{ output_type: "execute_result", data: {} }]);
  ran.metadata = { gemm_ladder: { commit: "abc1234", executed_on: "GPU", date: "d" } };
  const result = adoptOutputs(notebook("edited prose", "1 + 1"), ran);
  assert.ok("notebook" in result);
  assert.equal(result.notebook.cells[0].source, "edited prose");
  assert.deepEqual(result.notebook.cells[1].outputs, ran.cells[1].outputs);
  assert.deepEqual(result.notebook.metadata, ran.metadata);
});

Deno.test("adopting outputs refuses a code cell changed after it ran, or one that did not run", () => {
  const ran = notebook("prose", "1 + 1", [{ output_type: "execute_result", data: {} }]);
  assert.deepEqual(adoptOutputs(notebook("prose", "1 + 2"), ran), {
    refused: "code cell b changed after it ran",
  });
  const other = { ...ran, cells: [ran.cells[0]] };
  assert.deepEqual(adoptOutputs(notebook("prose", "1 + 1"), other), {
    refused: "code cell b did not run",
  });
});
