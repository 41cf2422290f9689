/**
 * The autotuner's search as an interactive plotly heatmap over two tile parameters: each cell
 * the best measured GFLOP/s over the other parameters, hover for the full configuration.
 * A static vega-lite twin draws the same cells for SVG/PNG and notebook fallbacks.
 */
import type { Params } from "../registry.ts";
import { FONT } from "../font.ts";
import { type PlotlyChart, SCHEMA, VEGA_CONFIG, type VegaLiteSpec, wrapText } from "./common.ts";

/** One configuration the tuner tried (failed or invalid ones carry no gflops). */
export interface TuneTrial {
  params: Params;
  /** Square size or shape label the trial ran at, when the search spans sizes. */
  n?: number;
  gflops?: number;
  validated?: boolean;
  error?: string;
}

export interface AutotuneOptions {
  /** Parameter (or "n") along x and y; default: the two with the most distinct values. */
  x?: string;
  y?: string;
  /** Title line naming the kernel and the run. */
  kernel?: string;
  source?: string;
  /**
   * The search's winner, when it ranks by more than one trial's GFLOP/s (a score over several
   * shapes): its cell is the one marked. Default: the cell of the fastest trial.
   */
  winner?: Params;
}

/** One heatmap cell: the best trial among those sharing this (x, y). */
export interface TuneCell {
  x: string;
  y: string;
  gflops: number | null;
  best: string;
  tried: number;
  failed: number;
  winner: boolean;
}

const valueOf = (t: TuneTrial, key: string) => key === "n" ? t.n : t.params[key];
/** A trial's heatmap cell: its values of `x` and `y` ("-" where it has none). */
const cellOf = (t: TuneTrial, x: string, y: string): [string, string] => [
  String(valueOf(t, x) ?? "-"),
  String(valueOf(t, y) ?? "-"),
];
const describe = (p: Params) => Object.entries(p).map(([k, v]) => `${k}=${v}`).join(" ");

/**
 * Reduce trials to heatmap cells over parameters `x` and `y`; the marked cell holds `winner`
 * (the fastest trial's cell when no winner is given or none of the trials is it).
 */
export function tuneCells(
  trials: TuneTrial[],
  x: string,
  y: string,
  winner?: Params,
): TuneCell[] {
  const cells = new Map<string, TuneCell>();
  let top: TuneCell | undefined;
  for (const t of trials) {
    const [cx, cy] = cellOf(t, x, y);
    const key = `${cx}\u0000${cy}`;
    const cell = cells.get(key) ??
      { x: cx, y: cy, gflops: null, best: "", tried: 0, failed: 0, winner: false };
    cell.tried++;
    const ok = t.validated !== false && typeof t.gflops === "number" && t.gflops > 0;
    if (!ok) cell.failed++;
    else if (cell.gflops === null || t.gflops! > cell.gflops) {
      cell.gflops = t.gflops!;
      cell.best = describe(t.params) + (t.n !== undefined ? ` at N=${t.n}` : "");
    }
    cells.set(key, cell);
  }
  for (const c of cells.values()) {
    if (c.gflops !== null && (!top || c.gflops > top.gflops!)) top = c;
  }
  const won = winner &&
    trials.find((t) => Object.entries(winner).every(([k, v]) => t.params[k] === v));
  if (won) {
    top = cells.get(cellOf(won, x, y).join("\u0000"));
  }
  if (top) top.winner = true;
  return [...cells.values()];
}

/** Default axes: the parameters (or "n") with the most distinct values. */
function pickAxes(trials: TuneTrial[], opts: AutotuneOptions): [string, string] {
  const keys = [...new Set(trials.flatMap((t) => Object.keys(t.params)))];
  if (trials.some((t) => t.n !== undefined)) keys.push("n");
  const distinct = (k: string) => new Set(trials.map((t) => valueOf(t, k))).size;
  const ranked = keys.filter((k) => distinct(k) > 1).sort((a, b) => distinct(b) - distinct(a));
  const x = opts.x ?? ranked[0] ?? keys[0];
  const y = opts.y ?? ranked.find((k) => k !== x) ?? x;
  return [x, y];
}

const numericOrder = (values: string[]) =>
  [...new Set(values)].sort((a, b) => Number(a) - Number(b) || a.localeCompare(b));

/** Plotly heatmap of the tile-parameter search, with its static twin. */
export function autotuneChart(trials: TuneTrial[], opts: AutotuneOptions = {}): PlotlyChart {
  if (!trials.some((t) => typeof t.gflops === "number")) {
    throw new Error("no measured autotune trials to chart");
  }
  const [xKey, yKey] = pickAxes(trials, opts);
  const cells = tuneCells(trials, xKey, yKey, opts.winner);
  const xs = numericOrder(cells.map((c) => c.x));
  const ys = numericOrder(cells.map((c) => c.y));
  const at = (x: string, y: string) => cells.find((c) => c.x === x && c.y === y);
  const z = ys.map((y) => xs.map((x) => at(x, y)?.gflops ?? null));
  const hover = ys.map((y) =>
    xs.map((x) => {
      const c = at(x, y);
      if (!c) return "not tried";
      const head = c.gflops === null ? "no valid trial" : `${c.gflops.toPrecision(4)} GFLOP/s`;
      return `${head}<br>${c.best}<br>${c.tried} tried, ${c.failed} failed`;
    })
  );
  const winner = cells.find((c) => c.winner);
  const measuredValues = cells.flatMap((c) => c.gflops === null ? [] : [c.gflops]);
  const midpoint = (Math.min(...measuredValues) + Math.max(...measuredValues)) / 2;
  const title = `Autotune search${opts.kernel ? `: ${opts.kernel}` : ""}`;
  const others = [...new Set(trials.flatMap((t) => Object.keys(t.params)))]
    .filter((k) => k !== xKey && k !== yKey);
  const subtitle = [
    opts.source ?? "",
    others.length ? `each cell: the best over ${others.join(", ")} (hover for all parameters)` : "",
    opts.winner ? "marked: the search's winner" : "marked: the fastest trial",
  ].filter(Boolean).join(" · ");

  const figure = {
    data: [
      {
        type: "heatmap",
        x: xs,
        y: ys,
        z,
        text: hover,
        hovertemplate: `${xKey}=%{x}, ${yKey}=%{y}<br>%{text}<extra></extra>`,
        colorscale: "Viridis",
        colorbar: { title: { text: "GFLOP/s" } },
        xgap: 1,
        ygap: 1,
      },
      ...(winner
        ? [{
          type: "scatter",
          mode: "markers",
          x: [winner.x],
          y: [winner.y],
          marker: { symbol: "star", size: 16, color: "white", line: { color: "black", width: 1 } },
          name: "winner",
          hovertemplate: `${
            opts.winner ? "winner's cell" : "fastest"
          }: ${winner.best}<extra></extra>`,
          showlegend: false,
        }]
        : []),
    ],
    layout: {
      title: {
        text: subtitle ? `${title}<br><sub>${wrapText(subtitle, 90).join("<br>")}</sub>` : title,
      },
      font: { family: FONT },
      xaxis: { title: { text: xKey }, type: "category" },
      yaxis: { title: { text: yKey }, type: "category" },
      width: 640,
      height: 460,
    },
    // Nothing that would reach the network from an offline page.
    config: {
      responsive: true,
      displaylogo: false,
      showLink: false,
      showSendToCloud: false,
      showEditInChartStudio: false,
    },
  };

  // The grid fills the figure whatever the number of cells: cells are as wide as 560 px allow
  // (at least 56, for their labels), 40 px tall at least.
  const fallback: VegaLiteSpec = {
    $schema: SCHEMA,
    title: { text: title, subtitle: wrapText(subtitle, 90) },
    config: VEGA_CONFIG,
    width: Math.max(560, 56 * xs.length),
    height: Math.max(260, 40 * ys.length),
    data: { values: cells },
    encoding: {
      x: { field: "x", type: "ordinal", sort: xs, title: xKey, axis: { labelAngle: 0 } },
      // Largest value on top, as plotly draws it.
      y: { field: "y", type: "ordinal", sort: [...ys].reverse(), title: yKey },
    },
    layer: [
      {
        mark: "rect",
        encoding: {
          color: {
            field: "gflops",
            type: "quantitative",
            title: "GFLOP/s",
            scale: { scheme: "viridis" },
          },
          tooltip: [
            { field: "best", title: "best params" },
            { field: "gflops", title: "GFLOP/s", format: ".4~g" },
            { field: "tried" },
            { field: "failed" },
          ],
        },
      },
      {
        mark: { type: "text", fontSize: 12 },
        encoding: {
          // Plain GFLOP/s at any magnitude (no "4.04e+4").
          text: {
            field: "gflops",
            type: "quantitative",
            format: Math.max(...measuredValues) >= 100 ? ",.0f" : ".3~g",
          },
          // Dark text on the light (fast) end of viridis, light text on the dark end.
          color: {
            condition: { test: `datum.gflops > ${midpoint}`, value: "black" },
            value: "white",
          },
        },
      },
      {
        transform: [{ filter: "datum.winner" }],
        mark: { type: "rect", fill: null, stroke: "black", strokeWidth: 2 },
      },
    ],
  } as VegaLiteSpec;

  return { kind: "plotly", name: "tuning", figure, fallback };
}
