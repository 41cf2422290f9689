/**
 * cuBLAS re-timed at a committed record's held-out shapes and its suite companion's suite shapes,
 * with the peer's current
 * timer (lab: not part of the product). Until lib/peers/cublas.ts queued its calls behind a head
 * start, each call's events could also hold the host's launch where that outlasted the kernel;
 * our kernels' times never did. This runs cuBLAS alone (validated, then timed) at every shape the
 * record compared with it, and writes both timings side by side, so the bars can be read on equal
 * footing (lib/notebook/lessons/shapes.ts showCublasRetimed):
 *
 *   deno run -A lab/cublas/retime.ts --record data/runs/HELDOUT.json --suite data/runs/SUITE.json \
 *     --device NAME --out FILE
 */
import { heldoutOf } from "../../lib/heldout.ts";
import { openCublas } from "../../lib/peers/cublas.ts";
import { type Shape, shapeLabel } from "../../lib/matrix.ts";
import { SHAPE_SUITE } from "../../lib/suite.ts";
import { currentCommit, type PeerResult, type RunRecord } from "../../lib/record.ts";
import { requiredFlag } from "../flags.ts";

const arg = (name: string) =>
  requiredFlag(name, "usage: retime.ts --record RECORD.json --device NAME --out FILE");
const recordPath = arg("--record"), suitePath = arg("--suite");
const device = arg("--device"), out = arg("--out");
const record: RunRecord = JSON.parse(await Deno.readTextFile(recordPath));
const suiteRecord: RunRecord = JSON.parse(await Deno.readTextFile(suitePath));
const section = heldoutOf(record);
if (!section) throw new Error(`${recordPath} has no held-out section`);

const cublas = openCublas();
if (typeof cublas === "string") throw new Error(cublas);
const recorded = [...section.peers, ...suiteRecord.peers].filter((p) => p.peer === "cublas");
const sets: { set: "suite" | "heldout"; shape: Shape }[] = [
  ...SHAPE_SUITE.map((shape) => ({ set: "suite" as const, shape })),
  ...section.shapes.map(({ m, k, n }) => ({ set: "heldout" as const, shape: { m, k, n } })),
];

/** One shape: cuBLAS as the record timed it and as the peer times it now. */
interface Retimed {
  set: "suite" | "heldout";
  shape: Shape;
  recorded?: Pick<PeerResult, "gflops" | "medianMs" | "timer" | "validated">;
  queued: PeerResult;
}
const rows: Retimed[] = [];
const result = {
  schema: 1,
  device,
  date: new Date().toISOString(),
  commit: await currentCommit(),
  record: recordPath.replace(/^.*\//, ""),
  suiteRecord: suitePath.replace(/^.*\//, ""),
  recordCommit: record.commit,
  seed: section.seed,
  rows,
};
try {
  for (const { set, shape } of sets) {
    const queued = await cublas.run(shape, { budgetMs: 300 });
    const before = recorded.find((p) => p.m === shape.m && p.k === shape.k && p.n === shape.n);
    rows.push({
      set,
      shape,
      ...(before
        ? {
          recorded: {
            gflops: before.gflops,
            medianMs: before.medianMs,
            timer: before.timer,
            validated: before.validated,
          },
        }
        : {}),
      queued,
    });
    console.error(
      `${shapeLabel(shape)}: recorded ${before?.medianMs?.toFixed(4)} ms, now ${
        queued.medianMs?.toFixed(4)
      } ms (${queued.validated ? queued.timer : queued.error})`,
    );
    await Deno.writeTextFile(out, JSON.stringify(result, null, 1) + "\n");
  }
} finally {
  cublas.close();
}
