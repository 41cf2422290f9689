/**
 * Turn an ablation probe (lab/probe_kernels.ts --ablate, its probe.json) into the typed data
 * file notebook 11 reads (data/ablation/<device>.json, type AblationFile in lib/ablation.ts).
 *
 *   deno run --allow-read --allow-write=data lab/extract_ablation.ts PROBE.json DEVICE CONFIG...
 *
 * e.g. lab/probes/nvidia-h200-2026-11-23-run22-ablate.json nvidia-h200 "128x256x16 TN16"
 */
import type { Ablation, AblationFile, AblationStage } from "../lib/ablation.ts";
import { stepName } from "../lib/steps/spec.ts";
import { findKernel } from "../lib/registry.ts";

/** ABLATE bits of the probe, in the order the stages are taken out (each adds to the last). */
const CHAIN: [bits: number, leftOut: string][] = [
  [0, "nothing (the whole kernel)"],
  [1, "the next tile's global loads"],
  [2, "the stores to workgroup memory"],
  [2 | 4, "the barrier"],
  [2 | 4 | 8, "the fragment reads of every k step"],
];

interface ProbeRow {
  label: string;
  kernel: string;
  shape: string;
  medianMs?: number;
  gflops?: number;
  relErr?: number;
  validated?: boolean;
  params?: Record<string, number>;
}

export interface ProbeFile {
  device: { description: string };
  started: string;
  commit?: string;
  rows: ProbeRow[];
}

/** The kernel's own parameters of a probe row (without the probe's ABLATE and retired knobs). */
function tileParams(params: Record<string, number>): Record<string, number> {
  const spec = findKernel("autotune")!;
  const known = new Set([...Object.keys(spec.params), ...Object.keys(spec.space ?? {})]);
  return Object.fromEntries(Object.entries(params).filter(([k]) => known.has(k)));
}

const sameTile = (a: Record<string, number>, b: Record<string, number>) =>
  Object.keys(a).every((k) => k === "ABLATE" || a[k] === b[k]);

/** The ablation of one configuration (its label in the probe, e.g. "128x128x8 TN8"). */
export function ablationFromProbe(probe: ProbeFile, config: string): Ablation {
  const rows = probe.rows.filter((r) =>
    r.kernel === "ablation" && r.label.startsWith(`ablate ${config}:`)
  );
  const byBits = new Map(rows.map((r) => [r.params?.ABLATE, r]));
  const stages: AblationStage[] = CHAIN.map(([bits, leftOut]) => {
    const row = byBits.get(bits);
    if (!row?.medianMs || !row.gflops) {
      throw new Error(`ablation ${config}: no timing with ABLATE ${bits} in the probe`);
    }
    return { leftOut, ms: row.medianMs, gflopsEquivalent: row.gflops };
  });
  stages.forEach((s, i) => {
    if (i > 0) s.costMs = stages[i - 1].ms - s.ms;
  });
  const { shape, params } = byBits.get(0)!;
  const whole = probe.rows.find((r) =>
    stepName(r.kernel) === "autotune" && r.validated && r.shape === shape && r.params &&
    sameTile(r.params, params!)
  );
  if (!whole?.gflops || whole.relErr === undefined) {
    throw new Error(`ablation ${config}: the whole kernel was not validated in the same run`);
  }
  const cublas = probe.rows.find((r) => r.kernel === "cublas" && r.validated && r.shape === shape);
  return {
    device: probe.device.description,
    started: probe.started,
    commit: probe.commit,
    shape,
    config,
    params: tileParams(params!),
    validated: { gflops: whole.gflops, relErr: whole.relErr },
    cublasGflops: cublas?.gflops,
    stages,
  };
}

/** These configurations of the probe, taken apart. */
export function ablationFile(probe: ProbeFile, configs: string[]): AblationFile {
  return { schema: 1, ablations: configs.map((c) => ablationFromProbe(probe, c)) };
}

if (import.meta.main) {
  const [probePath, device, ...configs] = Deno.args;
  if (!probePath || !device || !configs.length) {
    console.error("usage: lab/extract_ablation.ts PROBE.json DEVICE CONFIG...");
    Deno.exit(2);
  }
  const probe = JSON.parse(await Deno.readTextFile(probePath)) as ProbeFile;
  const out = new URL(`../data/ablation/${device}.json`, import.meta.url);
  await Deno.mkdir(new URL(".", out), { recursive: true });
  await Deno.writeTextFile(out, JSON.stringify(ablationFile(probe, configs), null, 2) + "\n");
  console.error(`wrote ${out.pathname}`);
}
