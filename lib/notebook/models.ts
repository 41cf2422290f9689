/**
 * The step model (lib/model/bounds.ts) as notebooks show it: what changes from one step to the
 * next and the bound each quantity implies, at 4096 on the H200, and how a measurement compares
 * with the model's bounds.
 */
import type { DeviceSummary } from "../gpu.ts";
import { gpuModel, H200, MODEL_DEVICE } from "../model/device.ts";
import { type Bound, type Limit, type StepModel, stepModel } from "../model/bounds.ts";
import { type Shape, shapeLabel, square } from "../matrix.ts";
import type { KernelResult, RunRecord } from "../record.ts";
import { type KernelSpec, type Params, stepName } from "../registry.ts";
import { type Cell, escapeHtml, fmt, paramsLabel, showNote, tableBundle } from "./format.ts";
import { showBundle } from "./jupyter.ts";
import { kernel } from "./steps.ts";
import { dataPath, newestGpuRun, RECORDED_SIZE } from "./recorded.ts";

/** The parameters a kernel runs with on `device` at `shape`, without an adapter at hand. */
function paramsFor(spec: KernelSpec, shape: Shape, device: DeviceSummary): Params {
  return { ...spec.params, ...spec.planFor?.(shape, device) };
}

const isShape = (r: KernelResult, s: Shape) => r.m === s.m && r.k === s.k && r.n === s.n;

/** A validated, timed result of `spec` at `shape` in `record`. */
function resultIn(record: RunRecord, spec: KernelSpec, shape: Shape): KernelResult | undefined {
  return record.results.find((r) =>
    stepName(r.kernel) === spec.name && r.validated && r.gflops !== undefined && isShape(r, shape)
  );
}

/** The newest GPU record with a timed result of `spec` at `shape`, and that result. */
async function recordedResult(spec: KernelSpec, shape: Shape) {
  const found = await newestGpuRun((r) => resultIn(r, spec, shape) !== undefined);
  if (!found) return undefined;
  return { ...found, result: resultIn(found.record, spec, shape)! };
}

/**
 * The kernel's parameters at `shape` on the H200: those of the newest recorded GPU run of it (the
 * tuned ones, where it was tuned), else its defaults (and the plan picker's, for step 13).
 */
async function h200Params(spec: KernelSpec, shape: Shape): Promise<Params> {
  const found = await recordedResult(spec, shape);
  return found && /h200/i.test(found.record.device.description)
    ? { ...spec.params, ...found.result.params }
    : paramsFor(spec, shape, MODEL_DEVICE);
}

/**
 * One row of the table: a quantity, how to read it off a model, and whether it is one of the
 * few the short table shows when it changes (`key`) or always (`always`); the rest are one click
 * away.
 */
interface Row {
  label: string;
  value(m: StepModel): Cell;
  key?: boolean;
  always?: boolean;
}

const boundRow = (limit: Limit): Row => ({
  label: `bound: ${limit} (GFLOP/s)`,
  value: (m) => {
    const b = m.bounds.find((x) => x.limit === limit);
    return b ? (b.notABound ? `${fmt(b.gflops)} (not a bound)` : b.gflops) : undefined;
  },
  key: true,
});

const ROWS: Row[] = [
  { label: "parameters", value: (m) => paramsLabel(m.params), always: true },
  { label: "global traffic, cost model (MB)", value: (m) => m.global.bytes / 1e6 },
  { label: "FLOP per global byte", value: (m) => m.global.intensity, key: true },
  {
    label: "L1 sector bytes per FMA (no workgroup memory)",
    value: (m) => m.l1SectorBytesPerFma,
    key: true,
  },
  { label: "workgroup-memory reads per FMA", value: (m) => m.workgroup?.readsPerFma },
  {
    label: "workgroup-memory bytes read per FMA",
    value: (m) => m.workgroup?.bytesPerFma,
    key: true,
  },
  {
    label: "bank wavefronts per warp read (fewest possible)",
    value: (m) =>
      m.workgroup &&
      `${fmt(m.workgroup.wavefrontsPerRead)} (${fmt(m.workgroup.idealWavefrontsPerRead)})`,
    key: true,
  },
  {
    label: "bank wavefronts per warp store (fewest possible)",
    value: (m) =>
      m.workgroup &&
      `${fmt(m.workgroup.wavefrontsPerStore)} (${fmt(m.workgroup.idealWavefrontsPerStore)})`,
  },
  {
    label: "bank bytes per FMA, reads and stores",
    value: (m) => m.workgroup?.bankBytesPerFma,
    key: true,
  },
  { label: "instructions per FMA (at least)", value: (m) => m.instructionsPerFma, key: true },
  { label: "registers per invocation (estimate)", value: (m) => m.registersEstimate },
  { label: "invocations per workgroup", value: (m) => m.invocationsPerWorkgroup },
  { label: "workgroup memory (bytes)", value: (m) => m.workgroupBytes },
  {
    label: "resident workgroups per SM (limited by)",
    value: (m) => `${m.occupancy.resident} (${m.occupancy.limitedBy})`,
    key: true,
  },
  { label: "resident invocations per SM", value: (m) => m.occupancy.invocations },
  { label: "workgroups", value: (m) => m.waves.workgroups },
  { label: "waves over the SMs", value: (m) => m.waves.waves },
  { label: "share of the waves' slots holding work", value: (m) => m.waves.fill },
  {
    label: "busiest SM's balance: (W / SMs) / ceil(W / SMs)",
    value: (m) => m.smBalance,
    key: true,
  },
  boundRow("arithmetic"),
  boundRow("issue"),
  boundRow("workgroup memory"),
  boundRow("L1"),
  boundRow("DRAM"),
  { label: "binding bound", value: (m) => m.binding.limit, always: true },
  {
    label: "model bound: binding x balance (GFLOP/s)",
    value: (m) => m.boundGflops,
    always: true,
  },
];

/** The two words of the table a reader may not know yet. */
const TERMS =
  "Warp: the 32 invocations an NVIDIA SM issues as one instruction (a WGSL subgroup). " +
  "Wavefront: one pass of workgroup memory, which serves each of its 32 banks once; a warp's " +
  "read takes more than one when lanes want different words of the same bank.";

/**
 * Show the model of `prev` and `step` side by side on the H200 at `shape` (the notebooks' 4096 by
 * default), each at the parameters of its newest recorded run there: the quantities that change
 * from one to the other and the bounds they imply, then the binding bound. Every quantity, changed
 * or not, is one click away. Changed rows start with `*` (and are bold where the viewer keeps
 * styles: an untrusted notebook drops them).
 */
export async function showModel(
  prev: string,
  step: string,
  shape: Shape = square(RECORDED_SIZE),
): Promise<void> {
  const specs = [kernel(prev), kernel(step)];
  const models = await Promise.all(
    specs.map(async (k) => stepModel(k, await h200Params(k, shape), shape, H200)),
  );
  const columns = ["quantity", ...models.map((m) => m.kernel)];
  const cells = ROWS.map((r) => models.map((m) => fmt(r.value(m))));
  const changed = cells.map(([a, b]) => a !== b);
  const rows: Cell[][] = ROWS.map((r, i) => [(changed[i] ? "* " : "") + r.label, ...cells[i]]);
  const shown = ROWS.flatMap((r, i) => r.always || (r.key && changed[i]) ? [i] : []);
  const caption = (marks: string) =>
    `Step model of ${specs[0].id} and ${specs[1].id} at ${shapeLabel(shape)} on ` +
    `the ${H200.name} (${marks} what changes)`;
  const bundle = tableBundle(columns, shown.map((i) => rows[i]), caption("* marks"));
  await showBundle({
    ...bundle,
    "text/plain": `${bundle["text/plain"]}\n${TERMS}`,
    "text/markdown": `${bundle["text/markdown"]}\n\n${TERMS}`,
    "text/html": modelHtml(
      columns,
      shown.map((i) => rows[i]),
      shown.map((i) => changed[i]),
      caption("* and bold mark"),
    ) +
      `<p>${escapeHtml(TERMS)}</p>` +
      `<details><summary>All ${ROWS.length} quantities of the model, ` +
      `${changed.filter(Boolean).length} of them changed</summary>` +
      modelHtml(columns, rows, changed) + "</details>",
  });
}

/** The table as HTML with the changed rows (their `*`) in bold on a tinted background. */
function modelHtml(columns: string[], rows: Cell[][], changed: boolean[], caption?: string) {
  const td = (tag: string, c: Cell, i: number) =>
    `<${tag} style="text-align:${i && typeof c === "number" ? "right" : "left"}">${
      escapeHtml(fmt(c))
    }</${tag}>`;
  const body = rows.map((r, i) =>
    `<tr${changed[i] ? ' style="font-weight:bold;background:#fff3c4"' : ""}>` +
    r.map((c, j) => td("td", c, j)).join("") +
    "</tr>"
  ).join("");
  return `<table>${caption ? `<caption>${escapeHtml(caption)}</caption>` : ""}<thead><tr>` +
    columns.map((c, i) => td("th", c, i)).join("") + `</tr></thead><tbody>${body}</tbody></table>`;
}

/** How a measurement compares with the model: numbers for a sentence. */
export interface ModelGap {
  kernel: string;
  shape: Shape;
  /** The GPU the model's numbers are for, and whether the measured one is another. */
  modeledFor: string;
  modeledForAnother: boolean;
  measuredGflops: number;
  /** The model's bound (binding bound x the busiest SM's balance), and measured / bound. */
  boundGflops: number;
  ratio: number;
  binding: Limit;
  /** How the binding bound follows from the quantities. */
  why: string;
  /** The busiest SM's balance the bound is multiplied by, and the share of the waves' slots used. */
  smBalance: number;
  waveFill: number;
  /** Every bound that holds, with measured / bound. */
  bounds: { limit: Limit; gflops: number; ratio: number }[];
}

/**
 * The gap between `measuredGflops` of `step` at `shape` on `device` and the model's bounds, at
 * the parameters the kernel ran with (`params`; else its defaults and, for step 13, the plan the
 * picker chooses on `device`).
 */
export function modelGap(
  step: string,
  measuredGflops: number,
  shape: Shape,
  device: DeviceSummary,
  params?: Params,
): ModelGap {
  const spec = kernel(step);
  const gpu = gpuModel(device);
  const m = stepModel(spec, { ...paramsFor(spec, shape, device), ...params }, shape, gpu);
  const holds = m.bounds.filter((b: Bound) => !b.notABound);
  return {
    kernel: spec.id,
    shape,
    modeledFor: gpu.name,
    modeledForAnother: gpu.unknown !== undefined,
    measuredGflops,
    boundGflops: m.boundGflops,
    ratio: measuredGflops / m.boundGflops,
    binding: m.binding.limit,
    why: m.binding.why,
    smBalance: m.smBalance,
    waveFill: m.waves.fill,
    bounds: holds.map((b) => ({
      limit: b.limit,
      gflops: b.gflops,
      ratio: measuredGflops / b.gflops,
    }))
      .sort((a, b) => a.gflops - b.gflops),
  };
}

/**
 * Say how the newest GPU record's measurement of `step` at `shape` (4096 by default) compares
 * with the model: measured GFLOP/s against the model's bound and against each bound.
 */
export async function showModelGap(step: string, shape: Shape = square(RECORDED_SIZE)) {
  const spec = kernel(step);
  const found = await recordedResult(spec, shape);
  if (!found) {
    await showNote(`No recorded GPU run of \`${spec.id}\` at ${shapeLabel(shape)} yet.`);
    return;
  }
  const { record, path, result } = found;
  const g = modelGap(step, result.gflops!, shape, record.device, result.params);
  const others = g.bounds.filter((b) => b.limit !== g.binding)
    .map((b) => `${b.limit} ${fmt(b.gflops)} (${fmt(100 * b.ratio)}% reached)`).join(", ");
  const modeled = g.modeledForAnother ? " (modeled for the H200)" : "";
  await showNote(
    `On the **${record.device.description}** (${dataPath(path)}), ` +
      `\`${g.kernel}\` at ${shapeLabel(shape)} ran at **${fmt(g.measuredGflops)} GFLOP/s**: ` +
      `**${fmt(100 * g.ratio)}%** of the model's bound of ${fmt(g.boundGflops)} GFLOP/s` +
      `${modeled}, set by ${g.binding} (${g.why}) times ${fmt(g.smBalance)}, the share of the ` +
      `GPU its busiest SM allows (${
        g.smBalance < 1 ? "whole workgroups do not spread evenly" : "even"
      }). ` +
      `The other bounds, in GFLOP/s: ${others}.`,
  );
}
