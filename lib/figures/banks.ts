/**
 * Step 08: the workgroup-memory banks one subgroup's fragment read hits, under 07's mapping
 * (before) and 08's (after). The index arithmetic below is the kernels' own; FRAGMENT_SOURCE
 * quotes the WGSL lines it implements, and tests/figures_test.ts checks they are still there.
 */
import type { Params } from "../steps/spec.ts";
import { SUBGROUP } from "./access.ts";
import { type FigureContext, paramList, stepHeading } from "./context.ts";
import {
  COLOR,
  type ConceptFigure,
  Drawing,
  finish,
  heading,
  legend,
  MARGIN,
  WIDTH,
} from "./svg.ts";

/** Workgroup memory has 32 banks, each 4 bytes wide. */
export const BANKS = 32;

/**
 * The fragment reads modelled: each invocation reading two adjacent vec4s (07), the two halves
 * of the tile split between the invocations (08), and subgroup tiles (09).
 */
export type FragmentMapping = "adjacent_pairs" | "split_halves" | "warp_tiles";

/** The four vec4 reads of one k step: two A fragments (As) and two B fragments (Bs). */
export type Fragment = "a0" | "a1" | "b0" | "b1";

/** The WGSL lines (whitespace aside) that fragmentReads implements, per kernel. */
export const FRAGMENT_SOURCE: Record<FragmentMapping, string[]> = {
  adjacent_pairs: [
    "let tx = tid % (BN / 8u);",
    "let ty = tid / (BN / 8u);",
    "let a0 = As[p * (BM / 4u) + ty * 2u];",
    "let a1 = As[p * (BM / 4u) + ty * 2u + 1u];",
    "let b0 = Bs[p * (BN / 4u) + tx * 2u];",
    "let b1 = Bs[p * (BN / 4u) + tx * 2u + 1u];",
  ],
  split_halves: [
    "let tx = tid % (BN / 8u);",
    "let ty = tid / (BN / 8u);",
    "override AS: u32 = BM / 4u + PAD;",
    "let a0At = ty;",
    "let a1At = BM / 8u + ty;",
    "let b0At = tx;",
    "let b1At = BN / 8u + tx;",
    "let a0 = As[p * AS + a0At];",
    "let a1 = As[p * AS + a1At];",
    "let b0 = Bs[p * (BN / 4u) + b0At];",
    "let b1 = Bs[p * (BN / 4u) + b1At];",
  ],
  warp_tiles: [
    "override AS: u32 = BM / 4u + PAD;",
    "let warp = tid / 32u;",
    "let lane = tid % 32u;",
    "let wx = warp % (BN / 64u);",
    "let wy = warp / (BN / 64u);",
    "let lx = lane % 8u;",
    "let ly = lane / 8u;",
    "let warpTiles = WARP_TILES == 1u;",
    "let a0At = select(ty, wy * 8u + ly, warpTiles);",
    "let a1At = select(BM / 8u + ty, wy * 8u + 4u + ly, warpTiles);",
    "let b0At = select(tx, wx * 16u + lx, warpTiles);",
    "let b1At = select(BN / 8u + tx, wx * 16u + 8u + lx, warpTiles);",
    "let a0 = As[p * AS + a0At];",
    "let b0 = Bs[p * (BN / 4u) + b0At];",
  ],
};

/** The vec4 index into As or Bs of each fragment invocation `tid` reads at k step `p`. */
export function fragmentReads(
  mapping: FragmentMapping,
  tid: number,
  params: Params,
  p = 0,
): Record<Fragment, number> {
  const { BM, BN } = params;
  const div = (a: number, b: number) => Math.floor(a / b);
  if (mapping === "adjacent_pairs") {
    const tx = tid % (BN / 8), ty = div(tid, BN / 8);
    const a = p * (BM / 4) + ty * 2, b = p * (BN / 4) + tx * 2;
    return { a0: a, a1: a + 1, b0: b, b1: b + 1 };
  }
  const as = BM / 4 + (params.PAD ?? 0);
  let a0At, a1At, b0At, b1At;
  if (mapping === "split_halves") {
    const tx = tid % (BN / 8), ty = div(tid, BN / 8);
    [a0At, a1At, b0At, b1At] = [ty, BM / 8 + ty, tx, BN / 8 + tx];
  } else {
    const warp = div(tid, 32), lane = tid % 32;
    const wx = warp % (BN / 64), wy = div(warp, BN / 64);
    const lx = lane % 8, ly = div(lane, 8);
    [a0At, a1At, b0At, b1At] = [wy * 8 + ly, wy * 8 + 4 + ly, wx * 16 + lx, wx * 16 + 8 + lx];
  }
  return {
    a0: p * as + a0At,
    a1: p * as + a1At,
    b0: p * (BN / 4) + b0At,
    b1: p * (BN / 4) + b1At,
  };
}

/** One bank's share of an access: the distinct 4-byte words it serves, each with its readers. */
export interface BankLoad {
  words: { word: number; lanes: number[] }[];
}

/**
 * Lanes served together in a 16-byte read: a quarter-warp. The quarters are served one after
 * another, and readers of one word share it only within a quarter (measured on the H200 by
 * lib/banks.ts: every quarter asking for the same four vec4s in one bank takes 16 passes).
 */
export const PHASE_LANES = 8;

/** One quarter-warp's share of a read. */
export interface BankPhase {
  /** First and last lane. */
  lanes: [number, number];
  banks: BankLoad[];
  /** Passes this quarter takes: the most distinct words any one bank must serve. */
  wavefronts: number;
}

/** What one subgroup's read does to the banks, quarter by quarter. */
export interface BankAccess {
  phases: BankPhase[];
  /** Passes the whole read takes: the quarters' passes added up. 128 bytes per pass at best. */
  wavefronts: number;
}

/** The banks hit when lane i reads the vec4 at index `vec4s[i]` (words 4v .. 4v+3). */
export function bankAccess(vec4s: number[]): BankAccess {
  const phases: BankPhase[] = [];
  for (let start = 0; start < vec4s.length; start += PHASE_LANES) {
    const banks: BankLoad[] = Array.from({ length: BANKS }, () => ({ words: [] }));
    vec4s.slice(start, start + PHASE_LANES).forEach((v, i) => {
      for (let j = 0; j < 4; j++) {
        const word = 4 * v + j;
        const load = banks[word % BANKS];
        const hit = load.words.find((w) => w.word === word);
        if (hit) hit.lanes.push(start + i);
        else load.words.push({ word, lanes: [start + i] });
      }
    });
    for (const b of banks) b.words.sort((x, y) => x.word - y.word);
    const last = Math.min(vec4s.length, start + PHASE_LANES) - 1;
    phases.push({
      lanes: [start, last],
      banks,
      wavefronts: Math.max(...banks.map((b) => b.words.length)),
    });
  }
  return { phases, wavefronts: phases.reduce((sum, ph) => sum + ph.wavefronts, 0) };
}

/** The bank access of subgroup `group` (invocations 32·group … +31) reading `fragment`. */
export function subgroupBanks(
  mapping: FragmentMapping,
  fragment: Fragment,
  params: Params,
  group = 0,
): BankAccess {
  const tids = Array.from({ length: SUBGROUP }, (_, i) => group * SUBGROUP + i);
  return bankAccess(tids.map((t) => fragmentReads(mapping, t, params)[fragment]));
}

/** Fill of the i-th word a bank serves in one quarter's read: pass 1, 2, 3, 4 … */
const PASS = [COLOR.sky, COLOR.b, COLOR.other, COLOR.mark];

const passes = (a: BankAccess) => `${a.wavefronts} pass${a.wavefronts > 1 ? "es" : ""}`;

/** A bank grid for one read, a row per pass, quarter after quarter; returns the y below it. */
function bankPanel(d: Drawing, y: number, title: string, lines: string[], access: BankAccess) {
  d.text(MARGIN, y, title, { size: 13, bold: true });
  y += 17;
  for (const line of lines) {
    y = d.paragraph(MARGIN, y, line, WIDTH - 2 * MARGIN, { size: 11, fill: COLOR.muted });
  }
  y += 12;
  const x0 = MARGIN + 84, cw = (WIDTH - MARGIN - x0) / BANKS, ch = 22;
  for (let b = 0; b < BANKS; b++) {
    d.text(x0 + (b + 0.5) * cw, y, String(b), { size: 9, anchor: "middle", fill: COLOR.muted });
  }
  d.text(MARGIN, y, "bank", { size: 10, fill: COLOR.muted });
  y += 5;
  let row = 0;
  for (const phase of access.phases) {
    for (let pass = 0; pass < phase.wavefronts; pass++, row++) {
      const top = y + row * ch;
      d.text(MARGIN, top + 15, `lanes ${phase.lanes[0]}–${phase.lanes[1]}, ${pass + 1}`, {
        size: 10,
      });
      for (let b = 0; b < BANKS; b++) {
        const hit = phase.banks[b].words[pass];
        const x = x0 + b * cw;
        d.rect(x, top, cw, ch, {
          fill: hit ? PASS[pass % PASS.length] : COLOR.faint,
          stroke: "white",
          width: 1,
        });
        if (hit) {
          d.text(x + cw / 2, top + 15, String(hit.lanes[0]), { size: 9, anchor: "middle" });
        }
      }
    }
  }
  return y + row * ch + 12;
}

export function bankFigure(ctx: FigureContext): ConceptFigure {
  const p = ctx.params;
  const before = subgroupBanks("adjacent_pairs", "b0", p);
  const after = subgroupBanks("split_halves", "b0", p);
  const aBefore = subgroupBanks("adjacent_pairs", "a0", p);
  const aAfter = subgroupBanks("split_halves", "a0", p);
  const perRow = p.BN / 8;
  const d = new Drawing(WIDTH, 0);
  let y = heading(
    d,
    `${stepHeading(ctx.spec)}: the banks one subgroup's B read hits`,
    `${paramList(p, ["BM", "BN", "BK", "PAD"])}. Subgroup 0 (invocations 0–31: tx 0–` +
      `${Math.min(perRow, SUBGROUP) - 1}, ty 0–${Math.max(1, SUBGROUP / perRow) - 1}) reads ` +
      `its vec4 b0 at one k step. Each vec4 covers 4 consecutive 4-byte words, word w lives in ` +
      `bank w mod 32. A vec4 read is served a quarter-warp (8 lanes) at a time, one quarter ` +
      `after another; within a quarter a bank serves one distinct word per pass (readers of the ` +
      `same word share it).`,
  );
  y += 14;
  y = bankPanel(
    d,
    y,
    `Before (07): b0 = Bs[p·${p.BN / 4} + tx·2] → ${passes(before)}`,
    [
      `Neighbouring invocations read every other vec4 (32 bytes apart): words 8·tx … 8·tx+3, ` +
      `so in each quarter half the banks idle and the others serve ` +
      `${before.phases[0].wavefronts} words each.`,
    ],
    before,
  );
  y = bankPanel(
    d,
    y + 10,
    `After (08): b0 = Bs[p·${p.BN / 4} + tx] → ${passes(after)}`,
    [
      `Neighbouring invocations read neighbouring vec4s: words 4·tx … 4·tx+3, every bank ` +
      `busy in each quarter. The A read a0 takes ${passes(aBefore)} before and ` +
      `${passes(aAfter)} after: each quarter reads one vec4, but the quarters still take a ` +
      "pass each.",
    ],
    after,
  );
  y = legend(d, y, [
    ...PASS.slice(
      0,
      Math.max(...[before, after].flatMap((a) => a.phases.map((ph) => ph.wavefronts))),
    )
      .map((color, i) => ({ color, label: `word served in a quarter's pass ${i + 1}` })),
    { color: COLOR.faint, label: "bank idle" },
  ]);
  y = d.paragraph(
    MARGIN,
    y + 4,
    "Numbers in cells: the first invocation (tid) reading that word; invocations with the same " +
      "tx in another quarter read the same word again, in their own quarter's pass.",
    WIDTH - 2 * MARGIN,
    { size: 11, fill: COLOR.muted },
  );
  return finish(
    d,
    y,
    `${stepHeading(ctx.spec)}: at one k step subgroup 0 reads its B fragment b0 in ` +
      `${before.wavefronts} bank passes under 07's mapping (vec4s 32 bytes apart) and ` +
      `${after.wavefronts} under 08's (adjacent vec4s); ${paramList(p, ["BM", "BN"])}, 32 banks ` +
      "of 4 bytes, a quarter-warp at a time, a pass serving one distinct word per bank.",
  );
}
