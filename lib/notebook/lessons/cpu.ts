/**
 * The CPU side as notebook tables (measured by lib/cpu_bench.ts): the CPU ladder at one size,
 * as a recorded machine ran it beside the reader's run, and the cache-blocking sweep.
 */
import { peerLabel } from "../../charts/common.ts";
import type { CpuLadderBar, CpuSweepRow } from "../../charts/cpu.ts";
import type { CpuSuite, ThreadSweepRow } from "../../cpu_bench.ts";
import { CPU_LADDER } from "../../cpu_ladder.ts";
import type { Shape } from "../../matrix.ts";
import { type CpuMachine, loadRecord, type RunRecord, type SweepRow } from "../../record.ts";
import { type Cell, showBullets, showTable, spreadCell } from "../format.ts";

/** The committed CPU-only records (bench --cpu-only). */
const CPU_RECORDS_DIR = new URL("../../../data/cpu/", import.meta.url);

/** A CPU-only record from data/cpu/, by file name. */
export function loadCpuRecord(name: string): Promise<RunRecord> {
  return loadRecord(new URL(name, CPU_RECORDS_DIR));
}

/**
 * A block-size sweep's validated points, GFLOP/s from each point's fastest call (as the ladder
 * table counts them), for the sweep chart.
 */
export function sweepPoints(rows: readonly SweepRow[]): CpuSweepRow[] {
  return rows.filter((r) => r.validated && r.minMs > 0)
    .map((r) => ({ n: r.n, block: r.block, gflops: (2 * r.n ** 3) / r.minMs / 1e6 }));
}

/** Show a block-size sweep as a table (block 0 = one block spanning the matrix). */
export async function showSweep(rows: SweepRow[]): Promise<void> {
  await showTable(
    ["N", "block", "validated", "rel. error", "fastest ms", "GFLOP/s", "spread, calls"],
    rows.map((r) => [
      r.n,
      r.block,
      r.validated,
      r.relErr,
      r.minMs,
      r.validated && r.minMs > 0 ? (2 * r.n ** 3) / r.minMs / 1e6 : undefined,
      spreadCell(r),
    ]),
    "The packed kernel's block size, one core (block 0 = one block spanning the matrix); " +
      "GFLOP/s from each point's fastest call",
  );
}

/** A machine's cores and caches in one line ("48 KiB L1d and 2 MiB L2 per core, 300 MiB L3"). */
export function hostLine(machine: CpuMachine): string {
  const size = (bytes: number) =>
    bytes >= 1 << 20 ? `${+(bytes / (1 << 20)).toFixed(1)} MiB` : `${Math.round(bytes / 1024)} KiB`;
  const cores = `${machine.logicalCores} logical cores` +
    (machine.physicalCores ? ` on ${machine.physicalCores} physical` : "");
  const c = machine.caches;
  const caches = c
    ? `; ${size(c.l1d)} L1d and ${size(c.l2)} L2 per core, ${size(c.l3)} L3 (${c.source})`
    : "";
  return `${machine.model}, ${cores}${caches}`;
}

/**
 * The thread sweep as a table: each thread count's speed, its gain over one thread, and that
 * gain per thread (1 = every added thread as fast as the first).
 */
export async function showThreadSweep(
  rows: readonly ThreadSweepRow[],
  machine: CpuMachine,
): Promise<void> {
  const gflops = (r: ThreadSweepRow) => fastestGflops(r);
  const one = (n: number) => gflops(rows.find((r) => r.threads === 1 && r.n === n)!);
  await showTable(
    [
      "N",
      "threads",
      "validated",
      "rel. error",
      "fastest ms",
      "GFLOP/s",
      "x 1 thread",
      "per thread",
      "spread, calls",
    ],
    rows.map((r) => {
      const g = gflops(r), base = one(r.n);
      const gain = g && base ? g / base : undefined;
      return [
        r.n,
        r.threads,
        r.validated,
        r.relErr,
        r.minMs,
        g,
        gain,
        gain && gain / r.threads,
        spreadCell(r),
      ];
    }),
    `The threaded rung at each thread count, on ${
      hostLine(machine)
    }; GFLOP/s from each row's fastest call`,
  );
}

/** The CPU peers in the order the suite runs them. */
const CPU_PEERS = ["openblas-1t", "jaxjs-wasm", "openblas-all"];

/** One row of a CPU measurement, rung or peer, as the suite and the records store it. */
interface CpuRow extends Shape {
  validated: boolean;
  relErr: number;
  minMs?: number;
}

/**
 * GFLOP/s from a row's fastest call. A wall clock on a shared CPU only ever errs slow (another
 * process, a page fault, the collector), so the fastest of a few calls is the closest to what
 * the code itself costs.
 */
function fastestGflops(r: CpuRow | undefined): number | undefined {
  if (!r?.validated || !r.minMs) return undefined;
  return (2 * r.m * r.n * r.k) / r.minMs / 1e6;
}

/** Each rung's and peer's validated row at size n in a suite (a record's, or a live one). */
function rowsAt(suite: Partial<CpuSuite>, n: number) {
  const square = (r: Shape) => r.m === n && r.k === n && r.n === n;
  return {
    rungs: CPU_LADDER.map((step) => ({
      title: step.title,
      row: suite.cpu?.impls.find((r) => r.id === step.id && square(r)) as CpuRow | undefined,
    })),
    peers: CPU_PEERS.map((peer) => ({
      title: peerLabel(peer),
      row: suite.peers?.find((p) => p.peer === peer && square(p)) as CpuRow | undefined,
    })),
  };
}

/** A multiple of the rung before, where both ran. */
const gain = (now: number | undefined, before: number | undefined) =>
  now && before ? now / before : undefined;

/**
 * The CPU ladder at size n as the recorded machine ran it and as this one does: each rung's
 * GFLOP/s from its fastest call and its multiple of the rung before, then the CPU peers.
 */
export async function showCpuLadderRun(
  yours: CpuSuite,
  recorded: RunRecord,
  n: number,
): Promise<void> {
  const theirs = rowsAt({ cpu: recorded.cpu, peers: recorded.peers }, n);
  const mine = rowsAt(yours, n);
  const rows: Cell[][] = [];
  theirs.rungs.forEach(({ title, row }, i) => {
    const live = mine.rungs[i].row;
    const before = i > 0 ? { theirs: theirs.rungs[i - 1].row, mine: mine.rungs[i - 1].row } : {};
    rows.push([
      title,
      fastestGflops(row),
      gain(fastestGflops(row), fastestGflops(before.theirs)),
      live?.validated,
      live?.relErr,
      fastestGflops(live),
      gain(fastestGflops(live), fastestGflops(before.mine)),
      spreadCell(live),
    ]);
  });
  theirs.peers.forEach(({ title, row }, i) => {
    const live = mine.peers[i].row;
    rows.push([
      title,
      fastestGflops(row),
      undefined,
      live?.validated,
      live?.relErr,
      fastestGflops(live),
      undefined,
      spreadCell(live),
    ]);
  });
  const machine = (m: CpuMachine | undefined) =>
    m
      ? `${m.model} (${m.logicalCores} logical cores${
        m.physicalCores ? `, ${m.physicalCores} physical` : ""
      })`
      : "an unknown CPU";
  await showTable(
    [
      "rung / peer",
      "recorded GFLOP/s",
      "x rung before",
      "validated",
      "rel. error",
      "your GFLOP/s",
      "x rung before (yours)",
      "your spread, calls",
    ],
    rows,
    `N = ${n}, GFLOP/s from each row's fastest call: recorded on ${
      machine(recorded.cpu?.machine)
    }, yours on ${machine(yours.cpu.machine)}`,
  );
  if (yours.cpu.notes.length) await showBullets(yours.cpu.notes);
}

/** The bars of the CPU ladder chart at size n: every rung and peer, recorded and yours. */
export function cpuLadderBars(yours: CpuSuite, recorded: RunRecord, n: number): CpuLadderBar[] {
  const sources = [
    { source: `recorded (${recorded.cpu?.machine.model ?? "unknown CPU"})`, suite: recorded },
    { source: "yours", suite: yours },
  ];
  return sources.flatMap(({ source, suite }) => {
    const { rungs, peers } = rowsAt(suite, n);
    return [...rungs, ...peers].flatMap(({ title, row }) => {
      const gflops = fastestGflops(row);
      return gflops ? [{ impl: title, source, gflops }] : [];
    });
  });
}
