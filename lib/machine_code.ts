/**
 * The machine code a GPU driver made of a kernel, read from the committed disassembly in
 * data/driver/sass/<device>/ (NVIDIA's SASS, one `.sass` file per pipeline, its multiply-add loop
 * marked; `index.json` names each file's kernel and parameters). Each instruction of the loop gets
 * a role named for what it does in a matmul, from its opcode alone, so the loop's cost can be read
 * as "instructions per multiply-add" and split into the parts the lessons name.
 */
import zlib from "node:zlib";
import { readJsonIfPresent } from "./files.ts";

/** What an instruction does in the loop, judged by its opcode. */
export type Role =
  | "multiply-add"
  | "read workgroup memory"
  | "store workgroup memory"
  | "load global memory"
  | "local memory"
  | "barrier"
  | "index clamp"
  | "convert"
  | "other float math"
  | "loop test"
  | "branch"
  | "address or counter"
  | "register copy"
  | "other";

/** Roles in the order tables list them: the work first, then what serves it. */
export const ROLES: Role[] = [
  "multiply-add",
  "read workgroup memory",
  "store workgroup memory",
  "load global memory",
  "local memory",
  "barrier",
  "index clamp",
  "convert",
  "other float math",
  "address or counter",
  "loop test",
  "branch",
  "register copy",
  "other",
];

/** One instruction of a disassembly: its address, its text (without the `;`), its role. */
export interface Instruction {
  address: string;
  text: string;
  opcode: string;
  role: Role;
}

/**
 * The role of an instruction (its text with any predicate guard like `@P0` dropped), from its
 * opcode. Index clamps are WebGPU's bounds guards, which the driver compiles to integer minimums
 * (`VIMNMX`, or `VIADDMNMX` when an add is fused in); compares, selects and logic that writes a
 * predicate feed the loop's exit test.
 */
export function roleOf(instruction: string): Role {
  const [opcode, firstOperand = ""] = instruction.split(/[\s,]+/);
  const base = opcode.split(".")[0];
  // HFMA2.MMA of zeros plus a constant is how the driver sets a register, not arithmetic.
  if (base === "HFMA2" && /\s-RZ, RZ,/.test(instruction)) return "register copy";
  if (/^(FFMA|HFMA2|DFMA)$/.test(base)) return "multiply-add";
  if (base === "LDS") return "read workgroup memory";
  if (base === "STS") return "store workgroup memory";
  if (base === "LDG") return "load global memory";
  if (base === "LDL" || base === "STL") return "local memory";
  if (base === "BAR") return "barrier";
  if (/^(VIMNMX|VIADDMNMX|IMNMX)$/.test(base)) return "index clamp";
  // f16 widened to f32 (HADD2.F32) is a conversion, as F2F and the integer-float ones are.
  if (/^(F2F|I2F|F2I|F2FP)$/.test(base) || opcode.startsWith("HADD2.F32")) return "convert";
  if (/^(FADD|FMUL|FMNMX|FSEL|HADD2|HMUL2|HMNMX2)$/.test(base)) return "other float math";
  if (/^(BRA|BREAK|EXIT|BSYNC|BSSY)$/.test(base)) return "branch";
  if (/^U?(ISETP|SEL)$|^PLOP3$/.test(base)) return "loop test";
  if (/^U?(MOV)$/.test(base) || opcode.startsWith("IMAD.MOV")) return "register copy";
  if (/^U?LOP3$/.test(base)) return /^U?P/.test(firstOperand) ? "loop test" : "address or counter";
  if (/^U?(IMAD|IADD3|VIADD|SHF|LEA|IABS|IMUL)$/.test(base)) return "address or counter";
  return "other";
}

/** Parse one disassembly line (address comment, optional guard, instruction, `;`); undefined for others. */
export function parseLine(line: string): Instruction | undefined {
  const m = line.match(/^\s*\/\*([0-9a-f]+)\*\/\s+(.*?)\s*;\s*$/);
  if (!m) return undefined;
  const text = m[2];
  const unguarded = text.replace(/^@!?U?P\w+\s+/, "");
  return { address: m[1], text, opcode: unguarded.split(/\s+/)[0], role: roleOf(unguarded) };
}

/** The instructions between the `multiply-add loop starts` and `ends` markers of a disassembly. */
export function multiplyAddLoop(sass: string): Instruction[] {
  const lines = sass.split("\n");
  const start = lines.findIndex((l) => l.includes("multiply-add loop starts"));
  const end = lines.findIndex((l) => l.includes("multiply-add loop ends"));
  if (start < 0 || end < start) throw new Error("the disassembly marks no multiply-add loop");
  return lines.slice(start + 1, end).flatMap((l) => parseLine(l) ?? []);
}

/** Instructions per role, in ROLES order, leaving out roles with none. */
export function countRoles(loop: Instruction[]): Map<Role, number> {
  const counts = new Map<Role, number>();
  for (const role of ROLES) {
    const n = loop.filter((i) => i.role === role).length;
    if (n) counts.set(role, n);
  }
  return counts;
}

/** One pipeline of the committed index: its label, kernel, parameters and file. */
export interface SassEntry {
  label: string;
  kernel: string;
  params: Record<string, number>;
  file: string;
  multiplyAddLoop?: { instructions: number };
}

/** data/driver/sass/<device>/index.json: where and when the code was captured, and its files. */
export interface SassIndex {
  device: { description: string };
  commit: string;
  captured: string;
  kernels: SassEntry[];
}

/** A kernel's multiply-add loop as the driver compiled it, with where it came from. */
export interface MachineLoop {
  label: string;
  entry: SassEntry;
  index: SassIndex;
  loop: Instruction[];
  /** Multiply-add instructions per trip of the loop (an HFMA2, two f16 multiply-adds, counts once). */
  multiplyAdds: number;
}

const sassDir = (device: string) => new URL(`../data/driver/sass/${device}/`, import.meta.url);

/** The archive that holds the listings over 80 KB, packed to keep the repository small. */
const LARGER = "larger.tar.gz";

/** One file of a ustar archive (512-byte headers, each file padded to 512), or undefined. */
export function fileFromTar(tar: Uint8Array, name: string): Uint8Array | undefined {
  const text = (from: number, length: number) =>
    new TextDecoder().decode(tar.subarray(from, from + length)).replace(/\0.*$/s, "");
  for (let at = 0; at + 512 <= tar.length;) {
    const path = text(at, 100);
    if (!path) return undefined; // the archive's closing blocks
    const size = parseInt(text(at + 124, 12).trim(), 8);
    if (path.replace(/^\.\//, "") === name) return tar.slice(at + 512, at + 512 + size);
    at += 512 + Math.ceil(size / 512) * 512;
  }
  return undefined;
}

/** A listing's text: its own file, or the same name inside LARGER. */
async function readListing(device: string, file: string): Promise<string> {
  try {
    return await Deno.readTextFile(new URL(file, sassDir(device)));
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  const packed = await Deno.readFile(new URL(LARGER, sassDir(device))).catch(() => undefined);
  const bytes = packed && fileFromTar(new Uint8Array(zlib.gunzipSync(packed)), file);
  if (!bytes) throw new Error(`${file} is neither committed nor in ${LARGER}`);
  return new TextDecoder().decode(bytes);
}

/** The committed index for a device, or undefined when none is committed. */
export function loadSassIndex(device: string): Promise<SassIndex | undefined> {
  return readJsonIfPresent<SassIndex>(new URL("index.json", sassDir(device)));
}

/** Read one pipeline's loop (a label of the index: a step's name, or a name and its overrides). */
export async function loadMachineLoop(
  index: SassIndex,
  device: string,
  label: string,
): Promise<MachineLoop> {
  const entry = index.kernels.find((k) => k.label === label);
  if (!entry) throw new Error(`no machine code of ${label} is committed for ${device}`);
  const sass = await readListing(device, entry.file);
  const loop = multiplyAddLoop(sass);
  if (entry.multiplyAddLoop && entry.multiplyAddLoop.instructions !== loop.length) {
    throw new Error(
      `${entry.file}: the loop holds ${loop.length} instructions, the index says ` +
        `${entry.multiplyAddLoop.instructions}`,
    );
  }
  const multiplyAdds = loop.filter((i) => i.role === "multiply-add").length;
  return { label, entry, index, loop, multiplyAdds };
}
