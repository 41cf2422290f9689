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

/**
 * Two panels: intensity per step at default tiles (one line per N), and every tile
 * configuration of each step (hover for its parameters).
 */
export function intensityChart(rows: IntensityRow[]): VegaChart {
  requireRows(rows, "model rows");
  const steps = [...new Map([...rows].sort((a, b) => a.order - b.order).map((r) => [r.title, 0]))]
    .map(([title]) => title);
  const step = {
    field: "title",
    type: "nominal",
    sort: steps,
    title: "Ladder step",
    axis: { labelLimit: 260 },
  } as const;
  const intensity = {
    field: "intensity",
    type: "quantitative",
    scale: { type: "log" },
    title: "Modeled FLOP per byte",
  } as const;
  const tooltip = [
    { field: "title", title: "step" },
    { field: "config", title: "params" },
    { field: "n", title: "N" },
    { field: "intensity", title: "FLOP/byte", format: ".3~g" },
  ];
  return {
    kind: "vega-lite",
    name: "intensity",
    spec: {
      $schema: SCHEMA,
      title: {
        text: "Modeled arithmetic intensity per step and tile size",
        subtitle: "From each kernel's global-memory model in lib/registry.ts (2MNK FLOPs)",
      },
      config: VEGA_CONFIG,
      data: { values: rows },
      vconcat: [
        {
          title: "Default tiles",
          width: 520,
          height: 240,
          transform: [{ filter: "datum.isDefault" }],
          mark: { type: "line", point: true },
          encoding: {
            x: { ...step, axis: { labelAngle: -30, labelLimit: 260 } },
            y: intensity,
            color: { field: "n", type: "ordinal", title: "N" },
            tooltip,
          },
        },
        {
          title: "Every tile configuration (search space)",
          width: 520,
          height: { step: 26 },
          mark: { type: "tick", thickness: 2 },
          encoding: {
            y: step,
            x: intensity,
            color: { field: "n", type: "ordinal", title: "N" },
            tooltip,
          },
        },
      ],
    },
  };
}
