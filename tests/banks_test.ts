/**
 * The bank probe (lib/banks.ts): its two ways of counting passes on the patterns whose counts are
 * known by hand, and every pattern's kernel validated on the software adapter (its timing there
 * means nothing; the GPU host's record has the numbers).
 */
import assert from "node:assert/strict";
import {
  BANK_PATTERNS,
  type BankPatternName,
  measureBankPasses,
  quarterWarpPasses,
  wholeWarpPasses,
} from "../lib/banks.ts";
import { acquireGpu } from "../lib/gpu.ts";

Deno.test("bank passes: a quarter-warp at a time and a whole warp at a time", () => {
  const counts: Record<BankPatternName, [number, number]> = {
    one_pass: [1, 1],
    f32_4_apart: [4, 4],
    f32_32_apart: [32, 32],
    b06: [4, 4],
    vec4_adjacent: [4, 4],
    b07: [8, 4],
    a07: [4, 1],
    b08: [4, 2],
    b09: [4, 1],
    quarters_apart: [4, 4],
    quarters_all: [16, 4],
  };
  for (const [name, [quarter, whole]] of Object.entries(counts)) {
    const p = BANK_PATTERNS[name as BankPatternName];
    assert.equal(quarterWarpPasses(p), quarter, `${name} by quarter-warps`);
    assert.equal(wholeWarpPasses(p), whole, `${name} by whole warps`);
  }
});

Deno.test("bank passes: every pattern's reads check against the CPU's", {
  sanitizeResources: false,
  sanitizeOps: false,
}, async () => {
  const gpu = await acquireGpu();
  const names = Object.keys(BANK_PATTERNS) as BankPatternName[];
  const results = await measureBankPasses(gpu, names, { reads: 16, workgroups: 2, budgetMs: 5 });
  assert.deepEqual(results.map((r) => r.name), names);
  for (const r of results) {
    assert.ok(r.validated, r.name);
    assert.ok(r.passes > 0 && Number.isFinite(r.passes), `${r.name}: ${r.passes}`);
  }
  const calibration = results.find((r) => r.name === "f32_32_apart")!;
  assert.ok(Math.abs(calibration.passes - 32) < 1e-9);
});
