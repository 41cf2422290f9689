/**
 * Captures the SPIR-V that naga (inside Deno's WebGPU) hands the Vulkan driver for 11 and 12 at
 * BM 128 BN 128 BK 8 TN 8 PAD 1, and writes what it finds to data/naga/clamps.json.
 * Needs gcc, libvulkan-dev and spirv-tools (spirv-dis) and a Vulkan adapter (lavapipe will do):
 *   npx -y deno@2.9.6 run --allow-all lab/naga/dump.ts
 * Each kernel is compiled in its own process (capture.ts) under spv_dump_layer, so that the
 * modules it writes are that kernel's; the last one is the pipeline's (the ones before it are
 * wgpu's own helper shaders).
 */
import { analyse, type KernelInput } from "./analyse.ts";
import type { NagaClamps } from "../../lib/naga.ts";

const here = new URL(".", import.meta.url).pathname;
const root = new URL("../../", import.meta.url).pathname;
const DENO_VERSION = "2.9.6";
const TILE = { BM: 128, BN: 128, BK: 8, TN: 8, PAD: 1 };

async function sh(cmd: string[], env: Record<string, string> = {}): Promise<string> {
  const out = await new Deno.Command(cmd[0], { args: cmd.slice(1), env, cwd: root }).output();
  const text = new TextDecoder().decode(out.stdout);
  if (!out.success) throw new Error(`${cmd.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
  return text;
}

await sh([
  "gcc",
  "-shared",
  "-fPIC",
  "-O2",
  "-Wall",
  "-fvisibility=hidden",
  "-o",
  `${here}libspv_dump_layer.so`,
  `${here}spv_dump_layer.c`,
]);

async function capture(
  kernel: "11" | "12",
): Promise<{ asm: string; words: number; adapter: string }> {
  const dir = await Deno.makeTempDir({ prefix: `naga-${kernel}-` });
  const log = await sh([
    "npx",
    "-y",
    `deno@${DENO_VERSION}`,
    "run",
    "--allow-all",
    `${here}capture.ts`,
    kernel,
  ], {
    SPV_DUMP_DIR: dir,
    VK_LAYER_PATH: here,
    VK_INSTANCE_LAYERS: "VK_LAYER_GEMM_LADDER_spv_dump",
  });
  const files = [...Deno.readDirSync(dir)].map((e) => e.name).sort();
  const last = `${dir}/${files.at(-1)}`;
  const asm = await sh(["spirv-dis", "--raw-id", last]);
  const words = (await Deno.stat(last)).size / 4;
  await Deno.remove(dir, { recursive: true });
  return { asm, words, adapter: log.match(/^adapter (.*)$/m)?.[1] ?? "unknown" };
}

const denoBinary =
  (await sh(["npx", "-y", `deno@${DENO_VERSION}`, "eval", "console.log(Deno.execPath())"])).trim();
const strings = await sh(["strings", denoBinary]);
const crate = (name: string) =>
  strings.match(new RegExp(`\\b${name}-(\\d+\\.\\d+\\.\\d+)`))?.[1] ?? "unknown";

const inputs: Record<"11" | "12", KernelInput> = {
  "11": {
    kernel: "11_autotune",
    params: { ...TILE, VEC4_LOADS: 1, GROUP_M: 1 },
    spirvWords: 0,
    hotLoopWhat: "the k loop (`for p < BK`), one k step per trip",
    kStepsPerTrip: 1,
    fragmentWgsl: "let a0 = As[aBuf + p * AS + a0At];  (p: the loop's Function variable)",
  },
  "12": {
    kernel: "12_generated",
    params: { ...TILE, GROUP_M: 1, AHEAD: 0 },
    spirvWords: 0,
    hotLoopWhat:
      "the tile loop: two k tiles per trip (double buffer by literals), their k steps written out",
    kStepsPerTrip: 2 * TILE.BK,
    fragmentWgsl: "let a0_0 = As[0][0][a0At];  (buffer 0, k row 0: literals)",
  },
};

let adapter = "unknown";
const kernels = [];
for (const k of ["11", "12"] as const) {
  const got = await capture(k);
  adapter = got.adapter;
  kernels.push(analyse(got.asm, { ...inputs[k], spirvWords: got.words }));
}

const report: NagaClamps = {
  source:
    "SPIR-V captured at vkCreateShaderModule by lab/naga/spv_dump_layer.c (the module of the compute pipeline), disassembled with spirv-dis --raw-id and counted by lab/naga/analyse.ts",
  deno: DENO_VERSION,
  naga: crate("naga"),
  wgpu: crate("wgpu-core"),
  adapter,
  generated: new Date().toISOString().slice(0, 10),
  kernels,
};
await Deno.mkdir(`${root}data/naga`, { recursive: true });
await Deno.writeTextFile(`${root}data/naga/clamps.json`, JSON.stringify(report, null, 2) + "\n");
console.log(
  JSON.stringify(
    kernels.map((k) => ({ kernel: k.kernel, clamps: k.clamps, loops: k.loops, hot: k.hotLoop })),
    null,
    1,
  ),
);
