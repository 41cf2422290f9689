/**
 * Notebook 01's bundled rungs taken apart on a GPU host's CPU (lab: not part of the product).
 * `packed` changes three things at once over `ikj` (a 2 x 4 tile of C kept in locals, A and B
 * copied into contiguous panels, the panels in float64) and `SIMD` several more; the controls
 * here add one change at a time:
 *   tile only     `ikj` -> the 2 x 4 tile, A and B read where they lie (B a row apart per k step)
 *   packed, f32   + the contiguous panels, kept in float32 (each load converted to double)
 *   packed        + the panels in float64: the ladder's rung
 *   SIMD, no FMA  the SIMD rung with a separate multiply and add in place of relaxed SIMD's madd
 *   SIMD          the ladder's rung
 * The whole ladder is timed too, with 10 calls a row (the recorded ladder has 1-2 for its slow
 * rows). Every row is validated against the float64 reference before it is timed.
 *   deno run -A lab/cpu_split.ts --out FILE [--sizes 512,1024] [--reps 10]
 */
import { cpuHost, measureCpu } from "../lib/cpu_bench.ts";
import { CPU_LADDER } from "../lib/cpu_ladder.ts";
import { blockedMatmul, type CpuMatmul } from "../lib/cpu.ts";
import { defaultBlocks, hasRelaxedSimd, simdMatmul } from "../lib/cpu_simd.ts";
import { CpuThreads } from "../lib/cpu_threads.ts";
import { checkOperands, type Shape } from "../lib/matrix.ts";
import { type CpuResult, currentCommit } from "../lib/record.ts";
import { flag } from "./flags.ts";
import { fmt, showTable, SPREAD_COLUMN, spreadCell } from "../lib/notebook/format.ts";

/** The packed rung's 2 x 4 tile of C in locals, with A and B read from the operands directly. */
function tileOnly(a: Float32Array, b: Float32Array, shape: Shape): Float32Array {
  checkOperands(shape, a, b);
  const { m, k, n } = shape;
  const c = new Float32Array(m * n);
  for (let i = 0; i < m; i += 2) {
    for (let j = 0; j < n; j += 4) {
      if (i + 2 > m || j + 4 > n) {
        for (let r = i; r < Math.min(i + 2, m); r++) {
          for (let col = j; col < Math.min(j + 4, n); col++) {
            let sum = 0;
            for (let p = 0; p < k; p++) sum += a[r * k + p] * b[p * n + col];
            c[r * n + col] = sum;
          }
        }
        continue;
      }
      let c00 = 0, c01 = 0, c02 = 0, c03 = 0;
      let c10 = 0, c11 = 0, c12 = 0, c13 = 0;
      const a0 = i * k, a1 = a0 + k;
      let bi = j;
      for (let p = 0; p < k; p++, bi += n) {
        const b0 = b[bi], b1 = b[bi + 1], b2 = b[bi + 2], b3 = b[bi + 3];
        const x0 = a[a0 + p], x1 = a[a1 + p];
        c00 += x0 * b0, c01 += x0 * b1, c02 += x0 * b2, c03 += x0 * b3;
        c10 += x1 * b0, c11 += x1 * b1, c12 += x1 * b2, c13 += x1 * b3;
      }
      const o = i * n + j;
      c[o] = c00, c[o + 1] = c01, c[o + 2] = c02, c[o + 3] = c03;
      c[o + n] = c10, c[o + n + 1] = c11, c[o + n + 2] = c12, c[o + n + 3] = c13;
    }
  }
  return c;
}

/**
 * The packed rung (one block spanning the matrix) with float32 panels: the same packing and
 * tile as lib/cpu.ts, each panel load converted to double in the loop instead of once.
 */
function packedF32(a: Float32Array, b: Float32Array, shape: Shape): Float32Array {
  checkOperands(shape, a, b);
  const { m, k, n } = shape;
  const mp = Math.ceil(m / 2) * 2, np = Math.ceil(n / 4) * 4;
  const aPack = new Float32Array(mp * k), bPack = new Float32Array(np * k);
  for (let s = 0; s < n; s += 4) {
    for (let p = 0; p < k; p++) {
      for (let r = 0; r < 4; r++) bPack[s * k + p * 4 + r] = s + r < n ? b[p * n + s + r] : 0;
    }
  }
  for (let q = 0; q < m; q += 2) {
    for (let p = 0; p < k; p++) {
      for (let r = 0; r < 2; r++) aPack[q * k + p * 2 + r] = q + r < m ? a[(q + r) * k + p] : 0;
    }
  }
  const c = new Float32Array(m * n);
  for (let q = 0; q < m; q += 2) {
    for (let s = 0; s < n; s += 4) {
      let c00 = 0, c01 = 0, c02 = 0, c03 = 0;
      let c10 = 0, c11 = 0, c12 = 0, c13 = 0;
      let ai = q * k, bi = s * k;
      const aEnd = ai + 2 * k;
      while (ai < aEnd) {
        const b0 = bPack[bi], b1 = bPack[bi + 1], b2 = bPack[bi + 2], b3 = bPack[bi + 3];
        const x0 = aPack[ai], x1 = aPack[ai + 1];
        c00 += x0 * b0, c01 += x0 * b1, c02 += x0 * b2, c03 += x0 * b3;
        c10 += x1 * b0, c11 += x1 * b1, c12 += x1 * b2, c13 += x1 * b3;
        ai += 2;
        bi += 4;
      }
      const tile = [c00, c01, c02, c03, c10, c11, c12, c13];
      for (let r = 0; r < Math.min(2, m - q); r++) {
        for (let col = 0; col < Math.min(4, n - s); col++) {
          c[(q + r) * n + s + col] = tile[r * 4 + col];
        }
      }
    }
  }
  return c;
}

const out = flag("--out");
if (!out) throw new Error("usage: cpu_split.ts --out FILE [--sizes 512,1024] [--reps 10]");
const sizes = (flag("--sizes") ?? "512,1024").split(",").map(Number);
const reps = Number(flag("--reps") ?? 10);
const host = cpuHost();
const pool = await CpuThreads.start();
const threads = pool.threads;
const rung = (id: string) => CPU_LADDER.find((s) => s.id === id)!;
const rows: (CpuResult & { control: boolean })[] = [];
const entries: [string, string, CpuMatmul, boolean][] = [
  ["naive-ijk", rung("naive-ijk").title, rung("naive-ijk").matmul()!, false],
  ["ikj", rung("ikj").title, rung("ikj").matmul()!, false],
  ["tile-only", "tile only: 2x4 tile, no panels", tileOnly, true],
  ["packed-f32", "packed, float32 panels", packedF32, true],
  ["packed", rung("packed").title, (a, b, s) => blockedMatmul(a, b, s, 0), false],
  ["blocked", rung("blocked").title, rung("blocked").matmul()!, false],
  [
    "simd-no-fma",
    "SIMD, separate multiply and add",
    (a, b, s) => simdMatmul(a, b, s, defaultBlocks(), false),
    true,
  ],
  ["simd", rung("simd").title, rung("simd").matmul()!, false],
  ["threads", rung("threads").title, rung("threads").matmul(pool)!, false],
];
try {
  for (const n of sizes) {
    for (const [id, impl, fn, control] of entries) {
      // Long enough for `reps` calls of the slowest rung (naive ijk: about 8 s a call at 1024).
      const r = await measureCpu(fn, { m: n, k: n, n }, { reps, budgetMs: 200_000 });
      rows.push({ id, impl, control, ...r });
      console.error(`${n} ${impl}: ${fmt(r.gflops)} GFLOP/s, ${r.reps} calls, rel ${r.relErr}`);
    }
  }
} finally {
  pool.close();
}
await showTable(
  ["N", "rung or control", "validated", "rel. error", "GFLOP/s", SPREAD_COLUMN],
  rows.map((r) => [r.n, r.impl, r.validated, r.relErr, r.gflops, spreadCell(r)]),
);
const record = {
  schema: 1,
  host: { ...host, threads, blocks: defaultBlocks(), relaxedSimd: hasRelaxedSimd() },
  date: new Date().toISOString(),
  commit: await currentCommit(),
  source: `lab/cpu_split.ts: measureCpu (lib/cpu_bench.ts), ${reps} timed calls a row, ` +
    "each row validated against float64 first",
  rows,
};
await Deno.writeTextFile(out, JSON.stringify(record, null, 1) + "\n");
