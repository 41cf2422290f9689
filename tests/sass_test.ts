/**
 * The machine-code reading (lab/driver/sass.ts) and the issue ceilings taken from it
 * (lab/driver/issue_ceiling.ts): the cache's frames, the match of programs to the capture's rows,
 * the loops found in a listing, each ceiling's count, and the committed H200 record against the
 * driver capture and the run it was set beside.
 */
import assert from "node:assert/strict";
import zlib from "node:zlib";
import { analyse, type CaptureRow, match, parseListing, programs } from "../lab/driver/sass.ts";
import { type Kernel, perMultiplyAdd } from "../lab/driver/issue_ceiling.ts";
import { KERNELS } from "../lib/registry.ts";

const root = new URL("../", import.meta.url);
const readJson = (path: string) => JSON.parse(Deno.readTextFileSync(new URL(path, root)));

/** A cache frame as the driver writes it: "NVDANVVM", a header, the code at the header's offset. */
function nvdaFrame(code: Uint8Array, offset = 304): Uint8Array {
  const frame = new Uint8Array(offset + 8 + code.length + 16);
  frame.set(new TextEncoder().encode("NVDANVVM"));
  const header = new DataView(frame.buffer, 8);
  header.setUint32(17 * 4, code.length, true);
  header.setUint32(18 * 4, offset, true);
  frame.set(code, offset + 8);
  return frame;
}
const zstd = (bytes: Uint8Array) => new Uint8Array(zlib.zstdCompressSync(bytes));
const concat = (...parts: Uint8Array[]) => new Uint8Array(parts.flatMap((p) => [...p]));

Deno.test("programs: the code of each NVDANVVM frame, ELF frames and headers between skipped", () => {
  const code = Uint8Array.from({ length: 96 }, (_, i) => (i * 7) & 255);
  const elf = concat(new Uint8Array([0, 0, 0, 0]), new TextEncoder().encode("\x7fELF"));
  const file = concat(
    new TextEncoder().encode("CDVN header bytes"),
    zstd(elf),
    new Uint8Array([1, 2, 3, 4, 5]),
    zstd(nvdaFrame(code)),
    new Uint8Array([9, 9]),
    zstd(nvdaFrame(code.slice(0, 32), 336)),
  );
  const found = programs(file);
  assert.equal(found.length, 2);
  assert.deepEqual([...found[0].code], [...code]);
  assert.deepEqual([...found[1].code], [...code.slice(0, 32)]);
});

Deno.test("match: rows take programs in order by size, after wgpu's own; repeats share code", () => {
  const row = (label: string, size: number, params = {}): CaptureRow => ({
    label,
    kernel: label.split(" ")[0],
    params,
    driver: { executables: [{ statistics: [{ name: "Binary Size", value: size }] }] },
  });
  const program = (frame: number, size: number) => ({ frame, code: new Uint8Array(size) });
  const rows = [row("a", 16), row("b", 32), row("a again", 16), row("c", 16, { X: 1 })];
  rows[2].kernel = "a";
  // wgpu's own pipeline first, of the same size as a's.
  const list = [program(0, 16), program(1, 16), program(2, 32), program(3, 16)];
  const m = match(rows, list);
  assert.equal(m.get(0)!.program.frame, 1);
  assert.equal(m.get(1)!.program.frame, 2);
  assert.equal(m.get(2)!.program.frame, 1);
  assert.equal(m.get(2)!.sameAs, "a");
  assert.equal(m.get(3)!.program.frame, 3);
  assert.throws(() => match(rows, [program(0, 16), program(1, 48), program(2, 16)]));
});

// A tile loop holding a load loop and a multiply-add loop, then the end of the program.
const LISTING = `
        /*0000*/                   S2R R0, SR_TID.X ;
        /*0010*/                   MOV R1, RZ ;
        /*0020*/                   LDG.E.128.CONSTANT R4, [R2.U32+UR4] ;
        /*0030*/                   STS.128 [R0], R4 ;
        /*0040*/              @P0 BRA 0x20 ;
        /*0050*/                   BAR.SYNC 0x0 ;
        /*0060*/                   LDS.128 R8, [R0] ;
        /*0070*/                   LDS.128 R12, [R0+0x10] ;
        /*0080*/                   FFMA.FTZ R16, R8, R12, R16 ;
        /*0090*/                   FFMA.FTZ R17, R9, R13, R17 ;
        /*00a0*/                   IADD3 R0, R0, 0x20, RZ ;
        /*00b0*/              @!P1 BRA 0x60 ;
        /*00c0*/                   BAR.SYNC 0x0 ;
        /*00d0*/              @P2 BRA 0x20 ;
        /*00e0*/                   STG.E [R2], R16 ;
        /*00f0*/                   EXIT ;
        /*0100*/                   BRA 0x100;
        /*0110*/                   NOP;
`;

Deno.test("analyse: the multiply-add loop, the tile loop around it and their memory order", () => {
  const { body, summary } = analyse(parseListing(LISTING));
  assert.equal(body.length, 16, "the branch to itself and the padding are not the kernel's");
  assert.equal(summary.loops, 3);
  const hot = summary.multiplyAddLoop!;
  assert.equal(hot.instructions, 6);
  assert.equal(hot.families.FFMA, 2);
  assert.equal(hot.families.LDS, 2);
  assert.deepEqual(hot.memoryOrder, ["LDS.128 x2"]);
  const tile = summary.tileLoopOutsideIt!;
  assert.equal(tile.instructions, 6, "the tile loop's instructions outside the multiply-add loop");
  assert.deepEqual(tile.innerLoops, [{ instructions: 3, loads: 1, loadWidth: 4 }]);
  assert.deepEqual(tile.memoryOrder, ["LDG.E.128.CONSTANT", "STS.128", "BAR.SYNC x2"]);
});

Deno.test("perMultiplyAdd: the tile's instructions over its multiply-adds", () => {
  const families = (FFMA: number) => ({ FFMA });
  // 04's shape: 16 trips of a 20-instruction loop and 45 more per 16-step tile.
  const tiled: Kernel = {
    label: "tiled",
    kernel: "04_tiled",
    params: { TILE: 16 },
    invocations: 256,
    multiplyAddLoop: { instructions: 20, families: families(1) },
    tileLoopOutsideIt: { instructions: 45, innerLoops: [] },
  };
  assert.equal(perMultiplyAdd(tiled), (16 * 20 + 45) / 16);
  // A 128 x 128 x 8 tile over 256 invocations (512 multiply-adds each), 8 trips of 64 FFMA, and
  // two load loops of one scalar load per trip: 1 024 elements each, 4 trips, 3 beyond the one
  // counted in the tile loop.
  const blocktile: Kernel = {
    label: "blocktile_2d",
    kernel: "06_blocktile_2d",
    params: { BM: 128, BN: 128, BK: 8 },
    invocations: 256,
    multiplyAddLoop: { instructions: 124, families: families(64) },
    tileLoopOutsideIt: {
      instructions: 97,
      innerLoops: [{ instructions: 25, loads: 1, loadWidth: 1 }, {
        instructions: 25,
        loads: 1,
        loadWidth: 1,
      }],
    },
  };
  assert.equal(perMultiplyAdd(blocktile), (97 + 2 * 3 * 25 + 8 * 124) / 512);
  // The k loop written out: the multiply-add loop is the tile loop.
  const whole: Kernel = { ...blocktile, tileLoopOutsideIt: undefined };
  assert.equal(perMultiplyAdd(whole), 124 / 64);
  // Packed f16 multiply-adds are not counted as FFMA.
  assert.equal(typeof perMultiplyAdd({ ...whole, multiplyAddLoop: undefined }), "string");
});

/** The file names in a gzip-compressed tar archive (ustar: a 512-byte header per file). */
async function tarNames(gz: Uint8Array<ArrayBuffer>): Promise<string[]> {
  const stream = new Blob([gz]).stream().pipeThrough(new DecompressionStream("gzip"));
  const tar = new Uint8Array(await new Response(stream).arrayBuffer());
  const names: string[] = [];
  for (let at = 0; at + 512 <= tar.length && tar[at] !== 0;) {
    const field = (from: number, length: number) =>
      new TextDecoder().decode(tar.subarray(at + from, at + from + length)).replace(/\0.*$/s, "");
    names.push(field(0, 100));
    at += 512 + Math.ceil(parseInt(field(124, 12).trim(), 8) / 512) * 512;
  }
  return names;
}

Deno.test("the H200's machine code: every kernel, as the driver capture compiled it", async () => {
  const sass = readJson("data/driver/sass/nvidia-h200/index.json");
  const capture = readJson("data/driver/nvidia-h200.json");
  assert.equal(sass.device.description, "NVIDIA H200");
  for (const spec of KERNELS.filter((k) => k.name !== "shapes")) {
    assert.ok(sass.kernels.some((k: Kernel) => k.label === spec.name), `${spec.name} read`);
  }
  const key = (r: { label: string; params: unknown }) => `${r.label} ${JSON.stringify(r.params)}`;
  const captured = new Map(
    capture.rows.map((r: CaptureRow & { driver: { registers: number } }) => [key(r), r]),
  );
  const archived = await tarNames(
    await Deno.readFile(new URL("data/driver/sass/nvidia-h200/larger.tar.gz", root)),
  );
  for (const k of sass.kernels) {
    // The knob points were captured with the code only; every other row is in the driver capture.
    const row = captured.get(key(k)) as { driver: { registers: number } } | undefined;
    if (!k.label.includes(" knob ")) {
      assert.ok(row, `${k.label} is in the driver capture`);
      assert.equal(k.registers, row.driver.registers, `${k.label}: registers`);
    }
    if (k.archive) assert.ok(archived.includes(k.file), `${k.file} archived`);
    else {
      const text = Deno.readTextFileSync(new URL(`data/driver/sass/nvidia-h200/${k.file}`, root));
      assert.equal(
        text.trimEnd().split("\n").filter((l) => l.startsWith("/*")).length,
        k.instructions,
      );
    }
  }
});

Deno.test("the issue ceilings: counted from the code, set beside the run they name", () => {
  const sass = readJson("data/driver/sass/nvidia-h200/index.json");
  const ceilings = readJson("data/driver/sass/nvidia-h200/issue-ceiling-2026-11-28T0726.json");
  const run = readJson(ceilings.run);
  assert.equal(run.complete, true);
  assert.ok(Math.abs(run.ceilings.fp32Gflops - ceilings.fp32CeilingGflops) < 0.5);
  for (const row of ceilings.rows) {
    const kernel = sass.kernels.find((k: Kernel) => k.label === row.label);
    const per = perMultiplyAdd(kernel);
    if (typeof per === "string") assert.equal(row.notCounted, per);
    else assert.ok(Math.abs(row.instructionsPerMultiplyAdd - per) < 1e-9, row.label);
    if (row.gflops === undefined) continue;
    // The run's row timed with the parameters the code was compiled with (a knob sweep's too).
    const timed = [
      ...run.results,
      ...(run.knobs ?? []).flatMap((k: { points: { result?: unknown }[] }) =>
        k.points.map((p) => p.result)
      ),
    ].find((r) =>
      r?.kernel === kernel.kernel && r.m === 4096 && r.validated &&
      JSON.stringify(Object.entries(r.params).sort()) ===
        JSON.stringify(Object.entries(kernel.params).sort())
    );
    assert.equal(timed?.gflops, row.gflops, `${row.label}: the run's validated row`);
  }
  // The reading the lessons quote: 04's and 05's kernels at their ceiling, 12's at 85%.
  const of = (label: string) => ceilings.rows.find((r: { label: string }) => r.label === label);
  assert.ok(of("tiled").ofCeiling > 0.95 && of("blocktile_1d").ofCeiling > 0.95);
  assert.ok(Math.abs(of("generated").ofCeiling - 0.85) < 0.01);
});
