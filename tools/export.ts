/**
 * `deno task export [--run FILE] [--out DIR]`: every chart of a run record as SVG, PNG (2x,
 * fonts embedded) and self-contained interactive HTML, named by chart, for blog posts, and each
 * step's concept figure (lib/notebook/figures/) as SVG and PNG, named concept_<step>.
 * Default record: the GPU record of the whole ladder in data/runs/ (see chooseRecord);
 * default folder: exports/ (git-ignored; the task may write only there, so pass another --out
 * with `deno run --allow-write=DIR tools/export.ts`). The folder keeps a list of the files the
 * export wrote (MANIFEST), and the next export into it removes those it does not write again.
 */
import { allCharts, sourceLabel } from "../lib/charts/mod.ts";
import { chartHtml, chartPng, chartSvg, svgToPng } from "../lib/render.ts";
import { UsageError } from "../lib/errors.ts";
import { ladderRecord, listRecords, loadRecord, type RunRecord, RUNS_DIR } from "../lib/record.ts";
import { KERNELS } from "../lib/registry.ts";
import { conceptFigure, conceptSteps } from "../lib/notebook/concept.ts";

/** The list of files an export wrote, kept in its folder so the next export can clear them. */
export const MANIFEST = ".export-files.json";

const USAGE = "Usage: deno task export [--run FILE] [--out DIR]";

/** Parsed flags. */
export interface ExportArgs {
  run?: string;
  out: string;
}

/** Parse `--run FILE` and `--out DIR` (also `--flag=value`); anything else is a UsageError. */
export function parseExportArgs(argv: readonly string[]): ExportArgs {
  const args: ExportArgs = { out: "exports" };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split(/=(.*)/s, 2);
    const value = () => {
      const v = inline ?? argv[++i];
      if (!v) throw new UsageError(`${flag} needs a value\n${USAGE}`);
      return v;
    };
    if (flag === "--run") args.run = value();
    else if (flag === "--out") args.out = value();
    else throw new UsageError(`unknown argument ${argv[i]}\n${USAGE}`);
  }
  return args;
}

/**
 * Check what the flags name before any work, as bench and fuzz do: the --run file exists, is a
 * file and holds a run record; the task may write to --out, which is not a file. Returns the
 * record named by --run (undefined without one); throws a one-line UsageError otherwise.
 */
export async function checkExportArgs(args: ExportArgs): Promise<RunRecord | undefined> {
  const out = await Deno.stat(args.out).catch(() => undefined);
  if (out && !out.isDirectory) {
    throw new UsageError(`export: --out ${args.out} is a file, not a folder`);
  }
  const write = await Deno.permissions.query({ name: "write", path: args.out });
  if (write.state !== "granted") {
    throw new UsageError(
      `export: --out ${args.out}: this task may write only under exports/; to write elsewhere run ` +
        `deno run --allow-read --allow-write=${args.out} tools/export.ts`,
    );
  }
  if (args.run === undefined) return undefined;
  const run = args.run;
  const stat = await Deno.stat(run).catch((e) => {
    throw new UsageError(
      e instanceof Deno.errors.NotFound
        ? `export: --run ${run}: no such file`
        : `export: --run ${run}: cannot be read (${(e as Error).message})`,
    );
  });
  if (stat.isDirectory) {
    throw new UsageError(`export: --run ${run} is a folder; name one record file in it`);
  }
  try {
    return await loadRecord(run);
  } catch (e) {
    const why = (e as Error).message.split("\n")[0].slice(0, 160);
    throw new UsageError(`export: --run ${run} is not a run record (${why})`);
  }
}

/** One file written per chart (or concept figure) and format. */
export interface ExportedFile {
  chart: string;
  format: "svg" | "png" | "html";
  path: string;
  bytes: number;
}

/**
 * A record the charts can be drawn from: it ran to the end and at least one kernel validated
 * (an all-failed run has nothing to chart).
 */
function isComplete(record: RunRecord): boolean {
  return record.complete !== false && record.results.some((r) => r.validated);
}

/**
 * The record to export when none is named: the GPU record the README and the notebooks show
 * for the whole ladder (`ladderRecord`), else the newest complete one (a software adapter's),
 * else the newest of all; `why` says which it is when it is not the first kind. Undefined when
 * the folder holds no record.
 */
export async function chooseRecord(
  dir: string | URL = RUNS_DIR,
): Promise<{ path: string; record: RunRecord; why?: string } | undefined> {
  const all = await listRecords(dir);
  const complete = all.filter((x) => isComplete(x.record));
  const gpu = ladderRecord(complete, KERNELS.filter((k) => !k.demo).map((k) => k.name));
  if (gpu) return gpu;
  const software = complete.at(-1);
  if (software) {
    return {
      ...software,
      why: "no complete record from a real GPU; using the newest complete record, from a " +
        "software adapter",
    };
  }
  const newest = all.at(-1);
  if (newest) {
    return {
      ...newest,
      why: "no complete record (every one stopped early or has no validated kernel); using " +
        "the newest, whose charts may be partial",
    };
  }
  return undefined;
}

/** Remove the files a previous export into `outDir` wrote that this one did not write again. */
export async function removeStale(outDir: string, written: string[]): Promise<string[]> {
  const manifest = `${outDir}/${MANIFEST}`;
  let previous: string[] = [];
  try {
    previous = JSON.parse(await Deno.readTextFile(manifest));
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  const keep = new Set(written);
  const removed: string[] = [];
  for (const name of previous) {
    // Only plain names: the manifest never sends a removal outside its folder.
    if (keep.has(name) || name.includes("/")) continue;
    await Deno.remove(`${outDir}/${name}`).catch(() => {});
    removed.push(name);
  }
  await Deno.writeTextFile(manifest, JSON.stringify(written, null, 2) + "\n");
  return removed;
}

/**
 * Render every chart of `record` into `outDir`, and with `concepts` every step's concept figure
 * at its default parameters, removing files an earlier export left there; returns the files and
 * the charts skipped.
 */
export async function exportCharts(record: RunRecord, outDir: string, concepts = false) {
  outDir = outDir.replace(/\/$/, "");
  await Deno.mkdir(outDir, { recursive: true });
  const { charts, skipped } = allCharts(record);
  const files: ExportedFile[] = [];
  const write = async (
    chart: string,
    format: ExportedFile["format"],
    data: string | Uint8Array,
  ) => {
    const path = `${outDir}/${chart}.${format}`;
    const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
    await Deno.writeFile(path, bytes);
    files.push({ chart, format, path, bytes: bytes.length });
  };
  for (const chart of charts) {
    const svg = await chartSvg(chart);
    await write(chart.name, "svg", svg);
    await write(chart.name, "png", await chartPng(chart));
    await write(
      chart.name,
      "html",
      await chartHtml(chart, `${chart.name}: ${sourceLabel(record)}`),
    );
  }
  for (const step of concepts ? conceptSteps() : []) {
    const { svg } = conceptFigure(step);
    await write(`concept_${step}`, "svg", svg);
    await write(`concept_${step}`, "png", await svgToPng(svg));
  }
  const stale = await removeStale(outDir, files.map((f) => f.path.slice(outDir.length + 1)));
  return { files, skipped, stale };
}

async function main(argv: readonly string[]): Promise<number> {
  let args: ExportArgs;
  let named: RunRecord | undefined;
  try {
    args = parseExportArgs(argv);
    named = await checkExportArgs(args);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    console.error(e.message);
    return 2;
  }
  const found = args.run && named
    ? { path: args.run, record: named, why: undefined }
    : await chooseRecord();
  if (!found) {
    console.error("no run record in data/runs/: run `deno task bench` first, or pass --run FILE");
    return 1;
  }
  if (found.why) console.error(`export: ${found.why}`);
  const how = args.run ? "named by --run" : found.why ? "the fallback above" : "the newest " +
    "complete GPU-host record in data/runs/";
  console.error(
    `export: record ${found.path} (${sourceLabel(found.record)}; ${how}) -> ${args.out}/`,
  );
  const { files, skipped, stale } = await exportCharts(found.record, args.out, true);
  for (const f of files) console.log(`${f.path}\t${f.bytes} bytes`);
  for (const s of skipped) console.error(`skipped ${s.name}: ${s.reason}`);
  if (stale.length) {
    console.error(
      `export: removed ${stale.length} files of an earlier export: ${stale.join(", ")}`,
    );
  }
  return files.length ? 0 : 1;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
