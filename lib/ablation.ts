/**
 * Where the time goes inside 11's tile loop, read from an ablation probe of the GPU host
 * (`tools/probe_kernels.ts --ablate`, files in data/probes/). The probe times 11 with stages of
 * its tile loop left out, one on top of the other; the difference between two neighbouring
 * times is what that stage costs. Only the whole kernel computes C: the probe validates it in
 * the same run, and the other rows are timings of kernels that are wrong on purpose.
 */

export const PROBES_DIR: URL = new URL("../data/probes/", import.meta.url);

/** ABLATE bits of the probe, in the order the stages are taken out (each adds to the last). */
const CHAIN: [bits: number, leftOut: string][] = [
  [0, "nothing (the whole kernel)"],
  [1, "the next tile's global loads"],
  [2, "the stores to workgroup memory"],
  [2 | 4, "the barrier"],
  [2 | 4 | 8, "the fragment reads of every k step"],
];

export interface AblationStage {
  leftOut: string;
  ms: number;
  /** 2MNK over this time: what the time would be worth if the kernel still computed C. */
  gflopsEquivalent: number;
  /** Time this stage took: the row above minus this one (undefined on the first row). */
  costMs?: number;
}

export interface Ablation {
  device: string;
  started: string;
  commit?: string;
  shape: string;
  config: string;
  params: Record<string, number>;
  /** The whole kernel validated against the float64 reference in the same run. */
  validated: { gflops: number; relErr: number };
  cublasGflops?: number;
  stages: AblationStage[];
}

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

interface ProbeFile {
  device: { description: string };
  started: string;
  /** Absent in probes written before the probe recorded it (kernels/NOTES.md names theirs). */
  commit?: string;
  rows: ProbeRow[];
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
    r.kernel === "11_autotune" && r.validated && r.shape === shape && r.params &&
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
    params: params!,
    validated: { gflops: whole.gflops, relErr: whole.relErr },
    cublasGflops: cublas?.gflops,
    stages,
  };
}

/** Read a probe file (a name in data/probes/ or a path) and take one configuration apart. */
export async function loadAblation(file: string, config: string): Promise<Ablation> {
  const path = file.includes("/") ? file : new URL(file, PROBES_DIR);
  return ablationFromProbe(JSON.parse(await Deno.readTextFile(path)), config);
}
