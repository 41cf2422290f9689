/**
 * `deno task export [--run FILE] [--out DIR]`: every chart of a run record as SVG, PNG (2x,
 * fonts embedded) and self-contained interactive HTML, named by chart, for blog posts.
 * Default record: the newest in data/runs/; default folder: exports/ (git-ignored; the task may
 * write only there, so pass another --out with `deno run --allow-write=DIR tools/export.ts`).
 */
import { allCharts, chartHtml, chartPng, chartSvg, sourceLabel } from "../lib/charts/mod.ts";
import { UsageError } from "../lib/errors.ts";
import { loadRecord, newestRecord } from "../lib/records.ts";
import type { RunRecord } from "../lib/record.ts";

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

/** One file written per chart and format. */
export interface ExportedFile {
  chart: string;
  format: "svg" | "png" | "html";
  path: string;
  bytes: number;
}

/** Render every chart of `record` into `outDir`; returns the files and the charts skipped. */
export async function exportCharts(record: RunRecord, outDir: string) {
  await Deno.mkdir(outDir, { recursive: true });
  const { charts, skipped } = allCharts(record);
  const files: ExportedFile[] = [];
  const write = async (
    chart: string,
    format: ExportedFile["format"],
    data: string | Uint8Array,
  ) => {
    const path = `${outDir.replace(/\/$/, "")}/${chart}.${format}`;
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
  return { files, skipped };
}

async function main(argv: readonly string[]): Promise<number> {
  let args: ExportArgs;
  try {
    args = parseExportArgs(argv);
  } catch (e) {
    console.error((e as Error).message);
    return 2;
  }
  const found = args.run
    ? { path: args.run, record: await loadRecord(args.run) }
    : await newestRecord();
  if (!found) {
    console.error("no run record in data/runs/: run `deno task bench` first, or pass --run FILE");
    return 1;
  }
  console.error(`export: ${found.path} (${sourceLabel(found.record)}) -> ${args.out}/`);
  const { files, skipped } = await exportCharts(found.record, args.out);
  for (const f of files) console.log(`${f.path}\t${f.bytes} bytes`);
  for (const s of skipped) console.error(`skipped ${s.name}: ${s.reason}`);
  return files.length ? 0 : 1;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
