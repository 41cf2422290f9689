/**
 * Reads a `spirv-dis --raw-id` disassembly of a naga compute module and counts what naga added:
 * bounds clamps (GLSL.std.450 UMin on access-chain indices), loops and their hidden counters.
 * Assumes naga's shape of output: structured loops laid out header .. merge, one entry point.
 */
import type { ClampCounts, NagaKernelReport } from "../../lib/naga.ts";

interface Inst {
  line: number;
  id?: string;
  op: string;
  args: string[];
  text: string;
}

interface Loop {
  header: number;
  merge: number;
}

const U32_MAX = "4294967295";

function parse(asm: string): Inst[] {
  const out: Inst[] = [];
  for (const raw of asm.split("\n")) {
    const text = raw.trim();
    if (!text || text.startsWith(";")) continue;
    const m = text.match(/^(?:(%\w+) = )?(Op\w+)\s*(.*)$/);
    if (!m) continue;
    out.push({ line: out.length, id: m[1], op: m[2], args: m[3].split(/\s+/), text });
  }
  return out;
}

function emptyCounts(): ClampCounts {
  return { total: 0, workgroupElement: 0, workgroupLane: 0, storage: 0 };
}

export interface KernelInput {
  kernel: string;
  variant: string;
  params: Record<string, number>;
  /** SHA-256 of the WGSL compiled and its override constants (lab/naga/kernels.ts). */
  sourceSha256: string;
  spirvWords: number;
  hotLoopWhat: string;
  kStepsPerTrip: number;
  /** The WGSL of the first fragment read in the hot loop, put above its SPIR-V. */
  fragmentWgsl: string;
}

export function analyse(asm: string, input: KernelInput): NagaKernelReport {
  const insts = parse(asm);
  const def = new Map(insts.filter((i) => i.id).map((i) => [i.id!, i]));
  const glsl = insts.find((i) => i.op === "OpExtInstImport" && i.args[0] === '"GLSL.std.450"')?.id;
  const entry = insts.find((i) => i.op === "OpEntryPoint")!.args[1];

  // Loops of the entry point: header label .. merge label.
  const mainStart = insts.findIndex((i) => i.op === "OpFunction" && i.id === entry);
  const mainEnd = insts.findIndex((i, n) => n > mainStart && i.op === "OpFunctionEnd");
  const labelLine = (id: string) => def.get(id)!.line;
  const loops: Loop[] = [];
  for (const i of insts) {
    if (i.op !== "OpLoopMerge") continue;
    let header = i.line;
    while (insts[header].op !== "OpLabel") header--;
    loops.push({ header, merge: labelLine(i.args[0]) });
  }
  const inside = (l: Loop, line: number) => line > l.header && line < l.merge;
  const mainLoops = loops.filter((l) => l.header > mainStart && l.header < mainEnd);
  // The hot loop: an innermost loop of main (the largest, if there are several).
  const innermost = mainLoops.filter((l) => !mainLoops.some((o) => o !== l && inside(l, o.header)));
  const hot = innermost.sort((a, b) => (b.merge - b.header) - (a.merge - a.header))[0];

  // naga's loop bound: a Function vec2<u32> starting at (u32 max, u32 max), counted down.
  const maxComposites = new Set(
    insts.filter((i) =>
      i.op === "OpConstantComposite" &&
      i.args.slice(1).every((a) => def.get(a)?.args[1] === U32_MAX)
    ).map((i) => i.id!),
  );
  const counters = new Set(
    insts.filter((i) => i.op === "OpVariable" && maxComposites.has(i.args[2])).map((i) => i.id!),
  );
  const hasCounter = (l: Loop) =>
    insts.slice(l.header, l.header + 8).some((i) => i.op === "OpLoad" && counters.has(i.args[1]));
  const loopsWithCounter = loops.filter(hasCounter).length;

  // What each access-chain index selects: walk the pointee type along the indices.
  // Every pointer's result type is an OpTypePointer: [storage class, pointee type].
  const pointerType = (base: string) => def.get(def.get(base)!.args[0])!;
  const kind = new Map<string, "workgroupElement" | "workgroupLane" | "storage">();
  for (const i of insts) {
    if (i.op !== "OpAccessChain") continue;
    const [, base, ...indices] = i.args;
    const storage = pointerType(base).args[0];
    let type = pointerType(base).args[1];
    for (const index of indices) {
      const t = def.get(type)!;
      const isVector = t.op === "OpTypeVector";
      const umin = def.get(index);
      if (umin?.op === "OpExtInst" && umin.args[1] === glsl && umin.args[2] === "UMin") {
        kind.set(
          index,
          storage === "Workgroup" ? (isVector ? "workgroupLane" : "workgroupElement") : "storage",
        );
      }
      type = t.op === "OpTypeStruct" ? t.args[Number(def.get(index)!.args[1])] : t.args[0];
    }
  }

  // Blocks behind a branch on a constant (naga keeps `if (TN == 16u)` when TN is 8): the
  // untaken side, from its label to the selection's merge label.
  const dead: Loop[] = [];
  for (const i of insts) {
    if (i.op !== "OpBranchConditional") continue;
    const cond = def.get(i.args[0])?.op;
    if (cond !== "OpConstantFalse" && cond !== "OpConstantTrue") continue;
    const untaken = i.args[cond === "OpConstantFalse" ? 1 : 2];
    const merge = insts[i.line - 1].args[0];
    if (untaken !== merge) dead.push({ header: labelLine(untaken) - 1, merge: labelLine(merge) });
  }
  const isDead = (line: number) => dead.some((d) => inside(d, line));

  // A value the loop cannot change: a constant, a value from before the loop, or pure arithmetic
  // on such values (loads and calls inside the loop count as changing).
  const PURE = new Set([
    "OpIAdd",
    "OpISub",
    "OpIMul",
    "OpUDiv",
    "OpUMod",
    "OpShiftLeftLogical",
    "OpShiftRightLogical",
    "OpBitwiseAnd",
    "OpBitwiseOr",
    "OpExtInst",
    "OpCompositeExtract",
    "OpSelect",
    "OpIEqual",
    "OpULessThan",
    "OpLogicalAnd",
    "OpBitcast",
  ]);
  const invariantMemo = new Map<string, boolean>();
  const isInvariant = (id: string): boolean => {
    const d = def.get(id);
    if (!d || !inside(hot, d.line)) return true;
    if (!invariantMemo.has(id)) {
      invariantMemo.set(id, false);
      const operands = d.op === "OpExtInst" ? d.args.slice(3) : d.args.slice(1);
      invariantMemo.set(
        id,
        PURE.has(d.op) && operands.every((o) => !o.startsWith("%") || isInvariant(o)),
      );
    }
    return invariantMemo.get(id)!;
  };

  const module = emptyCounts(), inLoop = emptyCounts();
  let invariant = 0, deadInLoop = 0;
  const distinct = new Set<string>(), distinctVariant = new Set<string>();
  for (const [id, k] of kind) {
    const line = def.get(id)!.line;
    if (isDead(line)) {
      if (inside(hot, line)) deadInLoop++;
      continue;
    }
    module.total++, module[k]++;
    if (!inside(hot, line)) continue;
    inLoop.total++, inLoop[k]++;
    const operands = def.get(id)!.args.slice(3);
    distinct.add(operands.join(" "));
    if (operands.every(isInvariant)) invariant++;
    else distinctVariant.add(operands.join(" "));
  }

  const body = insts.slice(hot.header, hot.merge).filter((i) => !isDead(i.line));
  const calls = body.filter((i) => i.op === "OpFunctionCall").length;
  // naga's guard on integer division: a helper that divides by `select(d, 1, d == 0)`.
  const guards = new Set(
    insts.filter((i) => i.op === "OpFunction").map((f) => f.line).filter((n) =>
      insts[n + 3]?.op === "OpLabel" && insts[n + 4]?.op === "OpIEqual" &&
      insts[n + 5]?.op === "OpSelect" && ["OpUDiv", "OpUMod"].includes(insts[n + 6]?.op)
    ).map((n) => insts[n].id!),
  );
  const guardCalls = (lines: Inst[]) =>
    lines.filter((i) => i.op === "OpFunctionCall" && guards.has(i.args[1])).length;

  // Excerpts: the first reachable load of a workgroup array in the hot loop with a clamped
  // index, and the lines in the loop that compute its indices.
  const isClampedChain = (i: Inst) =>
    i.op === "OpAccessChain" && !isDead(i.line) &&
    pointerType(i.args[1]).args[0] === "Workgroup" &&
    i.args.slice(2).some((a) => kind.get(a) === "workgroupElement");
  const chain = body.find((i) =>
    isClampedChain(i) &&
    insts.some((l) => l.op === "OpLoad" && l.args[1] === i.id && l.line > i.line)
  )!;
  const load = insts.find((i) =>
    i.line > chain.line && i.op === "OpLoad" && i.args[1] === chain.id
  )!;
  const clamp = def.get(chain.args.slice(2).find((a) => kind.get(a) === "workgroupElement")!)!;
  const needed = new Set(chain.args.slice(2));
  const picked: Inst[] = [];
  for (let n = chain.line - 1; n > chain.line - 14 && inside(hot, n); n--) {
    const i = insts[n];
    if (i.id && needed.has(i.id)) {
      picked.unshift(i);
      for (const a of i.args) needed.add(a);
    }
  }
  const fragment = [...picked, chain, load];
  const counterLoop = hot;
  const counterStore = insts.findIndex((i, n) =>
    n > counterLoop.header && i.op === "OpStore" && counters.has(i.args[0])
  );
  const counterLines = insts.slice(counterLoop.header, counterStore + 1);
  const counterVar = def.get(counterLines.find((i) => i.op === "OpLoad")!.args[1])!;
  const clampedIndex = def.get(clamp.args[3])!;
  const indexOutside = !inside(hot, clampedIndex.line);

  return {
    kernel: input.kernel,
    variant: input.variant,
    params: input.params,
    sourceSha256: input.sourceSha256,
    spirvWords: input.spirvWords,
    loops: loops.length,
    loopsWithCounter,
    divisionGuards: {
      functions: guards.size,
      calls: guardCalls(insts.filter((i) => !isDead(i.line))),
      callsInHotLoop: guardCalls(body),
    },
    clamps: {
      deadBranchInHotLoop: deadInLoop,
      module,
      hotLoop: inLoop,
      hotLoopInvariant: invariant,
      hotLoopDistinct: distinct.size,
    },
    hotLoop: {
      what: input.hotLoopWhat,
      kStepsPerTrip: input.kStepsPerTrip,
      instructions: body.length,
      instructionsPerKStep: Math.round(body.length / input.kStepsPerTrip),
      clampsPerKStep: inLoop.total / input.kStepsPerTrip,
      loopVariantClampsPerKStep: (inLoop.total - invariant) / input.kStepsPerTrip,
      distinctClampsPerKStep: distinct.size / input.kStepsPerTrip,
      distinctLoopVariantClampsPerKStep: distinctVariant.size / input.kStepsPerTrip,
      counterUpdatesPerKStep: (hasCounter(hot) ? 1 : 0) / input.kStepsPerTrip,
      calls,
    },
    excerpts: {
      fragmentRead: `; ${input.fragmentWgsl}\n${annotate(fragment, def)}`,
      loopCounter: `; naga's counter of the hot loop: exits when it reaches (0, 0)\n${
        annotate([counterVar, ...counterLines], def)
      }`,
      ...(indexOutside
        ? {
          clampedIndexDefinition: `; ${clampedIndex.id} is computed before the loop header; ${
            distinctUses(clamp, kind, def, hot, inside)
          } clamp(s) in the loop repeat UMin ${clamp.args.slice(3).join(" ")}\n${
            annotate([clampedIndex], def)
          }`,
        }
        : {}),
    },
  };
}

/** How many hot-loop clamps have the same operands as this one. */
function distinctUses(
  clamp: Inst,
  kind: Map<string, unknown>,
  def: Map<string, Inst>,
  hot: Loop,
  inside: (l: Loop, line: number) => boolean,
): number {
  const key = clamp.args.slice(3).join(" ");
  return [...kind.keys()].map((id) => def.get(id)!).filter((u) =>
    inside(hot, u.line) && u.args.slice(3).join(" ") === key
  ).length;
}

/** The lines, then a comment naming each constant and variable they use. */
function annotate(lines: Inst[], def: Map<string, Inst>): string {
  const notes = new Map<string, string>();
  for (const i of lines) {
    for (const a of i.args) {
      const d = def.get(a);
      if (!d || notes.has(a)) continue;
      if (d.op === "OpConstant") notes.set(a, `${a} = ${d.args[1]}`);
      if (d.op === "OpConstantComposite") {
        notes.set(a, `${a} = (${d.args.slice(1).map((c) => def.get(c)?.args[1]).join(", ")})`);
      }
      if (d.op === "OpVariable") {
        notes.set(a, `${a} = ${d.args[1]} ${describeType(def.get(d.args[0])!.args[1], def)}`);
      }
    }
  }
  const body = lines.map((i) => i.text).join("\n");
  return notes.size ? `${body}\n; ${[...notes.values()].join(", ")}` : body;
}

function describeType(id: string, def: Map<string, Inst>): string {
  const t = def.get(id)!;
  if (t.op === "OpTypeArray") {
    return `array<${describeType(t.args[0], def)}, ${def.get(t.args[1])!.args[1]}>`;
  }
  if (t.op === "OpTypeVector") return `vec${t.args[1]}<${describeType(t.args[0], def)}>`;
  if (t.op === "OpTypeFloat") return `f${t.args[0]}`;
  if (t.op === "OpTypeInt") return `${t.args[1] === "0" ? "u" : "i"}${t.args[0]}`;
  if (t.op === "OpTypeBool") return "bool";
  return t.op.replace("OpType", "").toLowerCase();
}
