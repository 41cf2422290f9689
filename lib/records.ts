/**
 * Reading and writing run records (data/runs/<device-slug>-<date>.json): the only place the
 * bench, the results table, the charts and the notebooks get measured numbers from.
 */
import { deviceSlug } from "./gpu.ts";
import { RECORD_SCHEMA, type RunRecord } from "./record.ts";

/** Where records live, relative to the project root. */
export const RUNS_DIR = new URL("../data/runs/", import.meta.url);

/** The default record path for a device and run date: `<dir>/<device-slug>-<YYYY-MM-DD>.json`. */
export function recordPath(record: Pick<RunRecord, "device" | "date">, dir = "data/runs"): string {
  return `${dir.replace(/\/$/, "")}/${deviceSlug(record.device)}-${record.date.slice(0, 10)}.json`;
}

/**
 * JSON has no NaN: a failed result's relErr (NaN) is written as null and read back as NaN, so a
 * loaded record compares exactly like a live one.
 */
export function recordToJson(record: RunRecord): string {
  return JSON.stringify(
    record,
    (_k, v) => typeof v === "number" && !Number.isFinite(v) ? null : v,
    2,
  ) +
    "\n";
}

/** Parse a record's JSON text; throws if it is not a run record of a schema this code reads. */
export function recordFromJson(text: string, source = "record"): RunRecord {
  const record = JSON.parse(text) as RunRecord;
  if (
    typeof record !== "object" || record === null || typeof record.schema !== "number" ||
    !Array.isArray(record.results) || !Array.isArray(record.peers)
  ) {
    throw new Error(`${source} is not a gemm-ladder run record`);
  }
  if (record.schema > RECORD_SCHEMA) {
    throw new Error(
      `${source} has schema ${record.schema}; this code reads up to ${RECORD_SCHEMA}`,
    );
  }
  for (const r of [...record.results, ...record.peers]) {
    if (r.relErr === null) r.relErr = NaN;
  }
  record.notes ??= [];
  return record;
}

/** Write a record (creating its folder) and return the path written. */
export async function writeRecord(record: RunRecord, path: string | URL): Promise<string> {
  const file = path instanceof URL ? path.pathname : path;
  const slash = file.lastIndexOf("/");
  if (slash > 0) await Deno.mkdir(file.slice(0, slash), { recursive: true });
  await Deno.writeTextFile(file, recordToJson(record));
  return file;
}

/** Load one record from a file path or URL. */
export async function loadRecord(path: string | URL): Promise<RunRecord> {
  return recordFromJson(await Deno.readTextFile(path), String(path));
}

/** Every record in a folder (default data/runs/), oldest run first; other JSON files are skipped. */
export async function listRecords(
  dir: string | URL = RUNS_DIR,
): Promise<{ path: string; record: RunRecord }[]> {
  const base = (dir instanceof URL ? dir.pathname : dir).replace(/\/$/, "");
  const found: { path: string; record: RunRecord }[] = [];
  try {
    for await (const entry of Deno.readDir(base)) {
      if (!entry.isFile || !entry.name.endsWith(".json")) continue;
      const path = `${base}/${entry.name}`;
      try {
        found.push({ path, record: await loadRecord(path) });
      } catch {
        // Not a run record (e.g. saved tuning results): not ours to read.
      }
    }
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  return found.sort((a, b) => a.record.date.localeCompare(b.record.date));
}

/**
 * The newest record in a folder, by run date; `filter` narrows the choice (e.g. real GPUs only,
 * `(r) => !r.device.software`). Undefined when there is none.
 */
export async function newestRecord(
  dir: string | URL = RUNS_DIR,
  filter: (r: RunRecord) => boolean = () => true,
): Promise<{ path: string; record: RunRecord } | undefined> {
  return (await listRecords(dir)).filter((x) => filter(x.record)).at(-1);
}

/**
 * The commit that ran: $GEMM_COMMIT (copies without .git, such as the GPU host's), else
 * `git rev-parse HEAD` with "+dirty" when tracked files differ, else "unknown".
 */
export async function currentCommit(): Promise<string> {
  const fromEnv = envOrUndefined("GEMM_COMMIT");
  if (fromEnv) return fromEnv;
  try {
    const git = (...args: string[]) =>
      new Deno.Command("git", { args, stdout: "piped", stderr: "null" }).output();
    const head = await git("rev-parse", "HEAD");
    if (!head.success) return "unknown";
    const status = await git("status", "--porcelain", "--untracked-files=no");
    const sha = new TextDecoder().decode(head.stdout).trim();
    const dirty = status.success && new TextDecoder().decode(status.stdout).trim() !== "";
    return dirty ? `${sha}+dirty` : sha;
  } catch {
    // No git binary, or no --allow-run=git.
    return "unknown";
  }
}

/** An environment variable, or undefined when unset or when env access is not permitted. */
export function envOrUndefined(name: string): string | undefined {
  try {
    return Deno.env.get(name) || undefined;
  } catch {
    return undefined;
  }
}
