/**
 * The machine code on the page (lib/machine_code.ts, lib/notebook/lessons/machine_code.ts): each
 * opcode's role, the marked loop of a listing, and the committed H200 listings read against their
 * index, shown within the lessons' output limits.
 */
import assert from "node:assert/strict";
import {
  countRoles,
  fileFromTar,
  loadMachineLoop,
  loadSassIndex,
  multiplyAddLoop,
  parseLine,
  roleOf,
} from "../lib/machine_code.ts";
import { compareMachineLoops, showMachineLoop } from "../lib/notebook/lessons/machine_code.ts";
import { htmlLines } from "../tools/lesson_check.ts";
import { displayed } from "./jupyter_standin.ts";

Deno.test("roleOf: the matmul's work, WebGPU's clamps, and the loop's own bookkeeping", () => {
  assert.equal(roleOf("FFMA.FTZ R9, R10, R11, R9"), "multiply-add");
  assert.equal(roleOf("HFMA2 R4, R5, R6, R4"), "multiply-add");
  assert.equal(roleOf("LDS.128 R28, [R4+0x800]"), "read workgroup memory");
  assert.equal(roleOf("STS [R11], R16"), "store workgroup memory");
  assert.equal(roleOf("LDG.E.CONSTANT R12, [R12.U32+UR8], !P0"), "load global memory");
  assert.equal(roleOf("LDL R4, [R1+0x10]"), "local memory");
  assert.equal(roleOf("BAR.SYNC 0x0"), "barrier");
  assert.equal(roleOf("VIMNMX.U32 R10, R10, 0xff, PT"), "index clamp");
  assert.equal(roleOf("VIADDMNMX.U32 R26, R21, 0x8, R24, PT"), "index clamp");
  assert.equal(roleOf("ISETP.GE.U32.AND P1, PT, R6, 0x10, PT"), "loop test");
  assert.equal(roleOf("USEL UR7, URZ, 0x1, UP0"), "loop test");
  assert.equal(roleOf("LOP3.LUT P0, RZ, R14, R15, RZ, 0xfc, !PT"), "loop test");
  assert.equal(roleOf("ULOP3.LUT UP0, URZ, UR6, UR5, URZ, 0xfc, !UPT"), "loop test");
  assert.equal(roleOf("LOP3.LUT R5, R4, 0x3, RZ, 0xc0, !PT"), "address or counter");
  assert.equal(roleOf("IMAD R10, R6, 0x10, R0"), "address or counter");
  assert.equal(roleOf("IMAD.MOV.U32 R7, RZ, RZ, R15"), "register copy");
  assert.equal(roleOf("BRA 0x380"), "branch");
  assert.equal(roleOf("HFMA2.MMA R204, -RZ, RZ, 0, 0"), "register copy");
  assert.equal(roleOf("HADD2.F32 R6, -RZ, R4.H0_H0"), "convert");
  assert.equal(roleOf("HMUL2 R5, R4, R3"), "other float math");
  assert.equal(roleOf("NOP"), "other");
});

Deno.test("parseLine and multiplyAddLoop: a guarded branch keeps its guard in the text", () => {
  const listing = [
    "// k (k, {}): 4 instructions",
    "/*0000*/                   S2R R0, SR_TID.X ;",
    "// ---- multiply-add loop starts",
    "/*0010*/                   LDS R10, [R12+0x400] ;",
    "/*0020*/                   FFMA.FTZ R9, R10, R11, R9 ;",
    "/*0030*/               @P0 BRA 0x10 ;",
    "// ---- multiply-add loop ends",
    "/*0040*/                   EXIT ;",
  ].join("\n");
  const loop = multiplyAddLoop(listing);
  assert.deepEqual(loop.map((i) => i.role), ["read workgroup memory", "multiply-add", "branch"]);
  assert.equal(loop[2].text, "@P0 BRA 0x10");
  assert.equal(loop[2].opcode, "BRA");
  assert.equal(parseLine("// ---- multiply-add loop starts"), undefined);
  assert.throws(() => multiplyAddLoop("/*0000*/ EXIT ;"), /marks no multiply-add loop/);
});

Deno.test("the committed H200 loops: every ladder step's loop read whole, its roles summing to it", async () => {
  const index = await loadSassIndex("nvidia-h200");
  assert.ok(index);
  const steps = ["tiled", "blocktile_1d", "blocktile_2d", "vectorize", "bank_conflicts"];
  for (const label of [...steps, "subgroup_tiling", "double_buffer"]) {
    const l = await loadMachineLoop(index, "nvidia-h200", label);
    const counts = countRoles(l.loop);
    assert.equal([...counts.values()].reduce((a, b) => a + b, 0), l.loop.length, label);
    assert.equal(counts.get("multiply-add"), l.multiplyAdds, label);
    assert.ok(!counts.has("other"), `${label}: an instruction without a role`);
  }
  // tiled's loop, as 04 and 05 read it: 20 instructions for one multiply-add, two reads, two clamps.
  const tiled = countRoles((await loadMachineLoop(index, "nvidia-h200", "tiled")).loop);
  assert.equal(tiled.get("read workgroup memory"), 2);
  assert.equal(tiled.get("index clamp"), 2);
  await assert.rejects(() => loadMachineLoop(index, "nvidia-h200", "no_such_kernel"), /no machine/);
  // Listings over 80 KB are read from larger.tar.gz: 11's loop, 128 FMAs a trip, and 12's, written
  // out (2,048 a tile), each matching the index's count.
  const autotune = await loadMachineLoop(index, "nvidia-h200", "autotune");
  assert.equal(autotune.multiplyAdds, 128);
  const generated = await loadMachineLoop(index, "nvidia-h200", "generated");
  assert.equal(generated.multiplyAdds, 2048);
  const missing = {
    ...index,
    kernels: [{ ...index.kernels[0], label: "gone", file: "gone.sass" }],
  };
  await assert.rejects(() => loadMachineLoop(missing, "nvidia-h200", "gone"), /neither committed/);
});

Deno.test("showMachineLoop: every instruction or run shown, within the output limit", async () => {
  for (const label of ["tiled", "blocktile_1d", "blocktile_2d", "vectorize", "double_buffer"]) {
    const [bundle] = await displayed(() => showMachineLoop(label));
    const html = bundle["text/html"];
    assert.ok(htmlLines(html) <= 40, `${label}: ${htmlLines(html)} lines`);
    assert.match(html, /NVIDIA H200's Vulkan driver/);
    assert.match(html, /text-align:left/);
  }
  const [tiled] = await displayed(() => showMachineLoop("tiled"));
  assert.match(
    tiled["text/plain"],
    /20 instructions a trip for 1 multiply-add, 20 per multiply-add/,
  );
  assert.match(tiled["text/plain"], /FFMA\.FTZ R9, R10, R11, R9 +multiply-add/);
  const [vectorize] = await displayed(() => showMachineLoop("vectorize"));
  assert.match(vectorize["text/plain"], /\.\.\. 63 more multiply-add/);
  // A listing too long for the page keeps its head and tail, the whole of it folded.
  const [long] = await displayed(() => showMachineLoop("blocktile_2d"));
  assert.match(long["text/html"], /lines more \(the whole loop is folded below\)/);
  assert.match(long["text/html"], /<details><summary>The whole loop, \d+ lines<\/summary>/);
});

Deno.test("compareMachineLoops: roles per multiply-add, one column per kernel", async () => {
  const [bundle] = await displayed(() => compareMachineLoops(["tiled", "blocktile_1d"]));
  const plain = bundle["text/plain"];
  assert.match(plain, /^read workgroup memory +2 +1\.13 *$/m);
  assert.match(plain, /^all, per multiply-add +20 +6 *$/m);
  assert.match(plain, /^multiply-adds a trip +1 +8 *$/m);
  assert.ok(htmlLines(bundle["text/html"]) <= 20);
});

Deno.test("fileFromTar: a file by name from a ustar archive, padded entries skipped", () => {
  const header = (name: string, size: number) => {
    const h = new Uint8Array(512);
    h.set(new TextEncoder().encode(name));
    h.set(new TextEncoder().encode(size.toString(8).padStart(11, "0") + "\0"), 124);
    return h;
  };
  const body = (text: string) => {
    const b = new Uint8Array(Math.ceil(text.length / 512) * 512);
    b.set(new TextEncoder().encode(text));
    return b;
  };
  const first = "x".repeat(600); // two blocks
  const tar = new Uint8Array([
    ...header("a.sass", first.length),
    ...body(first),
    ...header("./b.sass", 5),
    ...body("hello"),
    ...new Uint8Array(1024),
  ]);
  assert.equal(new TextDecoder().decode(fileFromTar(tar, "b.sass")), "hello");
  assert.equal(fileFromTar(tar, "a.sass")?.length, 600);
  assert.equal(fileFromTar(tar, "c.sass"), undefined);
});
