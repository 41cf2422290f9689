/**
 * The lab's const-against-override probe (lab/const_overrides.ts): its two WGSL rewrites, on the
 * kernels the committed runs took apart.
 */
import assert from "node:assert/strict";
import { constSource, switchRemoved } from "../lab/const_overrides.ts";
import { acquireGpu, compileWgsl, loadKernelSource } from "../lib/gpu.ts";
import { findKernel } from "../lib/registry.ts";

Deno.test("constSource: every override a const, of the pipeline's value or its default", async () => {
  const spec = findKernel("subgroup_tiling")!;
  const code = await loadKernelSource(spec.file);
  const out = constSource(code, { BM: 64, BN: 128, BK: 8, PAD: 1 });
  assert.doesNotMatch(out.replace(/\/\/.*$/gm, ""), /\boverride\b/);
  assert.match(out, /^const BM: u32 = 64u;$/m);
  assert.match(out, /^const WARP_TILES: u32 = 1u;$/m, "no value given: the default stays");
  assert.match(out, /^const THREADS: u32 = \(BM \/ 8u\) \* \(BN \/ 8u\);$/m, "derived sizes too");
  assert.throws(() => constSource("fn f() {}", {}), /no override/);
  await compileWgsl(await acquireGpu(), out, "09 as consts");
});

Deno.test("switchRemoved: 09 keeps the mapping the switch picks, and nothing of the switch", async () => {
  const code = await loadKernelSource(findKernel("subgroup_tiling")!.file);
  const tiles = switchRemoved(code, true);
  const flat = switchRemoved(code, false);
  for (const out of [tiles, flat]) assert.doesNotMatch(out, /\bwarpTiles\b/);
  assert.match(tiles, /let a0At = \(wy \* 8u \+ ly\);/);
  assert.match(flat, /let a0At = \(ty\);/);
  assert.match(flat, /let computes = \(m0 \+ ty \* 4u < dims\.M && n0 \+ tx \* 4u < dims\.N\);/);
  assert.throws(() => switchRemoved("fn f() {}", true), /not taken out whole/);
  const gpu = await acquireGpu();
  await compileWgsl(gpu, tiles, "09 without the switch");
  await compileWgsl(gpu, flat, "09's flat setting without the switch");
});
