/**
 * `--heldout N --seed S`: the steps that join the shape suite, and the peers, on N shapes drawn
 * by lib/heldout.ts, kept in the record's `heldout` section apart from the suite, with the bars'
 * figures in a note.
 */
import type { BenchArgs } from "./bench_args.ts";
import { runPeers } from "./bench_peers.ts";
import type { Gpu } from "./gpu.ts";
import {
  heldoutDistribution,
  heldoutRows,
  heldoutShapes,
  heldoutSummary,
  speedsOf,
} from "./heldout.ts";
import { shapeLabel } from "./matrix.ts";
import type { HeldoutSection, KernelResult, PeerResult, RunRecord } from "./record.ts";
import { runKernel } from "./runner.ts";
import type { Resumed } from "./bench_resume.ts";

/** Caps that keep a software adapter's draw to seconds a shape. */
const SOFTWARE_CAPS = { maxBytes: 2 ** 22, maxFlop: 2 ** 26 };

export async function heldoutRun(
  gpu: Gpu,
  args: BenchArgs,
  record: RunRecord,
  log: (line: string) => void,
  recorded: (r: KernelResult | PeerResult) => Promise<void>,
  resumed?: Resumed,
): Promise<void> {
  const { count, seed } = args.heldout!;
  // A software adapter runs thousands of times slower: the same law under small caps.
  const caps = gpu.summary.software ? SOFTWARE_CAPS : {};
  const section: HeldoutSection = {
    distribution: heldoutDistribution(caps),
    seed,
    count,
    shapes: heldoutShapes(count, seed, caps),
    results: [],
    peers: [],
  };
  record.heldout = section;
  const steps = args.kernels.filter((k) => k.suite);
  log(`heldout: ${count} shapes, seed ${seed}: ${steps.map((k) => k.name).join(", ")}`);
  for (const [i, shape] of section.shapes.entries()) {
    for (const spec of steps) {
      log(`[heldout ${i + 1}/${count}] ${spec.id} ${shapeLabel(shape)} (${shape.from})`);
      const r = resumed?.result("heldout", spec.id, shape) ??
        await runKernel(gpu, spec, shape, { reps: args.reps });
      section.results.push(r);
      await recorded(r);
    }
  }
  if (args.peers) {
    await runPeers(gpu, section.shapes, args, record, log, recorded, resumed, "heldout");
  }
  const s = heldoutSummary(speedsOf(heldoutRows(record, section)));
  const f = (x?: number, digits = 3) => x === undefined ? "n/a" : x.toFixed(digits);
  record.notes.push(
    `held-out (seed ${seed}, ${s.count} shapes, ${s.compared} with cuBLAS): best of ours / ` +
      `cuBLAS geometric mean ${f(s.geomean)}; worst at >= 1e8 FLOP ${f(s.large.worst?.ratio)}` +
      (s.large.worst ? ` (${shapeLabel(s.large.worst.shape)})` : "") +
      `; median time gap below 1e8 FLOP ${f(s.small.medianGapUs, 1)} us over ` +
      `${s.small.count} shapes; bars ${
        s.met === undefined ? "not judged" : s.met ? "met" : "missed"
      }`,
  );
}
