/**
 * Concept figures in the notebook: each step's picture of its idea (its spec's `figure`, drawn
 * with lib/figures/ or its own folder's figure.ts) from the parameters the kernel runs with (its
 * defaults, or the reader's), so that it follows a change of parameter and never drifts from
 * the code.
 */
import { findKernel, KERNELS } from "../registry.ts";
import type { ConceptFigure, Params } from "../steps/spec.ts";
import type { Shape } from "../matrix.ts";
import { encodeBase64, svgToPng } from "../render.ts";
import { inJupyter, showBundle } from "./jupyter.ts";

export type { ConceptFigure } from "../steps/spec.ts";

/** The steps that have a concept figure, in ladder order (read when asked: steps may be added). */
export function conceptSteps(): string[] {
  return KERNELS.filter((k) => k.figure && !k.demo).map((k) => k.name);
}

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
  const build = spec?.figure;
  if (!spec || !build) {
    throw new Error(
      `no concept figure for step "${step}"; steps with one: ${conceptSteps().join(", ")}`,
    );
  }
  const merged = { ...spec.params, ...params };
  const why = spec.invalid?.(merged);
  if (why) throw new RangeError(`${spec.name} with ${JSON.stringify(params)}: ${why}`);
  return build({ spec, params: merged, shape });
}

/**
 * Show a concept figure in the notebook: SVG for the viewers that draw it (a trusted notebook in
 * JupyterLab, VS Code, nbconvert), a PNG of it at the size it is shown for those that do not (an
 * untrusted notebook, GitHub), and the caption as the plain-text fallback. Outside a kernel it
 * prints the caption.
 */
export async function showConcept(step: string, params?: Params, shape?: Shape): Promise<void> {
  const figure = conceptFigure(step, params, shape);
  if (!inJupyter()) {
    console.log(figure.caption);
    return;
  }
  await showBundle({
    "image/svg+xml": figure.svg,
    "image/png": encodeBase64(await svgToPng(figure.svg, 1)),
    "text/plain": figure.caption,
  });
}
