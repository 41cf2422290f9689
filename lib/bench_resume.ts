/**
 * `--resume PARTIAL`: finish a run that an earlier call of the same command left partial (a time
 * limit, a lost device), keeping the rows it validated instead of measuring them again. The
 * earlier call must have run the same flags at the same commit on the same device, so that its
 * rows are this run's own; a row it did not validate, or did not reach, runs now. The record
 * names the partial it resumed and how many rows it kept.
 */
import { UsageError } from "./errors.ts";
import { sameShape, type Shape } from "./matrix.ts";
import { type KernelResult, loadRecord, type PeerResult, type RunRecord } from "./record.ts";

/** Where a row belongs: the sizes and suite shapes, or the held-out section. */
export type Part = "main" | "heldout";

/** The validated rows of the partial record a run resumes. */
export interface Resumed {
  path: string;
  /** The earlier validated result of kernel `id` at `shape`, if any (counted as kept). */
  result(part: Part, id: string, shape: Shape): KernelResult | undefined;
  /** The same for a peer ("cublas", "tfjs-webgpu", "jaxjs-webgpu"). */
  peer(part: Part, peer: string, shape: Shape): PeerResult | undefined;
  /** The rows taken so far. */
  taken: Set<KernelResult | PeerResult>;
}

/** `argv` without its --resume flag and value. */
export function withoutResume(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--resume") i++;
    else if (!argv[i].startsWith("--resume=")) out.push(argv[i]);
  }
  return out;
}

/**
 * The partial record at `path`, checked against the run `record` is about to be (its commit,
 * device, argv and held-out seed); a UsageError says what differs.
 */
export async function resumeFrom(path: string, record: RunRecord, seed?: number): Promise<Resumed> {
  let earlier: RunRecord;
  try {
    earlier = await loadRecord(path);
  } catch (e) {
    throw new UsageError(`--resume ${path}: ${(e as Error).message}`);
  }
  const flags = (argv: readonly string[] = []) => withoutResume(argv).join(" ");
  const why = earlier.complete !== false
    ? "is a complete record: there is nothing to resume"
    : earlier.commit !== record.commit
    ? `ran at commit ${earlier.commit}, this run is at ${record.commit}`
    : earlier.device.description !== record.device.description
    ? `ran on ${earlier.device.description}, this run is on ${record.device.description}`
    : flags(earlier.argv) !== flags(record.argv)
    ? `ran other flags (${flags(earlier.argv)}): resume with the same ones`
    : earlier.heldout?.seed !== seed
    ? `drew its held-out shapes with seed ${earlier.heldout?.seed}: pass --seed`
    : undefined;
  if (why) throw new UsageError(`--resume ${path} ${why}`);
  const taken = new Set<KernelResult | PeerResult>();
  const take = <T extends KernelResult | PeerResult>(
    rows: T[] | undefined,
    shape: Shape,
    mine: (row: T) => boolean,
  ) => {
    const row = rows?.find((r) => r.validated && mine(r) && sameShape(r, shape));
    if (row) taken.add(row);
    return row;
  };
  const part = (p: Part) => p === "main" ? earlier : earlier.heldout;
  return {
    path,
    result: (p, id, shape) => take(part(p)?.results, shape, (r) => r.kernel === id),
    peer: (p, peer, shape) => take(part(p)?.peers, shape, (r) => r.peer === peer),
    taken,
  };
}
