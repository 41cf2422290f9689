/**
 * The instruction-issue ceiling of each kernel, from its machine code (lab: not part of the
 * product). An SM's four schedulers each issue one warp instruction per clock, and the FP32
 * ceiling (the bench's FMA-only kernel) is what they reach when every instruction is an FFMA. A
 * kernel that issues I instructions per multiply-add can therefore run at most ceiling / I,
 * whatever its memory does; one that runs near that is bound by instruction issue, one far below
 * waits on something.
 *
 * Instructions per multiply-add are counted per tile of K from data/driver/sass/<device>/index.json
 * (lab/driver/sass.ts): the multiply-add loop times its trips, plus the rest of the tile loop, plus
 * the extra trips of the tile-load loops. Trips follow from the kernel's parameters: a tile holds
 * BM x BN x BK multiply-adds (04's kernels: TILE per invocation) shared by the workgroup's
 * invocations, and each load loop fetches its operand's tile (A's BM x BK first, then B's BK x BN)
 * one load per trip.
 *
 *   deno run -A lab/driver/issue_ceiling.ts --sass data/driver/sass/nvidia-h200/index.json \
 *     --ceiling GFLOPS [--run RECORD.json] [--out FILE.json]
 *
 * With a run record, each kernel's GFLOP/s at 4096 x 4096 x 4096 is set beside its ceiling.
 */
import { flag, requiredFlag } from "../flags.ts";

interface Loop {
  instructions: number;
  loads: number;
  loadWidth: number;
}
export interface Kernel {
  label: string;
  kernel: string;
  params: Record<string, number>;
  invocations: number;
  multiplyAddLoop?: { instructions: number; families: Record<string, number> };
  tileLoopOutsideIt?: { instructions: number; innerLoops: Loop[] };
}

/** Instructions issued per multiply-add, or why they cannot be counted from the listing alone. */
export function perMultiplyAdd(k: Kernel): number | string {
  const hot = k.multiplyAddLoop;
  const fma = hot?.families.FFMA ?? 0;
  if (!hot || !fma) return "no FFMA loop (f16 multiply-adds or sums kept in local memory)";
  const tile = k.tileLoopOutsideIt;
  if (!tile) return hot.instructions / fma; // the multiply-add loop is the whole tile (or no tiles)
  const p = k.params;
  const perTile = p.TILE ?? (p.BM * p.BN * p.BK) / k.invocations;
  if (k.params.STEPS) return "three nested loops (the trip counts of STEPS)";
  const trips = perTile / fma;
  const elements = [p.BM * p.BK, p.BK * p.BN];
  if (!Number.isInteger(trips) || tile.innerLoops.length > elements.length) {
    return "loop trips not given by the parameters";
  }
  const loads = tile.innerLoops.reduce((sum, loop, i) => {
    const loopTrips = elements[i] / (k.invocations * loop.loadWidth * loop.loads);
    return sum + loop.instructions * (Math.max(1, Math.ceil(loopTrips)) - 1);
  }, 0);
  return (tile.instructions + loads + trips * hot.instructions) / perTile;
}

if (import.meta.main) {
  const usage =
    "usage: issue_ceiling.ts --sass INDEX.json --ceiling GFLOPS [--run RECORD] [--out FILE]";
  const index = JSON.parse(Deno.readTextFileSync(requiredFlag("--sass", usage)));
  const ceiling = Number(requiredFlag("--ceiling", usage));
  const runFile = flag("--run");
  const outFile = flag("--out");
  // The run's validated rows at 4096 x 4096 x 4096, its knob sweeps' among them, by kernel and
  // parameters: a kernel's row is the one timed with the parameters its code was compiled with.
  const key = (kernel: string, params: unknown) =>
    `${kernel} ${JSON.stringify(Object.entries(params ?? {}).sort())}`;
  const measured = new Map<string, number>();
  if (runFile) {
    const run = JSON.parse(Deno.readTextFileSync(runFile));
    const timed = [
      ...(run.results ?? []),
      ...(run.knobs ?? []).flatMap((k: { points: { result?: unknown }[] }) =>
        k.points.map((p) => p.result).filter(Boolean)
      ),
    ];
    for (const r of timed) {
      if (r.m === 4096 && r.n === 4096 && r.k === 4096 && r.validated) {
        measured.set(key(r.kernel, r.params), r.gflops);
      }
    }
  }

  const rows = (index.kernels as Kernel[]).map((k) => {
    const per = perMultiplyAdd(k);
    const bound = typeof per === "number" ? ceiling / per : undefined;
    const name = k.label;
    const gflops = measured.get(key(k.kernel, k.params));
    return {
      label: name,
      ...(typeof per === "number"
        ? { instructionsPerMultiplyAdd: per, issueCeilingGflops: bound }
        : { notCounted: per }),
      ...(gflops !== undefined ? { gflops, ofCeiling: bound ? gflops / bound : undefined } : {}),
    };
  });
  for (const r of rows) {
    if (!("instructionsPerMultiplyAdd" in r)) continue;
    const of = r.ofCeiling !== undefined
      ? `  ${r.gflops!.toFixed(0).padStart(6)}  ${(100 * r.ofCeiling).toFixed(0)}%`
      : "";
    console.log(
      `${r.label.padEnd(40)} ${r.instructionsPerMultiplyAdd!.toFixed(2).padStart(6)} ${
        r.issueCeilingGflops!.toFixed(0).padStart(6)
      }${of}`,
    );
  }
  if (outFile) {
    Deno.writeTextFileSync(
      outFile,
      JSON.stringify(
        { sass: index.commit, fp32CeilingGflops: ceiling, run: runFile, rows },
        null,
        1,
      ) + "\n",
    );
  }
}
