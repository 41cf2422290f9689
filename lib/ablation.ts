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
  /** (slowest - fastest) / median of the timed passes (recorded from the ladder ablation on). */
  spread?: number;
  /** Timed passes. */
  reps?: number;
}

/** One tile configuration taken apart. */
export interface Ablation {
  device: string;
  started: string;
  commit?: string;
  shape: string;
  config: string;
  /** The registry kernel taken apart (the ladder ablation; 11's configurations name a tile). */
  kernel?: string;
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

/** What a ladder ablation takes out of a kernel's WGSL, each on top of the ones before it. */
export type LeftOut = "global loads" | "barriers";

/** The index inside the brackets that open at `open` (the `[`), and where they close. */
function bracketed(code: string, open: number): [string, number] {
  let depth = 0;
  for (let i = open; i < code.length; i++) {
    if (code[i] === "[") depth++;
    else if (code[i] === "]" && --depth === 0) return [code.slice(open + 1, i), i];
  }
  throw new Error(`ablation: unclosed [ at ${open}`);
}

/**
 * A kernel's WGSL with parts left out, for timing what they cost (the result is wrong on
 * purpose). "global loads": every read of the input arrays A and B becomes a value made from
 * its own index (`(index & 7)` as a float), so the address arithmetic and bounds checks stay
 * and only the memory instruction goes; the entry point keeps both bindings with a phony
 * assignment. "barriers": every workgroupBarrier() is dropped.
 */
export function ablatedSource(code: string, leftOut: readonly LeftOut[]): string {
  if (leftOut.includes("global loads")) {
    for (const array of ["A", "B"]) {
      const declared = code.match(
        new RegExp(`var<storage,\\s*read>\\s+${array}\\s*:\\s*array<(.+)>;`),
      );
      if (!declared) throw new Error(`ablation: no read-only storage array ${array}`);
      const element = declared[1].trim();
      const scalar = element.match(/(f16|f32)/)?.[1];
      if (!scalar) throw new Error(`ablation: ${array} holds ${element}, not floats`);
      const read = new RegExp(`(?<![\\w.&])${array}\\[`, "g");
      let out = "";
      let from = 0;
      for (const m of code.matchAll(read)) {
        if (m.index! < from) continue;
        const [index, close] = bracketed(code, m.index! + array.length);
        const value = `${scalar}((${index}) & 7u)`;
        out += code.slice(from, m.index) + (element === scalar ? value : `${element}(${value})`);
        from = close + 1;
      }
      if (from === 0) throw new Error(`ablation: ${array} is never read`);
      code = out + code.slice(from);
    }
    const entry = code.match(/@compute[^{]*\{/);
    if (!entry) throw new Error("ablation: no @compute entry point");
    const at = entry.index! + entry[0].length;
    code = code.slice(0, at) + "\n  _ = &A;\n  _ = &B;" + code.slice(at);
  }
  if (leftOut.includes("barriers")) {
    if (!code.includes("workgroupBarrier();")) throw new Error("ablation: no barrier to drop");
    code = code.replaceAll("workgroupBarrier();", "");
  }
  return code;
}
