/**
 * Sweeps of one kernel over parameter sets at one shape, each point validated against the
 * float64 reference and then timed by the runner; and a step's knob (KernelSpec.knob) as such a
 * sweep, its points laid over the step's defaults. The bench records knob sweeps (`--knobs`),
 * the notebooks run them live (lib/notebook/knobs.ts), and runParamSweep runs any sweep.
 */
import type { Gpu } from "./gpu.ts";
import type { Shape } from "./matrix.ts";
import type { KnobSweep } from "./record.ts";
import type { KernelSpec, Params } from "./kernels/spec.ts";
import { runKernel } from "./runner.ts";
import type { TimingOptions } from "./timing.ts";

/** One point of a knob: its name, and the whole parameter set it runs. */
export interface KnobPoint {
  label: string;
  params: Params;
}

/** The knob's points, each laid over the step's defaults; empty for a step without a knob. */
export function knobPoints(spec: KernelSpec): KnobPoint[] {
  const knob = spec.knob;
  if (!knob) return [];
  return knob.points.map((point) => {
    const params = { ...spec.params, ...point };
    const label = knob.label?.(params) ??
      Object.entries(point).map(([k, v]) => `${k}=${v}`).join(" ");
    return { label, params };
  });
}

/** The point that runs the step's defaults (every knob has one; tests/knobs_test.ts checks). */
export function defaultPoint(spec: KernelSpec): KnobPoint | undefined {
  const same = (p: Params) =>
    Object.keys({ ...p, ...spec.params }).every((k) => p[k] === spec.params[k]);
  return knobPoints(spec).find((point) => same(point.params));
}

/** The shape the knob is swept at for run size n (square unless the knob names its own). */
export function knobShape(spec: KernelSpec, n: number): Shape {
  return spec.knob?.shape?.(n) ?? { m: n, k: n, n };
}

/**
 * The step exactly as its points describe it: no device-tuned parameters or per-shape plan
 * layered under them, so every adapter turns the same knob.
 */
function asDescribed(spec: KernelSpec): KernelSpec {
  return { ...spec, deviceTuned: false, planFor: undefined };
}

/** How a sweep runs: timing options, and a callback before and after each point. */
export interface SweepOptions extends Pick<TimingOptions, "budgetMs" | "reps"> {
  onStart?(point: KnobPoint, index: number, total: number): void | Promise<void>;
  onResult?(point: KnobSweep["points"][number]): void | Promise<void>;
}

/**
 * Validate then time one kernel at several parameter sets at one shape, in order (each set laid
 * over the parameters the runner would use, as `runKernel`'s `params` are).
 */
export async function sweepParams(
  gpu: Gpu,
  spec: KernelSpec,
  shape: Shape,
  points: KnobPoint[],
  opts: SweepOptions = {},
): Promise<KnobSweep["points"]> {
  const done: KnobSweep["points"] = [];
  for (const [i, point] of points.entries()) {
    await opts.onStart?.(point, i, points.length);
    const result = await runKernel(gpu, spec, shape, {
      params: point.params,
      budgetMs: opts.budgetMs,
      reps: opts.reps,
    });
    done.push({ label: point.label, result });
    await opts.onResult?.(done[i]);
  }
  return done;
}

/** Validate then time every point of `spec`'s knob at run size n, in order. */
export async function sweepKnob(
  gpu: Gpu,
  spec: KernelSpec,
  n: number,
  opts: SweepOptions = {},
): Promise<KnobSweep> {
  if (!spec.knob) throw new Error(`${spec.id} has no knob`);
  const points = await sweepParams(
    gpu,
    asDescribed(spec),
    knobShape(spec, n),
    knobPoints(spec),
    opts,
  );
  return { kernel: spec.id, knob: spec.knob.name, points };
}
