/**
 * The bench's searches: tuning before the run (saved, full or quick), the planning step's
 * per-shape plans, and each step's knob (all on lib/search.ts).
 */
import type { BenchArgs } from "./bench_args.ts";
import type { Gpu } from "./gpu.ts";
import { type Shape, shapeLabel } from "./matrix.ts";
import type { KernelResult, RunRecord } from "./record.ts";
import type { KernelSpec } from "./registry.ts";
import { autotune, knobShape, quickTune, searchPlans, sweepKnob } from "./search.ts";
import { defaultShapes, sweepSize } from "./sizes.ts";
import { loadTuning, tuningFor, tuningUrl } from "./tuning.ts";

/**
 * With --tune (every point) or --quick-tune (lib/search.ts quickTune), search the parameter
 * space of every selected kernel that takes device-tuned parameters (at 4096, or the largest
 * square size of the run) and save the winners; otherwise note which saved tuning the run uses
 * (this device's, or the nearest saved device's) and carry that search in the record.
 */
export async function tuning(
  gpu: Gpu,
  args: BenchArgs,
  shapes: Shape[],
  record: RunRecord,
  log: (line: string) => void,
) {
  const tunable = args.kernels.filter((k) => k.space && k.deviceTuned);
  const fileOf = (kernel: string) =>
    tuningUrl(gpu.summary, kernel).pathname.replace(/^.*\/(data\/)/, "$1");
  if (args.tune === "saved") {
    for (const spec of tunable) {
      const saved = tuningFor(gpu.summary, spec.name);
      record.notes.push(
        !saved
          ? `no tuning of ${spec.id} saved for this device (${
            fileOf(spec.name)
          }) or one like it: it runs its defaults`
          : `tuned parameters of ${spec.id} from ${saved.path} (searched ` +
            `${saved.record.date.slice(0, 10)} at commit ${saved.record.commit}` +
            (saved.borrowedFrom
              ? `; borrowed: no search of this device is saved, and ${saved.borrowedFrom} is ` +
                `the nearest saved device)`
              : ")"),
      );
      // The search behind the parameters travels with the record (it carries its own date and
      // commit), so the autotune chart can be drawn from this run's record.
      if (saved) (record.tuning ??= []).push(saved.record);
    }
    return;
  }
  if (!tunable.length) {
    record.notes.push("--tune: none of the selected kernels has a tuning space");
    return;
  }
  const size = sweepSize(shapes);
  // Score the shortlist on the run's odd shapes too, so the winner does not trade them away.
  const alsoShapes = shapes.filter((s) => [s.m, s.k, s.n].some((d) => d % 64 !== 0)).slice(-2);
  const results = [];
  for (const spec of tunable) {
    log(
      `tune ${spec.id} at ${size}${alsoShapes.length ? ` and ${alsoShapes.map(shapeLabel)}` : ""}`,
    );
    const search = args.tune === "quick" ? quickTune : autotune;
    const started = performance.now();
    const t = await search(gpu, spec, { m: size, k: size, n: size }, {
      commit: record.commit,
      alsoShapes,
      log: (line) => log(`  ${line}`),
    });
    const seconds = (performance.now() - started) / 1000;
    results.push(t);
    record.notes.push(
      `tuned ${spec.id} at ${size} (${args.tune} search, ${t.trials.length} points, ` +
        `${seconds.toFixed(0)} s${t.seededBy ? `; ${t.seededBy}` : ""}): ` +
        `${JSON.stringify(t.best.params)} saved to ${fileOf(spec.name)}`,
    );
  }
  record.tuning = results;
}

/**
 * With --tune-shapes, run the planning step's per-shape plan search over its shapes and save
 * it; either way, note which per-shape tuning the run's picks come from.
 */
export async function shapePlans(
  gpu: Gpu,
  args: BenchArgs,
  shapesOf: (spec: KernelSpec) => Shape[],
  record: RunRecord,
  log: (line: string) => void,
) {
  const spec = args.kernels.find((k) => k.planFor);
  if (!spec) {
    if (args.tuneShapes) record.notes.push("--tune-shapes: no planning step was selected");
    return;
  }
  const file = tuningUrl(gpu.summary, spec.name).pathname.replace(/^.*\/(data\/)/, "$1");
  if (args.tuneShapes) {
    log(`tune-shapes: ${spec.id} plans at ${shapesOf(spec).length} shapes`);
    const searched = await searchPlans(gpu, spec, shapesOf(spec), {
      commit: record.commit,
      log: (line) => log(`  ${line}`),
    });
    record.notes.push(
      `searched ${spec.id}'s plans at ${searched.perShape?.length} shapes: saved to ${file}`,
    );
    return;
  }
  const saved = loadTuning(gpu.summary, spec.name);
  record.notes.push(
    saved
      ? `${spec.id}'s plans: per-shape search from ${file} (${saved.date.slice(0, 10)}, ` +
        `commit ${saved.commit}) where a shape's class was searched, the model elsewhere`
      : `${spec.id}'s plans: no per-shape search saved for this device (${file}): the model picks`,
  );
}

/**
 * With --knobs, each selected step's knob swept at one size (lib/search.ts): every point
 * validated, then timed, into the record's `knobs` section.
 */
export async function knobSweeps(
  gpu: Gpu,
  args: BenchArgs,
  record: RunRecord,
  log: (line: string) => void,
  recorded: (r: KernelResult) => Promise<void>,
) {
  const n = sweepSize(args.shapes ?? defaultShapes(gpu.summary));
  record.knobs = [];
  for (const spec of args.kernels.filter((k) => k.knob)) {
    log(`knob ${spec.id} ${spec.knob!.name} at ${shapeLabel(knobShape(spec, n))}`);
    const sweep = await sweepKnob(gpu, spec, n, {
      reps: args.reps,
      onResult: (point) => recorded(point.result),
    });
    record.knobs.push(sweep);
  }
  record.notes.push(`knobs swept at ${n}: ${record.knobs.map((k) => k.kernel).join(", ")}`);
}
