/**
 * Device probe (lab: not part of the product): the banks' passes per warp read for the read
 * patterns of steps 06-09 (lib/banks.ts measures them; notebooks 06 to 09 show them live). Runs
 * every pattern and writes DIR/probe.json; prints one line per pattern. --quick: the software
 * adapter's sizes.
 *
 *   deno run -A lab/probe_banks.ts --out DIR [--quick]
 */
import { BANK_PATTERNS, type BankPatternName, measureBankPasses } from "../lib/banks.ts";
import { acquireGpu } from "../lib/gpu.ts";
import { currentCommit } from "../lib/record.ts";
import { probeRecord } from "./probe_record.ts";

const args = Deno.args;
const outDir = args.includes("--out") ? args[args.indexOf("--out") + 1] : "/tmp/probe";
await Deno.mkdir(outDir, { recursive: true });
const gpu = await acquireGpu();
const started = new Date().toISOString();
const commit = await currentCommit();
const { rows, save } = probeRecord<Record<string, unknown>>(`${outDir}/probe.json`, {
  device: gpu.summary,
  started,
  commit,
});
console.error(`device: ${gpu.summary.description}, ${started}, commit ${commit}`);
const names = Object.keys(BANK_PATTERNS) as BankPatternName[];
const quick = args.includes("--quick") ? { reads: 64, workgroups: 8, budgetMs: 20 } : {};
for (const r of await measureBankPasses(gpu, names, quick)) {
  const { medianMs, minMs, maxMs, reps } = r.timing;
  rows.push({
    name: r.name,
    label: r.pattern.label,
    where: r.pattern.where,
    validated: r.validated,
    quarterWarp: r.quarterWarp,
    wholeWarp: r.wholeWarp,
    passes: r.passes,
    medianMs,
    minMs,
    maxMs,
    reps,
  });
  console.log(
    `${r.pattern.label.padEnd(52)} ${r.validated ? "ok" : "BAD"} ${medianMs.toFixed(3)} ms ` +
      `${r.passes.toFixed(2)} passes (quarter-warps ${r.quarterWarp}, whole warp ${r.wholeWarp})`,
  );
}
save();
