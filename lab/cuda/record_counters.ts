/**
 * Writes the record notebooks 02 and 03 read (lib/memory_counters.ts) from what
 * lab/cuda/run_counters.sh left on the GPU host: times.jsonl, ptxas.txt and ncu_<config>.csv.
 *
 *   deno run --allow-read --allow-write lab/cuda/record_counters.ts --out data/counters/SLUG.json \
 *     --driver VERSION --date ISO DIR@COMMIT [DIR@COMMIT ...]
 *
 * Each DIR is one run's output, COMMIT the commit its program was built from. Where several runs
 * hold a configuration, the last one named gives its time and, separately, its counters.
 */
import { metrics, required } from "./ncu_csv.ts";
import type { CounterConfig, CounterRecord, MemoryCounters } from "../../lib/memory_counters.ts";

const args = [...Deno.args];
const option = (name: string): string => {
  const i = args.indexOf(name);
  if (i < 0 || !args[i + 1]) throw new Error(`missing ${name}`);
  return args.splice(i, 2)[1];
};
const out = option("--out"), driver = option("--driver"), date = option("--date");
const runs = args.map((a) => {
  const [dir, commit] = a.split("@");
  if (!dir || !commit) throw new Error(`expected DIR@COMMIT, got ${a}`);
  return { dir, commit };
});
if (!runs.length) throw new Error("no run directories");

/** Registers per kernel instantiation from ptxas -v: product<COALESCED[, ROLLED]>. */
function registersByKernel(ptxas: string): Map<string, number> {
  const found = new Map<string, number>();
  let current = "";
  for (const line of ptxas.split("\n")) {
    const entry = line.match(/entry function '_Z7productI((?:Lb[01]E)+)E/);
    if (entry) {
      const bools = [...entry[1].matchAll(/Lb([01])E/g)].map((m) => m[1] === "1");
      current = `${bools[0]}/${bools[1] ?? false}`;
    }
    const used = line.match(/Used (\d+) registers/);
    if (used && current) found.set(current, Number(used[1]));
  }
  return found;
}

function countersOf(m: Map<string, number>): MemoryCounters {
  const get = (name: string) => required(m, name);
  return {
    l1HitPct: get("l1tex__t_sector_hit_rate.pct"),
    l2HitPct: get("lts__t_sector_hit_rate.pct"),
    dramBytesRead: get("dram__bytes_read.sum"),
    sectorsPerRequest: get("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum") /
      get("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"),
    l1BusyPct: get("l1tex__throughput.avg.pct_of_peak_sustained_active"),
    waitOnLoadPerIssue: get(
      "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio",
    ),
    waitOnQueuePerIssue: get(
      "smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio",
    ),
    ...l1PassesOf(m),
  };
}

/**
 * Per global load request, where the run read them: the L1 data stage's passes (wavefronts) and
 * bank conflicts, and the tag stage's set conflicts. These kernels read only global memory, so
 * the data stage's read wavefronts are all theirs.
 */
function l1PassesOf(
  m: Map<string, number>,
): Pick<
  MemoryCounters,
  "l1PassesPerRequest" | "l1BankConflictsPerRequest" | "l1SetConflictsPerRequest"
> {
  const requests = m.get("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum");
  const per = (name: string) => {
    const v = m.get(name);
    return v === undefined || !requests ? undefined : v / requests;
  };
  const passes = per("l1tex__data_pipe_lsu_wavefronts_mem_lgds_cmd_read.sum");
  const bank = per("l1tex__data_bank_conflicts_pipe_lsu_cmd_read.sum");
  const set = per("l1tex__t_set_conflicts_pipe_lsu_mem_global_op_ld.sum");
  return {
    ...(passes !== undefined ? { l1PassesPerRequest: passes } : {}),
    ...(bank !== undefined ? { l1BankConflictsPerRequest: bank } : {}),
    ...(set !== undefined ? { l1SetConflictsPerRequest: set } : {}),
  };
}

let device = "";
const configs = new Map<string, CounterConfig>();
for (const { dir, commit } of runs) {
  const registers = registersByKernel(await Deno.readTextFile(`${dir}/ptxas.txt`));
  for (const line of (await Deno.readTextFile(`${dir}/times.jsonl`)).split("\n")) {
    if (!line.trim()) continue;
    const t = JSON.parse(line);
    if (t.device) {
      device = t.device;
      continue;
    }
    const coalesced = t.config.startsWith("coalesce"), rolled = t.config.endsWith("_rolled");
    const before = configs.get(t.config);
    const row: CounterConfig = {
      config: t.config,
      kernel: coalesced ? "coalesce" : "naive",
      rolled,
      m: t.M,
      k: t.K,
      n: t.N,
      lda: t.lda,
      registers: registers.get(`${coalesced}/${rolled}`) ?? NaN,
      validated: t.validated,
      relErr: t.relErr,
      medianMs: t.medianMs,
      spread: t.spread,
      gflops: t.gflops,
      ...(before?.counters
        ? { countersCommit: before.countersCommit, counters: before.counters }
        : {}),
    };
    try {
      const csv = await Deno.readTextFile(`${dir}/ncu_${t.config}.csv`);
      row.counters = countersOf(metrics(csv));
      row.countersCommit = commit;
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    }
    configs.set(t.config, row);
  }
}

const record: CounterRecord = {
  schema: 1,
  device,
  driver,
  date,
  commit: runs.at(-1)!.commit,
  source: "lab/cuda/memory_counters.cu (the WGSL kernels ported to CUDA, validated, timed with " +
    "CUDA events), lab/cuda/run_counters.sh (Nsight Compute, clocks left alone)",
  configs: [...configs.values()],
};
await Deno.writeTextFile(out, JSON.stringify(record, null, 1) + "\n");
console.log(
  `${out}: ${record.configs.length} configurations, ${
    record.configs.filter((c) => c.counters).length
  } with counters`,
);
