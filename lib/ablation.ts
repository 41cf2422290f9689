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
  /** The machine code that ran (the ladder ablation: read from the driver's shader cache). */
  machineCode?: StageCode;
}

/** What the driver compiled one stage to, and the issue ceiling that code allows. */
export interface StageCode {
  instructions: number;
  /** FFMA and HFMA2 instructions in the program (the whole kernel's, unless the compiler merged some). */
  multiplyAdds: number;
  /** Instructions issued per multiply-add over a tile of K (absent: `notCounted` says why). */
  instructionsPerMultiplyAdd?: number;
  /** The FP32 ceiling over instructions per multiply-add: what this code can issue at most. */
  issueCeilingGflops?: number;
  notCounted?: string;
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

/**
 * Every ladder kernel taken apart on one device, data/ablation/ladder/<device>.json
 * (lab/ablate_ladder.ts timed it; lab/driver/ablation_code.ts added each stage's machine code).
 */
export async function loadLadderAblation(device: string): Promise<AblationFile> {
  const url = new URL(`ladder/${device}.json`, ABLATION_DIR);
  return JSON.parse(await Deno.readTextFile(url)) as AblationFile;
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
export type LeftOut = "global loads" | "barriers" | "workgroup stores" | "workgroup reads";

/** The index inside the brackets that open at `open` (the `[`), and where they close. */
function bracketed(code: string, open: number): [string, number] {
  let depth = 0;
  for (let i = open; i < code.length; i++) {
    if (code[i] === "[") depth++;
    else if (code[i] === "]" && --depth === 0) return [code.slice(open + 1, i), i];
  }
  throw new Error(`ablation: unclosed [ at ${open}`);
}

/** `array<T, N>` and `vecN<T>` indexed once: T. */
function indexed(type: string): string {
  const array = type.match(/^array<(.+),[^,<>]+>$/) ?? type.match(/^array<(.+)>$/);
  if (array) return array[1].trim();
  const vector = type.match(/^vec[234]<(f16|f32)>$/);
  if (vector) return vector[1];
  throw new Error(`ablation: cannot index ${type}`);
}

/** A float of `type` made from an index, the stand-in for a value read from memory. */
function standIn(type: string, indices: string[]): string {
  const scalar = type.match(/(f16|f32)/)?.[1];
  if (!scalar) throw new Error(`ablation: ${type} holds no floats`);
  // The index itself, not a few bits of it: stand-ins that compare equal (index & 7 is the same
  // for every row of a tile 8 wide) let the compiler merge multiply-adds.
  const value = `${scalar}(${indices.map((i) => `(${i})`).join(" + ")})`;
  return type === scalar ? value : `${type}(${value})`;
}

/**
 * Every access to `array` (declared with `type`): the read or the store statement it is part of,
 * each given to `edit` with its chain of indices, innermost type and whether it is a store.
 */
function rewriteAccesses(
  code: string,
  array: string,
  type: string,
  edit: (access: { indices: string[]; element: string; store: boolean }) => string | undefined,
): string {
  const access = new RegExp(`(?<![\\w.&])${array}\\[`, "g");
  let out = "";
  let from = 0;
  for (const m of code.matchAll(access)) {
    if (m.index! < from) continue;
    const indices: string[] = [];
    let element = type;
    let end = m.index! + array.length;
    while (code[end] === "[") {
      const [index, close] = bracketed(code, end);
      indices.push(index);
      element = indexed(element);
      end = close + 1;
    }
    const store = /^\s*=(?!=)/.test(code.slice(end));
    if (store) end = code.indexOf(";", end) + 1;
    const replacement = edit({ indices, element, store });
    if (replacement === undefined) continue;
    out += code.slice(from, m.index) + replacement;
    from = end;
  }
  return out + code.slice(from);
}

/** The arrays of one address space (`storage, read` or `workgroup`) and their types. */
function declared(code: string, space: string): [string, string][] {
  const found = code.matchAll(new RegExp(`var<${space}>\\s+(\\w+)\\s*:\\s*(.+);`, "g"));
  return [...found].map((m) => [m[1], m[2].trim()]);
}

/**
 * A kernel's WGSL with parts left out, for timing what they cost (the result is wrong on
 * purpose). "global loads": every read of the input arrays A and B becomes a value made from
 * its own index (the index as a float), so the address arithmetic and bounds checks stay
 * and only the memory instruction goes; the entry point keeps both bindings with a phony
 * assignment. "barriers": every workgroupBarrier() is dropped. "workgroup stores": every store
 * to workgroup memory is dropped. "workgroup reads": every read of workgroup memory becomes a
 * value made from its indices, as the global loads did. Comments are dropped.
 */
export function ablatedSource(code: string, leftOut: readonly LeftOut[]): string {
  // Comments go first: an array named in one would be taken for an access.
  code = code.replace(/\/\/.*$/gm, "");
  if (leftOut.includes("global loads")) {
    for (const array of ["A", "B"]) {
      const type = declared(code, "storage,\\s*read").find(([name]) => name === array)?.[1];
      if (!type) throw new Error(`ablation: no read-only storage array ${array}`);
      let reads = 0;
      code = rewriteAccesses(code, array, type, ({ indices, element }) => {
        reads++;
        return standIn(element, indices);
      });
      if (!reads) throw new Error(`ablation: ${array} is never read`);
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
  const shared = declared(code, "workgroup");
  for (const part of ["workgroup stores", "workgroup reads"] as const) {
    if (!leftOut.includes(part)) continue;
    if (!shared.length) throw new Error("ablation: no workgroup memory");
    for (const [array, type] of shared) {
      code = rewriteAccesses(code, array, type, ({ indices, element, store }) => {
        if (store !== (part === "workgroup stores")) return undefined;
        return store ? "" : standIn(element, indices);
      });
    }
  }
  return code;
}
