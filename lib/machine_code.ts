/**
 * The machine code a GPU driver made of a kernel, read from the committed disassembly in
 * data/driver/sass/<device>/ (NVIDIA's SASS, one `.sass` file per pipeline, its multiply-add loop
 * marked; `index.json` names each file's kernel and parameters). Each instruction of the loop gets
 * a role named for what it does in a matmul, from its opcode alone, so the loop's cost can be read
 * as "instructions per multiply-add" and split into the parts the lessons name.
 */
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
  if (/^(FFMA|HFMA2|DFMA)$/.test(base)) return "multiply-add";
  if (base === "LDS") return "read workgroup memory";
  if (base === "STS") return "store workgroup memory";
  if (base === "LDG") return "load global memory";
  if (base === "LDL" || base === "STL") return "local memory";
  if (base === "BAR") return "barrier";
  if (/^(VIMNMX|VIADDMNMX|IMNMX)$/.test(base)) return "index clamp";
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
  const path = new URL(entry.file, sassDir(device));
  const sass = await Deno.readTextFile(path).catch((e) => {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
    throw new Error(`${entry.file} is not unpacked (listings over 80 KB are in larger.tar.gz)`);
  });
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
