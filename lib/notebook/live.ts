/**
 * Live runs on the reader's adapter: validate then time kernels, with progress in place and
 * then the table, where each result's share of the roofline bound is a column.
 */
import type { DeviceSummary } from "../gpu.ts";
import { type Shape, shapeLabel, square } from "../matrix.ts";
import type { Ceilings } from "../record.ts";
import type { Params } from "../registry.ts";
import type { KernelResult } from "../record.ts";
import { runKernel } from "../runner.ts";
import { sweepParams } from "../search.ts";
import { paramsLabel, shortError, SPREAD_COLUMN, spreadCell, tableBundle } from "./format.ts";
import { liveDisplay } from "./jupyter.ts";
import { computeRoofOf, kernel } from "./steps.ts";
import { mainSize, type Session } from "./session.ts";

/** Options of a live run. */
export interface LiveOptions {
  /** Square sizes (default: the session's ladder sizes). */
  sizes?: number[];
  /** Explicit shapes instead of sizes (e.g. odd shapes). */
  shapes?: Shape[];
  /** Tile parameters per kernel name. */
  params?: Record<string, Params>;
  /** Skip timing: validate only (for broken demo kernels and shape checks). */
  validateOnly?: boolean;
  /** Timed GPU time per result (default: 300 ms on software adapters, 400 ms on GPUs). */
  budgetMs?: number;
  /** Ceilings for the "% of roofline" column (the measured roofline bound at the modeled intensity). */
  ceilings?: Ceilings;
}

/** GPU time per timed result: shorter on a software adapter, where each pass is slow. */
export const defaultBudgetMs = (s: Session): number => s.software ? 300 : 400;

/**
 * Validate then time each kernel at each size on the reader's adapter, showing progress in
 * place and then the table: validation, relative error, GPU time, GFLOP/s, model, bound.
 */
export async function runLive(
  s: Session,
  keys: string[],
  opts: LiveOptions = {},
): Promise<KernelResult[]> {
  const shapes = opts.shapes ?? (opts.sizes ?? s.sizes).map(square);
  const specs = keys.map(kernel);
  const live = liveDisplay(`live-${crypto.randomUUID()}`);
  const results: KernelResult[] = [];
  const total = specs.length * shapes.length;
  for (const spec of specs) {
    for (const shape of shapes) {
      await live.update(
        `running ${spec.id} at ${shapeLabel(shape)} (${results.length + 1}/${total})`,
      );
      results.push(
        await runKernel(s.gpu, spec, shape, {
          params: opts.params?.[spec.name],
          skipTiming: opts.validateOnly,
          budgetMs: opts.budgetMs ?? defaultBudgetMs(s),
        }),
      );
    }
  }
  await live.update(liveTable(results, opts.ceilings, s.summary));
  return results;
}

function liveTable(results: KernelResult[], ceilings: Ceilings | undefined, d: DeviceSummary) {
  const timed = results.some((r) => r.gflops !== undefined);
  return tableBundle(
    [
      "kernel",
      "shape",
      "validated",
      "rel. error",
      ...(timed ? ["median ms", SPREAD_COLUMN, "GFLOP/s", "FLOP/byte (model)"] : []),
      ...(timed && ceilings ? ["% of roofline"] : []),
      ...(results.some((r) => r.error) ? ["error"] : []),
    ],
    results.map((r) => {
      const bound = ceilings
        ? Math.min(computeRoofOf(kernel(r.kernel), ceilings), ceilings.bandwidthGBs * r.intensity)
        : undefined;
      return [
        r.kernel,
        shapeLabel(r),
        r.validated,
        r.relErr,
        ...(timed ? [r.medianMs, spreadCell(r), r.gflops, r.intensity] : []),
        ...(timed && ceilings ? [r.gflops && bound ? (100 * r.gflops) / bound : undefined] : []),
        ...(results.some((x) => x.error) ? [shortError(r.error)] : []),
      ];
    }),
    `Live on ${d.description}${d.software ? " (software adapter)" : ""}`,
  );
}

/**
 * Validate and time one kernel with several tile-parameter sets at one shape, showing a table
 * with the parameters of each row.
 */
export async function runParamSweep(
  s: Session,
  key: string,
  paramSets: Params[],
  shape: Shape = square(mainSize(s)),
  opts: Pick<LiveOptions, "budgetMs" | "ceilings"> = {},
): Promise<KernelResult[]> {
  const spec = kernel(key);
  const live = liveDisplay(`sweep-${crypto.randomUUID()}`);
  const points = paramSets.map((params) => ({ label: paramsLabel(params), params }));
  const swept = await sweepParams(s.gpu, spec, shape, points, {
    budgetMs: opts.budgetMs ?? defaultBudgetMs(s),
    onStart: (point) =>
      live.update(`running ${spec.id} ${JSON.stringify(point.params)} at ${shapeLabel(shape)}`),
  });
  const results = swept.map((p) => p.result);
  await live.update(
    tableBundle(
      [
        "parameters",
        "validated",
        "rel. error",
        "median ms",
        SPREAD_COLUMN,
        "GFLOP/s",
        "FLOP/byte (model)",
        "note",
      ],
      results.map((r, i) => [
        paramsLabel(paramSets[i]),
        r.validated,
        r.relErr,
        r.medianMs,
        spreadCell(r),
        r.gflops,
        r.intensity,
        shortError(r.error),
      ]),
      `${spec.id} at ${shapeLabel(shape)} on ${s.summary.description}`,
    ),
  );
  return results;
}
