/**
 * What each of step 12's transforms brings, measured on a GPU host: the generated kernel at one
 * tile configuration with every combination of its three transforms on and off, beside step 11
 * and cuBLAS in the same run. Written by lab/generated/probe.ts to data/transforms/<device>.json;
 * notebook 12 reads it.
 */
import { readJsonIfPresent } from "./files.ts";
import type { DeviceSummary } from "./gpu.ts";
import type { Shape } from "./matrix.ts";
import type { Params } from "./steps/spec.ts";

/** The three transforms, each 1 (on) or 0 (off), and AHEAD where a run varied it. */
export interface Transforms {
  UNROLL: number;
  NESTED: number;
  LITERAL_BUFFER: number;
  /** The next k step's fragment reads issued early (needs UNROLL); absent: 0. */
  AHEAD?: number;
}

/** One validated, timed kernel on one shape. */
export interface MeasuredRow {
  shape: Shape;
  gflops: number;
  medianMs: number;
  relErr: number;
}

export interface TransformRecord {
  schema: 1;
  device: DeviceSummary;
  date: string;
  commit: string;
  /** The tile configuration every variant ran with (the transforms layered on top). */
  params: Params;
  variants: (MeasuredRow & { transforms: Transforms })[];
  /** Step 11 at its tuned parameters for each shape, and cuBLAS SGEMM, in the same run. */
  autotune: (MeasuredRow & { params: Params })[];
  cublas: MeasuredRow[];
}

/** The committed measurement for a device slug, or undefined when there is none. */
export function loadTransforms(slug: string): Promise<TransformRecord | undefined> {
  return readJsonIfPresent<TransformRecord>(
    new URL(`../data/transforms/${slug}.json`, import.meta.url),
  );
}
