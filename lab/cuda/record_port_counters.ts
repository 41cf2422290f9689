/**
 * Nsight Compute's counts for lab/cuda/port_11.cu's kernels, one CSV per variant (written by
 * lab/cuda/run_port_counters.sh), as one record: per variant the time of the profiled launch,
 * warp instructions issued per warp-wide FMA, and the stall reasons (cycles a warp waited, per
 * instruction issued), by reason, with the registers and achieved occupancy; and the port's own
 * validated times (port.txt, beside cuBLAS). For notebook 12: what index clamps cost in issued
 * instructions and in waiting; for 10: what each of its controls waits on. On the CUDA port,
 * where Nsight can count (WebGPU cannot).
 *
 *   deno run --allow-read --allow-write lab/cuda/record_port_counters.ts --out FILE \
 *     --device NAME --driver VERSION --date ISO --commit SHA DIR
 */
import { metrics, required } from "./ncu_csv.ts";

const option = (name: string) => {
  const i = Deno.args.indexOf(name);
  if (i < 0 || !Deno.args[i + 1]) {
    throw new Error(
      "usage: record_port_counters.ts --out FILE --device NAME --driver V --date ISO " +
        "--commit SHA DIR",
    );
  }
  return Deno.args[i + 1];
};
const [out, device, driver, date, commit] = ["--out", "--device", "--driver", "--date", "--commit"]
  .map(option);
const dir = Deno.args.at(-1)!;

const STALL = /^smsp__average_warps_issue_stalled_(\w+)_per_issue_active\.ratio$/;
const variants = [];
for await (const entry of Deno.readDir(dir)) {
  const file = entry.name.match(/^ncu_(.+)\.csv$/);
  if (!file) continue;
  const m = metrics(await Deno.readTextFile(`${dir}/${entry.name}`));
  const get = (name: string) => required(m, name, entry.name);
  const ffmaThreads = get("sm__sass_thread_inst_executed_op_ffma_pred_on.sum");
  variants.push({
    variant: file[1],
    durationMs: get("gpu__time_duration.sum") / 1e6,
    warpInstructions: get("smsp__inst_executed.sum"),
    ffmaThreadInstructions: ffmaThreads,
    instructionsPerFma: get("smsp__inst_executed.sum") / (ffmaThreads / 32),
    registers: m.get("launch__registers_per_thread"),
    achievedOccupancyPct: m.get("sm__warps_active.avg.pct_of_peak_sustained_active"),
    stallsPerIssue: Object.fromEntries(
      [...m].flatMap(([name, v]) => {
        const reason = name.match(STALL);
        return reason ? [[reason[1], v]] : [];
      }),
    ),
  });
}
variants.sort((a, b) => a.variant.localeCompare(b.variant));

// The port's own lines: "<label>  <ms> ms  <GFLOP/s> GFLOP/s  <ratio> cuBLAS  err <e> ...".
const LINE = /^(.+?)\s+([\d.]+) ms\s+(\d+) GFLOP\/s\s+([\d.]+) cuBLAS\s+(?:err )?(\S+)/;
const timed = (await Deno.readTextFile(`${dir}/port.txt`).catch(() => "")).split("\n")
  .flatMap((line) => {
    const t = line.match(LINE);
    return t
      ? [{
        label: t[1].trim(),
        medianMs: Number(t[2]),
        gflops: Number(t[3]),
        ofCublas: Number(t[4]),
        relErr: Number(t[5]),
      }]
      : [];
  });
const record = {
  schema: 1,
  device,
  driver,
  date,
  commit,
  source: "lab/cuda/port_11.cu (nvcc -O3 -arch=sm_90) at 4096, one launch per variant after 20 " +
    "warm-up launches, profiled by Nsight Compute (lab/cuda/run_port_counters.sh, clocks left " +
    "alone); timed: the port's medians of 50 launches, each variant validated (sampled float64)",
  variants,
  timed,
};
await Deno.writeTextFile(out, JSON.stringify(record, null, 1) + "\n");
console.log(`${out}: ${variants.length} variants`);
