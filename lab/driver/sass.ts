/**
 * The machine code (SASS) the NVIDIA Vulkan driver made of each kernel (lab: not part of the
 * product). The driver keeps every compiled pipeline in its shader disk cache: zstd frames, each an
 * `NVDANVVM` header followed by raw sm_90 instructions. Run lab/driver/capture.ts on the GPU host
 * with the cache pointed at an empty folder:
 *
 *   __GL_SHADER_DISK_CACHE=1 __GL_SHADER_DISK_CACHE_PATH=CACHE __GL_SHADER_DISK_CACHE_SKIP_CLEANUP=1 \
 *     (the capture command of capture.ts)
 *
 * then, with that folder, the capture's record and CUDA's disassembler:
 *
 *   deno run -A lab/driver/sass.ts --cache CACHE --pipelines CAPTURE.json --nvdisasm NVDISASM \
 *     --out data/driver/sass/DEVICE
 *
 * The cache holds each distinct pipeline once, in the order it was created, and names none: the
 * frames are matched to the capture's rows in order by the binary size the driver reported for each
 * (a row whose size does not come next compiled to an earlier row's code and is matched to it).
 * Writes one `.sass` file per kernel (the loop that does the multiply-adds marked; those over 80 KB
 * packed into `larger.tar.gz`) and `index.json`:
 * per kernel, the instruction counts of the whole program and of that loop, and the loop's memory
 * operations in issue order.
 */
import zlib from "node:zlib";
import { parseLine } from "../../lib/machine_code.ts";
import { requiredFlag } from "../flags.ts";

/** A row of lab/driver/capture.ts's record. */
export interface CaptureRow {
  label: string;
  kernel: string;
  params: Record<string, number>;
  invocations?: number;
  driver?: { executables: { statistics: { name: string; value: number }[] }[]; registers?: number };
}
/** One compiled pipeline from the cache: its raw instructions. */
export interface Program {
  frame: number;
  code: Uint8Array;
}

/** The cache's files that hold programs, in the order the driver names them. */
export function cacheFiles(dir: string): string[] {
  const found: string[] = [];
  for (const e of Deno.readDirSync(dir)) {
    const path = `${dir}/${e.name}`;
    if (e.isDirectory) found.push(...cacheFiles(path));
    else if (e.name.endsWith(".bin")) found.push(path);
  }
  return found.sort();
}

const ZSTD_MAGIC = [0x28, 0xb5, 0x2f, 0xfd];
/** The compiled programs in one file of the cache (its zstd frames that hold an NVDANVVM image). */
export function programs(bytes: Uint8Array): Program[] {
  const starts: number[] = [];
  for (let i = 0; i + 4 <= bytes.length; i++) {
    if (ZSTD_MAGIC.every((m, j) => bytes[i + j] === m)) starts.push(i);
  }
  starts.push(bytes.length);
  const found: Program[] = [];
  for (let f = 0; f + 1 < starts.length; f++) {
    const frame = new Uint8Array(zlib.zstdDecompressSync(bytes.subarray(starts[f], starts[f + 1])));
    // "NVDANVVM" at byte 0; the header's words from byte 8: [17] code bytes, [18] code offset - 8.
    if (new TextDecoder().decode(frame.subarray(0, 8)) !== "NVDANVVM") continue;
    const header = new Uint32Array(frame.buffer, frame.byteOffset + 8, 24);
    const size = header[17], offset = header[18] + 8;
    found.push({ frame: f, code: frame.slice(offset, offset + size) });
  }
  return found;
}

const binarySize = (row: CaptureRow) =>
  row.driver?.executables[0]?.statistics.find((s) => /binary size/i.test(s.name))?.value;

/**
 * Rows matched to programs in creation order. wgpu's own pipelines come first, so the match starts
 * at the first program from which every row finds its code: a row with an earlier row's kernel and
 * parameters has that row's code (cached once); every other row takes the next program, whose
 * size must be the one the driver reported for the row.
 */
export function match(
  rows: CaptureRow[],
  list: Program[],
): Map<number, { program: Program; sameAs?: string }> {
  const key = (row: CaptureRow) => `${row.kernel} ${JSON.stringify(row.params)}`;
  for (let start = 0; start < list.length; start++) {
    const found = new Map<number, { program: Program; sameAs?: string }>();
    let next = start;
    let ok = true;
    for (const [i, row] of rows.entries()) {
      const twin = rows.findIndex((r) => key(r) === key(row));
      if (binarySize(row) === undefined) continue; // no pipeline (the row's error says why)
      if (twin < i) {
        found.set(i, { program: found.get(twin)!.program, sameAs: rows[twin].label });
      } else if (next < list.length && list[next].code.length === binarySize(row)) {
        found.set(i, { program: list[next++] });
      } else {
        ok = false;
        break;
      }
    }
    if (ok && next === list.length) return found;
  }
  throw new Error("the cache's programs do not match the capture's rows in order");
}

/** One instruction of the listing. */
export interface Instruction {
  address: number;
  opcode: string; // with modifiers, e.g. LDS.128
  text: string;
}

/** One program's instructions, by CUDA's disassembler. */
export function disassemble(nvdisasm: string, code: Uint8Array): Instruction[] {
  const tmp = Deno.makeTempFileSync({ suffix: ".bin" });
  Deno.writeFileSync(tmp, code);
  const out = new Deno.Command(nvdisasm, { args: ["-b", "SM90", tmp] }).outputSync();
  Deno.removeSync(tmp);
  if (!out.success) throw new Error(new TextDecoder().decode(out.stderr));
  return parseListing(new TextDecoder().decode(out.stdout));
}

/**
 * nvdisasm's listing as instructions (address, opcode with its modifiers, the line), guards
 * dropped from the opcode: each line read as the lessons read the committed listings
 * (lib/machine_code.ts).
 */
export function parseListing(text: string): Instruction[] {
  return text.split("\n").flatMap((line) => {
    const i = parseLine(line);
    return i ? [{ address: parseInt(i.address, 16), opcode: i.opcode, text: line.trim() }] : [];
  });
}

/** The instruction families the lessons talk about. */
export function family(opcode: string): string {
  const base = opcode.split(".")[0];
  if (["FFMA", "HFMA2", "FMUL", "FADD", "HADD2", "HMUL2"].includes(base)) {
    return opcode.startsWith("HADD2.F32")
      ? "convert"
      : base === "FFMA" || base === "HFMA2"
      ? base
      : "float other";
  }
  if (["F2F", "F2FP", "I2F", "F2I", "PRMT"].includes(base)) return "convert";
  if (["LDS", "STS", "LDG", "STG", "LDL", "STL", "BAR", "LDSM"].includes(base)) return base;
  if (["BRA", "EXIT", "BSSY", "BSYNC", "WARPSYNC"].includes(base)) return "branch";
  if (base === "NOP") return "nop";
  return "integer and other";
}

const countBy = (list: Instruction[], key: (i: Instruction) => string) => {
  const counts: Record<string, number> = {};
  for (const i of list) counts[key(i)] = (counts[key(i)] ?? 0) + 1;
  return Object.fromEntries(Object.entries(counts).sort(([, a], [, b]) => b - a));
};

/** Backward branches: each closes a loop from its target to itself. */
export function loops(list: Instruction[]): { from: number; to: number }[] {
  const found: { from: number; to: number }[] = [];
  for (const [i, ins] of list.entries()) {
    const t = ins.opcode.startsWith("BRA")
      ? ins.text.match(/BRA\s+(?:`\(.*?\)\s*)?0x([0-9a-f]+)/)
      : null;
    if (!t) continue;
    const target = parseInt(t[1], 16);
    if (target >= ins.address) continue;
    const from = list.findIndex((x) => x.address === target);
    if (from >= 0) found.push({ from, to: i });
  }
  return found;
}

/** The memory operations and barriers of a stretch, in issue order, runs collapsed: "LDG.E x4". */
export function memoryOrder(list: Instruction[]): string[] {
  const order: string[] = [];
  let last = "", run = 0;
  const flush = () => {
    if (run) order.push(run > 1 ? `${last} x${run}` : last);
  };
  for (const i of list) {
    const f = family(i.opcode);
    if (!["LDS", "STS", "LDG", "STG", "LDL", "STL", "BAR", "LDSM"].includes(f)) continue;
    if (i.opcode === last) run++;
    else {
      flush();
      last = i.opcode;
      run = 1;
    }
  }
  flush();
  return order;
}

/**
 * A multiply-add instruction: FFMA, or HFMA2 save the move the compiler spells `HFMA2.MMA R, -RZ,
 * RZ, a, b` (zero times zero plus a constant).
 */
export const isMultiplyAdd = (x: Instruction): boolean =>
  /^(FFMA|HFMA2)/.test(x.opcode) && !/HFMA2\.MMA\s+R\d+,\s*-?RZ,\s*RZ,/.test(x.text);

/** What the index records of one program: its counts, its multiply-add loop and its tile loop. */
export function analyse(listing: Instruction[]) {
  // The program ends in a branch to itself and padding: not part of the kernel.
  const end = listing.findIndex((x) =>
    new RegExp(`BRA\\s+0x0*${x.address.toString(16)}\\s*;`).test(x.text)
  );
  const body = end >= 0 ? listing.slice(0, end) : listing;
  const all = loops(body);
  // The multiply-add loop: of all loops, the one with the most multiply-adds, innermost on a tie.
  const withMath = all.map((l) => ({
    ...l,
    math: body.slice(l.from, l.to + 1).filter(isMultiplyAdd).length,
  })).sort((a, b) => b.math - a.math || (a.to - a.from) - (b.to - b.from));
  const hot = withMath[0]?.math ? withMath[0] : undefined;
  const hotBody = hot ? body.slice(hot.from, hot.to + 1) : [];
  // The loop over K's tiles: the smallest loop around the multiply-add loop (absent when the
  // multiply-add loop is itself the tile loop, its k steps written out).
  const tile = hot
    ? all.filter((l) => l.from <= hot.from && l.to >= hot.to && l.to - l.from > hot.to - hot.from)
      .sort((a, b) => (a.to - a.from) - (b.to - b.from))[0]
    : undefined;
  const tileRest = tile && hot
    ? [...body.slice(tile.from, hot.from), ...body.slice(hot.to + 1, tile.to + 1)]
    : [];
  const width = (opcode: string) => opcode.includes(".128") ? 4 : opcode.includes(".64") ? 2 : 1;
  return {
    body,
    hot,
    summary: {
      instructions: body.length,
      families: countBy(body, (x) => family(x.opcode)),
      loops: all.length,
      ...(hot
        ? {
          multiplyAddLoop: {
            instructions: hotBody.length,
            families: countBy(hotBody, (x) => family(x.opcode)),
            opcodes: countBy(
              hotBody.filter((x) => family(x.opcode) !== "integer and other"),
              (x) => x.opcode,
            ),
            memoryOrder: memoryOrder(hotBody),
          },
        }
        : {}),
      ...(tile && hot
        ? {
          tileLoopOutsideIt: {
            instructions: tileRest.length,
            // The tile's other loops (its tile loads, where a loop loads them), counted once above.
            innerLoops: all.filter((l) =>
              l.from >= tile.from && l.to < tile.to && (l.to < hot.from || l.from > hot.to)
            ).map((l) => {
              const loads = body.slice(l.from, l.to + 1).filter((x) => x.opcode.startsWith("LDG"));
              return {
                instructions: l.to - l.from + 1,
                loads: loads.length,
                loadWidth: loads.length ? width(loads[0].opcode) : 1,
              };
            }),
            families: countBy(tileRest, (x) => family(x.opcode)),
            memoryOrder: memoryOrder(tileRest),
          },
        }
        : {}),
    },
  };
}

if (import.meta.main) {
  const usage = "usage: sass.ts --cache DIR --pipelines FILE --nvdisasm PATH --out DIR";
  const cacheDir = requiredFlag("--cache", usage);
  const capture = JSON.parse(Deno.readTextFileSync(requiredFlag("--pipelines", usage)));
  const nvdisasm = requiredFlag("--nvdisasm", usage);
  const outDir = requiredFlag("--out", usage);
  const rows: CaptureRow[] = capture.rows;
  Deno.mkdirSync(outDir, { recursive: true });
  const list = cacheFiles(cacheDir).flatMap((f) => programs(Deno.readFileSync(f)));
  const matched = match(rows, list);
  const index: Record<string, unknown>[] = [];
  const fileName = (row: CaptureRow) =>
    row.label.replace(/[{}"]/g, "").replace(/[^A-Za-z0-9_=]+/g, "_").replace(/_+$/, "");
  for (const [i, row] of rows.entries()) {
    const m = matched.get(i);
    if (!m) continue;
    const { body, hot, summary } = analyse(disassemble(nvdisasm, m.program.code));
    const name = fileName(row);
    const lines = body.map((x, j) =>
      hot && j === hot.from
        ? `// ---- multiply-add loop starts\n${x.text}`
        : hot && j === hot.to
        ? `${x.text}\n// ---- multiply-add loop ends`
        : x.text
    );
    Deno.writeTextFileSync(
      `${outDir}/${name}.sass`,
      `// ${row.label} (${row.kernel}, ${JSON.stringify(row.params)}): ${body.length} ` +
        `instructions, ${m.program.code.length} bytes, ${row.driver?.registers ?? "?"} registers` +
        (m.sameAs ? `; the same code as ${m.sameAs}` : "") + "\n" + lines.join("\n") + "\n",
    );
    index.push({
      label: row.label,
      kernel: row.kernel,
      params: row.params,
      invocations: row.invocations,
      file: `${name}.sass`,
      ...(m.sameAs ? { sameCodeAs: m.sameAs } : {}),
      registers: row.driver?.registers,
      bytes: m.program.code.length,
      ...summary,
    });
  }
  // Listings over 80 KB (the f16 kernels, 11's and 12's) go into one archive: a smaller repository.
  const large = index.filter((k) => Deno.statSync(`${outDir}/${k.file}`).size > 80_000);
  if (large.length) {
    const tar = new Deno.Command("tar", {
      args: ["-czf", "larger.tar.gz", ...large.map((k) => k.file as string)],
      cwd: outDir,
    }).outputSync();
    if (!tar.success) throw new Error(new TextDecoder().decode(tar.stderr));
    for (const k of large) {
      Deno.removeSync(`${outDir}/${k.file}`);
      k.archive = "larger.tar.gz";
    }
  }
  Deno.writeTextFileSync(
    `${outDir}/index.json`,
    JSON.stringify(
      {
        device: capture.device,
        commit: capture.commit,
        captured: capture.started,
        source: "NVIDIA shader disk cache of lab/driver/capture.ts's pipelines, disassembled by " +
          "nvdisasm -b SM90 (lab/driver/sass.ts)",
        kernels: index,
      },
      null,
      1,
    ) + "\n",
  );
  console.error(`${rows.length} kernels from ${list.length} cached programs -> ${outDir}`);
}
