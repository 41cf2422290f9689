/** What every figure builder receives, and the titles they share. */
import type { KernelSpec, Params } from "../steps/spec.ts";

export type { ConceptFigure, FigureContext } from "../steps/spec.ts";

/** "06 2D blocktiling" */
export const stepHeading = (spec: KernelSpec) =>
  `${String(spec.number).padStart(2, "0")} ${spec.title}`;

/** "BM 128, BN 128, BK 8" for the named parameters that are set. */
export const paramList = (p: Params, keys: string[]) =>
  keys.filter((k) => p[k] !== undefined).map((k) => `${k} ${p[k]}`).join(", ");
