/**
 * Modeled arithmetic intensity (FLOP per byte of global memory) from each kernel's registry
 * model: per ladder step at its default tiles, and across its tile-parameter search space.
 */
import type { KernelSpec, Params } from "../registry.ts";
import { requireRows, SCHEMA, VEGA_CONFIG, type VegaChart } from "./common.ts";

/** One modeled configuration of one kernel at one size. */
export interface IntensityRow {
  kernel: string;
  title: string;
  order: number;
  /** "BM=128 BN=128 BK=8" */
  config: string;
  params: Params;
  isDefault: boolean;
  n: number;
  flops: number;
  bytes: number;
  intensity: number;
}

/** Every combination of a search space (cartesian product), the default first. */
function configurations(spec: KernelSpec, limit: number): Params[] {
  let combos: Params[] = [{}];
  for (const [key, values] of Object.entries(spec.space ?? {})) {
    combos = combos.flatMap((c) => values.map((v) => ({ ...c, [key]: v })));
  }
  const all = [spec.params, ...combos.map((c) => ({ ...spec.params, ...c }))];
  const seen = new Set<string>();
  return all.filter((p) => {
    const key = JSON.stringify(p);
    if (seen.has(key) || spec.invalid?.(p)) return false;
    seen.add(key);
    return true;
  }).slice(0, limit);
}

const configLabel = (p: Params) => Object.entries(p).map(([k, v]) => `${k}=${v}`).join(" ");

/** Evaluate each kernel's model at square sizes `sizes`, default params and its search space. */
export function modeledIntensity(
  kernels: readonly KernelSpec[],
  sizes: readonly number[],
  maxConfigsPerKernel = 400,
): IntensityRow[] {
  const rows: IntensityRow[] = [];
  for (const spec of kernels) {
    const defaultKey = JSON.stringify(spec.params);
    for (const params of configurations(spec, maxConfigsPerKernel)) {
      for (const n of sizes) {
        const model = spec.model({ m: n, k: n, n }, params);
        rows.push({
          kernel: spec.id,
          title: spec.title,
          order: spec.number,
          config: configLabel(params),
          params,
          isDefault: JSON.stringify(params) === defaultKey,
          n,
          flops: model.flops,
          bytes: model.bytes,
          intensity: model.flops / model.bytes,
        });
      }
    }
  }
  return rows;
}

/** A point the intensity chart draws: one step at one size and one modeled intensity. */
export interface IntensityPoint {
  title: string;
  n: number;
  intensity: number;
  /** The tile configurations that share this point (the chart draws each point once). */
  configs: number;
}

/**
 * The distinct points of `rows`: one per step, size and intensity as its tooltip prints it
 * (three significant digits), so configurations that the chart cannot tell apart are one mark.
 */
export function intensityPoints(rows: readonly IntensityRow[]): IntensityPoint[] {
  const points = new Map<string, IntensityPoint>();
  for (const r of rows) {
    const key = `${r.kernel} ${r.n} ${r.intensity.toPrecision(3)}`;
    const point = points.get(key);
    if (point) point.configs++;
    else points.set(key, { title: r.title, n: r.n, intensity: r.intensity, configs: 1 });
  }
  return [...points.values()];
}

/**
 * One row per step: a tick for each distinct intensity of its tile configurations (hover for how
 * many share it), and a dot for its default tiles, coloured by N.
 */
export function intensityChart(rows: IntensityRow[]): VegaChart {
  requireRows(rows, "model rows");
  const steps = [...new Map([...rows].sort((a, b) => a.order - b.order).map((r) => [r.title, 0]))]
    .map(([title]) => title);
  const encoding = {
    y: { field: "title", type: "nominal", sort: steps, title: null, axis: { labelLimit: 260 } },
    x: {
      field: "intensity",
      type: "quantitative",
      scale: { type: "log" },
      title: "Modeled FLOP per byte",
    },
    // Hues, not shades of one: the sizes are told apart, not ranked.
    color: { field: "n", type: "ordinal", title: "N", scale: { scheme: "category10" } },
  } as const;
  // Only what each layer draws: the default tiles' points, and one tick per distinct point.
  const defaults = rows.filter((r) => r.isDefault).map(({ title, config, n, intensity }) => ({
    title,
    config,
    n,
    intensity,
  }));
  return {
    kind: "vega-lite",
    name: "intensity",
    spec: {
      $schema: SCHEMA,
      title: {
        text: "Modeled arithmetic intensity per step",
        subtitle: [
          "From each step's model of its global-memory traffic (2MNK FLOPs)",
          "dots: default tiles; ticks: every tile configuration of its search space",
        ],
      },
      config: VEGA_CONFIG,
      width: 520,
      height: { step: 26 },
      encoding,
      layer: [
        {
          data: { values: intensityPoints(rows) },
          mark: { type: "tick", thickness: 2, opacity: 0.7 },
          encoding: {
            tooltip: [
              { field: "title", title: "step" },
              { field: "n", title: "N" },
              { field: "intensity", title: "FLOP/byte", format: ".3~g" },
              { field: "configs", title: "configurations" },
            ],
          },
        },
        {
          data: { values: defaults },
          mark: { type: "point", filled: true, size: 60, opacity: 1 },
          encoding: {
            tooltip: [
              { field: "title", title: "step" },
              { field: "config", title: "default tiles" },
              { field: "n", title: "N" },
              { field: "intensity", title: "FLOP/byte", format: ".3~g" },
            ],
          },
        },
      ],
    },
  };
}
