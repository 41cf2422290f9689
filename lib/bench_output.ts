/**
 * Where a bench run's record goes, chosen so that a run never harms another record:
 *
 * - the default name carries the start time (`data/runs/<device>-<date>T<hhmm>.json`, then `-2`,
 *   `-3`...) and is reserved when the run starts, so it never lands on a committed record;
 * - `--out FILE` is checked before any work: a folder, a file tracked by git, or an existing file
 *   that is not a run record is refused, and so is a place this process may not write;
 * - progress goes to `<name>.partial.json`, rewritten (temporary file, then rename) after every
 *   result, so a run killed midway leaves a partial record under a name that says so;
 * - only a complete run takes the final name, and a run with failed results does not replace a
 *   complete record already there (it goes to `<name>.failed.json` instead).
 */
import { basename, dirname, resolve } from "node:path";
import { writeWhole } from "./files.ts";
import { UsageError } from "./errors.ts";
import { loadRecord, recordPath, recordToJson, type RunRecord } from "./record.ts";

/** The files one run may write. */
export interface RecordFiles {
  /** Where the complete record goes. */
  final: string;
  /** Progress while running; what an incomplete run leaves. */
  partial: string;
  /** A run with failures whose final name already holds a complete record. */
  failed: string;
}

/** The partial and failed names that go with a final record path. */
export function recordFiles(final: string): RecordFiles {
  const stem = final.replace(/\.json$/, "");
  return { final, partial: `${stem}.partial.json`, failed: `${stem}.failed.json` };
}

/**
 * Check an `--out` path before any work; throws a UsageError whose message is one line saying
 * why the path cannot take the record. An existing run record that git does not track may be
 * replaced (by a complete run only).
 */
export async function checkOut(out: string): Promise<RecordFiles> {
  const path = resolve(out);
  const dir = dirname(path);
  const refuse = (why: string): never => {
    throw new UsageError(`--out ${out}: ${why}`);
  };
  const permitted = async (name: "read" | "write") => {
    const { state } = await Deno.permissions.query({ name, path });
    if (state !== "granted") {
      refuse(
        `this run may not ${name} ${path} (deno task bench allows the project folder and ` +
          `/tmp); pick a path there, or add --allow-read=${dir} --allow-write=${dir} to the ` +
          `deno run flags`,
      );
    }
  };
  await permitted("read");
  let existing: Deno.FileInfo | undefined;
  try {
    existing = await Deno.stat(path);
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) refuse(firstLine(e));
  }
  if (existing?.isDirectory) refuse("is a folder; name a file, e.g. " + `${out}/run.json`);
  if (await trackedByGit(path)) {
    refuse("is tracked by git, and a run never changes a committed file; pick a new name");
  }
  if (existing) {
    try {
      await loadRecord(path);
    } catch {
      refuse("exists and is not a run record; pick a new name");
    }
  }
  // The run also writes its progress and, after a failed run, a .failed file beside it.
  const files = recordFiles(path);
  for (const sibling of [files.partial, files.failed]) {
    if (await trackedByGit(sibling)) refuse(`would write ${sibling}, which git tracks`);
    if (await exists(sibling)) {
      await loadRecord(sibling).catch(() =>
        refuse(`would overwrite ${sibling}, which is not a run record`)
      );
    }
  }
  await permitted("write");
  try {
    await Deno.mkdir(dir, { recursive: true });
    // Write access, proved by a file created and removed in the record's folder.
    const probe = `${dir}/.${basename(path)}.check-${Deno.pid}`;
    await Deno.writeTextFile(probe, "");
    await Deno.remove(probe);
  } catch (e) {
    refuse(`cannot write in ${dir}: ${firstLine(e)}`);
  }
  return files;
}

/**
 * The default record path for a run, `<dir>/<device>-<YYYY-MM-DD>T<hhmm>.json` (UTC start time),
 * with `-2`, `-3`... when that name or its partial is taken. The partial file is created here
 * (exclusively), which reserves the name against a second run starting the same minute.
 */
export async function reserveDefault(record: RunRecord, dir = "data/runs"): Promise<RecordFiles> {
  const time = record.date.slice(11, 16).replace(":", "");
  const base = recordPath(record, dir).replace(/\.json$/, `T${time}`);
  await Deno.mkdir(dir, { recursive: true });
  for (let n = 1;; n++) {
    const files = recordFiles(`${base}${n === 1 ? "" : `-${n}`}.json`);
    if (await exists(files.final) || await exists(files.failed)) continue;
    try {
      await Deno.writeTextFile(files.partial, recordToJson(record), { createNew: true });
      return files;
    } catch (e) {
      if (!(e instanceof Deno.errors.AlreadyExists)) throw e;
    }
  }
}

/** Save progress: the partial file, replaced whole (a reader never sees half a record). */
export async function saveProgress(record: RunRecord, files: RecordFiles): Promise<void> {
  await writeWhole(files.partial, recordToJson(record));
}

/**
 * Write the record under the name its outcome earns and remove the partial file (kept for an
 * incomplete run). Returns the path written and a line that says what went where.
 */
export async function finishRecord(
  record: RunRecord,
  files: RecordFiles,
  failed: boolean,
): Promise<{ path: string; message: string }> {
  if (record.complete !== true) {
    await saveProgress(record, files);
    return {
      path: files.partial,
      message: `partial record kept at ${files.partial} (the run is incomplete, so nothing ` +
        `was written to ${files.final})`,
    };
  }
  const path = failed && await holdsCompleteRecord(files.final) ? files.failed : files.final;
  await writeWhole(path, recordToJson(record));
  await Deno.remove(files.partial).catch(() => {});
  const kept = path === files.failed
    ? ` (results failed and ${files.final} already holds a complete record, left as it was)`
    : "";
  return { path, message: `record written to ${path}${kept}` };
}

/** True when git tracks this file (false outside a repository or without git). */
async function trackedByGit(path: string): Promise<boolean> {
  if (!await exists(dirname(path))) return false;
  try {
    const out = await new Deno.Command("git", {
      args: ["ls-files", "--error-unmatch", "--", basename(path)],
      cwd: dirname(path),
      stdout: "null",
      stderr: "null",
    }).output();
    return out.success;
  } catch {
    return false;
  }
}

async function holdsCompleteRecord(path: string): Promise<boolean> {
  try {
    return (await loadRecord(path)).complete === true;
  } catch {
    return false;
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return false;
    throw e;
  }
}

function firstLine(e: unknown): string {
  return (e instanceof Error ? e.message : String(e)).split("\n")[0];
}
