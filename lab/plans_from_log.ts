/**
 * A plan search's record rebuilt from its bench log, for a search the time limit stopped before it
 * saved its record (searches since 5786246 also keep their trials in <step>.partial.json). Each search line of the log,
 * `  shapes MxKxN {params}: G GFLOP/s`, is one validated plan's median (a failed plan's line says
 * "failed"), so the trials are those lines: GFLOP/s as printed (rounded to 1), the median time
 * recomputed as 2·M·K·N / GFLOP/s. The log does not hold the device's summary or its SM count:
 * they come from an earlier search record of the same device. What the run did not reach (the
 * confirming second pass, later shapes) is missing, and the record's notes say so.
 *
 *   deno run --allow-read --allow-write=lab/runs lab/plans_from_log.ts LOG OUT DEVICE_RECORD COMMIT DATE
 */
import type { Shape } from "../lib/matrix.ts";
import type { Params } from "../lib/steps/spec.ts";

interface Trial {
  params: Params;
  shape: Shape;
  validated: true;
  gflops: number;
  medianMs: number;
}

/** The validated trials of a bench log's search lines, in the log's order. */
export function trialsFromLog(log: string): Trial[] {
  const trials: Trial[] = [];
  for (const line of log.split("\n")) {
    const m = line.match(/^ {2}shapes (\d+)x(\d+)x(\d+) (\{.*\}): (\d+) GFLOP\/s$/);
    if (!m) continue;
    const shape = { m: +m[1], k: +m[2], n: +m[3] };
    const gflops = +m[5];
    const medianMs = (2 * shape.m * shape.k * shape.n) / gflops / 1e6;
    trials.push({ params: JSON.parse(m[4]), shape, validated: true, gflops, medianMs });
  }
  return trials;
}

if (import.meta.main) {
  const [logPath, outPath, devicePath, commit, date] = Deno.args;
  if (!date) throw new Error("usage: plans_from_log.ts LOG OUT DEVICE_RECORD COMMIT DATE");
  const trials = trialsFromLog(await Deno.readTextFile(logPath));
  const key = (s: Shape) => `${s.m}x${s.k}x${s.n}`;
  const shapes = [...new Map(trials.map((t) => [key(t.shape), t.shape])).values()];
  const perShape = shapes.map((shape) => {
    const best = trials.filter((t) => key(t.shape) === key(shape))
      .reduce((a, t) => t.gflops > a.gflops ? t : a);
    return { shape, params: best.params, gflops: best.gflops };
  });
  const reference = JSON.parse(await Deno.readTextFile(devicePath));
  const record = {
    schema: 1,
    device: reference.device,
    date,
    commit,
    shape: shapes[0],
    shapes,
    kernel: "13_shapes",
    trials,
    best: perShape[0].params,
    perShape,
    sms: reference.sms,
    notes: [
      `rebuilt from the bench log's search lines (${logPath}) by lab/plans_from_log.ts: the run ` +
      `hit its time limit during its ${shapes.length}th shape, before the confirming second ` +
      "pass and before it saved; each line is one validated plan's median (GFLOP/s as printed, " +
      "rounded to 1; medianMs recomputed from it)",
    ],
  };
  await Deno.writeTextFile(outPath, JSON.stringify(record, null, 1) + "\n");
  console.log(`${trials.length} trials at ${shapes.length} shapes: ${outPath}`);
}
