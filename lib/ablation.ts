/**
 * Where the time goes inside autotune's tile loop on the GPU host: a committed data file,
 * data/ablation/<device>.json. The host timed the kernel with stages of its tile loop left out,
 * one on top of the other; the difference between two neighbouring times is what that stage
 * costs. Only the whole kernel computes C: it was validated in the same run, and the other rows
 * are timings of kernels that are wrong on purpose. (lab/extract_ablation.ts writes the file
 * from the lab's probe output.)
 */

const ABLATION_DIR: URL = new URL("../data/ablation/", import.meta.url);

export interface AblationStage {
  leftOut: string;
  ms: number;
  /** 2MNK over this time: what the time would be worth if the kernel still computed C. */
  gflopsEquivalent: number;
  /** Time this stage took: the row above minus this one (undefined on the first row). */
  costMs?: number;
}

/** One tile configuration taken apart. */
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

/** data/ablation/<device>.json: every configuration taken apart on one device. */
export interface AblationFile {
  schema: 1;
  ablations: Ablation[];
}

/** One configuration (e.g. "128x256x16 TN16") of data/ablation/<device>.json. */
export async function loadAblation(device: string, config: string): Promise<Ablation> {
  const url = new URL(`${device}.json`, ABLATION_DIR);
  const file = JSON.parse(await Deno.readTextFile(url)) as AblationFile;
  const found = file.ablations.find((a) => a.config === config);
  if (!found) {
    const known = file.ablations.map((a) => a.config).join(", ");
    throw new Error(`${url.pathname}: no ablation of ${config} (known: ${known})`);
  }
  return found;
}
