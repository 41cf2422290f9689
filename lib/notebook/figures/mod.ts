/**
 * Concept figures: pictures of each step's idea, drawn from the parameters the kernel runs with
 * (its spec's defaults, or the reader's), so that they follow a change of parameter and never
 * drift from the code. One module per topic:
 *   svg.ts       the SVG writer, palette, title and legend
 *   access.ts    02, 03: which invocation computes which output, the addresses a subgroup touches
 *   tiles.ts     04-07 and 11: workgroup tiles, register blocks, vec4 loads, tile parameters
 *   banks.ts     08: the 32 banks one subgroup's read hits, before and after
 *   warps.ts     09: subgroup tiles and each invocation's fragments
 *   pipeline.ts  10: the double-buffered pipeline against load-barrier-compute-barrier
 *   clamps.ts    12: the workgroup-array indices of the written-out k loop
 *   waves.ts     13: waves of workgroups over the SMs
 *   f16.ts       14: vec2<f16> packing
 */
import { findKernel } from "../../registry.ts";
import type { Params } from "../../kernels/spec.ts";
import type { Shape } from "../../matrix.ts";
import { showBundle } from "../jupyter.ts";
import type { FigureContext } from "./context.ts";
import type { ConceptFigure } from "./svg.ts";
import { oneElementFigure } from "./access.ts";
import { bankFigure } from "./banks.ts";
import { autotuneFigure, subgroupTilingFigure } from "./warps.ts";
import { doubleBufferFigure } from "./pipeline.ts";
import { clampFigure } from "./clamps.ts";
import { wavesFigure } from "./waves.ts";
import { f16Figure } from "./f16.ts";
import { blocktile1dFigure, blocktile2dFigure, tiledFigure, vectorizeFigure } from "./tiles.ts";

export type { ConceptFigure } from "./svg.ts";

const BUILDERS: Record<string, (ctx: FigureContext) => ConceptFigure> = {
  naive: (ctx) => oneElementFigure(ctx, "naive"),
  coalesce: (ctx) => oneElementFigure(ctx, "coalesce"),
  tiled: tiledFigure,
  blocktile_1d: blocktile1dFigure,
  blocktile_2d: blocktile2dFigure,
  vectorize: vectorizeFigure,
  bank_conflicts: bankFigure,
  subgroup_tiling: subgroupTilingFigure,
  double_buffer: doubleBufferFigure,
  autotune: autotuneFigure,
  generated: clampFigure,
  shapes: wavesFigure,
  f16: f16Figure,
};

/** The steps that have a concept figure, in ladder order. */
export const CONCEPT_STEPS: string[] = Object.keys(BUILDERS);

/** The problem shape figures use when none is given (addresses, waves). */
export const FIGURE_SHAPE: Shape = { m: 4096, k: 4096, n: 4096 };

/**
 * The concept figure of `step` (a registry name such as "blocktile_2d") for `params` layered
 * over the step's own, at `shape` (used by the figures whose picture depends on it: the
 * addresses of 02/03, the waves of 13). Throws for an unknown step or invalid parameters.
 */
export function conceptFigure(
  step: string,
  params: Params = {},
  shape: Shape = FIGURE_SHAPE,
): ConceptFigure {
  const spec = findKernel(step);
  const build = spec && BUILDERS[spec.name];
  if (!spec || !build) {
    throw new Error(
      `no concept figure for step "${step}"; steps with one: ${CONCEPT_STEPS.join(", ")}`,
    );
  }
  const merged = { ...spec.params, ...params };
  const why = spec.invalid?.(merged);
  if (why) throw new RangeError(`${spec.name} with ${JSON.stringify(params)}: ${why}`);
  return build({ spec, params: merged, shape });
}

/**
 * Show a concept figure in the notebook: SVG (rendered by JupyterLab, VS Code, nbconvert and
 * GitHub) with the caption as the plain-text fallback. Outside a kernel it prints the caption.
 */
export async function showConcept(step: string, params?: Params, shape?: Shape): Promise<void> {
  const figure = conceptFigure(step, params, shape);
  await showBundle({ "image/svg+xml": figure.svg, "text/plain": figure.caption });
}
