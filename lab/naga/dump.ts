/**
 * Captures the SPIR-V that naga (inside Deno's WebGPU) hands the Vulkan driver for 11 and for 12
 * with each combination of its transforms, at BM 128 BN 128 BK 8 TN 8 PAD 1, and writes what it
 * finds to data/naga/clamps.json. Needs gcc, libvulkan-dev, spirv-tools and a Vulkan adapter
 * (lavapipe will do):   npx -y deno@2.9.6 run --allow-all lab/naga/dump.ts
 * Each kernel is compiled in its own process (capture.ts) under spv_dump_layer, so the modules
 * it writes are that kernel's; the last is the pipeline's (the ones before are wgpu's own).
 */
import { analyse, type KernelInput } from "./analyse.ts";
import { kernelSha256, kernelSource, TILE } from "./kernels.ts";
import type { NagaClamps, NagaKernelReport } from "../../lib/naga.ts";

const here = new URL(".", import.meta.url).pathname;
const root = new URL("../../", import.meta.url).pathname;
const DENO_VERSION = "2.9.6";
const deno = ["npx", "-y", `deno@${DENO_VERSION}`];

async function sh(cmd: string[], env: Record<string, string> = {}): Promise<string> {
  const out = await new Deno.Command(cmd[0], { args: cmd.slice(1), env, cwd: root }).output();
  if (!out.success) throw new Error(`${cmd.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
  return new TextDecoder().decode(out.stdout);
}

async function capture(args: string[]): Promise<{ asm: string; words: number; log: string }> {
  const dir = await Deno.makeTempDir({ prefix: "naga-spv-" });
  const log = await sh([...deno, "run", "--allow-all", `${here}capture.ts`, ...args], {
    SPV_DUMP_DIR: dir,
    VK_LAYER_PATH: here,
    VK_INSTANCE_LAYERS: "VK_LAYER_GEMM_LADDER_spv_dump",
  });
  const last = `${dir}/${[...Deno.readDirSync(dir)].map((e) => e.name).sort().at(-1)}`;
  const asm = await sh(["spirv-dis", "--raw-id", last]);
  const words = (await Deno.stat(last)).size / 4;
  await Deno.remove(dir, { recursive: true });
  return { asm, words, log };
}

/** What to compile: 11, then 12 with all transforms, then 12 with each other combination. */
function variants(): {
  args: string[];
  input: Omit<KernelInput, "spirvWords" | "params" | "fragmentWgsl" | "sourceSha256">;
}[] {
  const out = [{
    args: ["11"],
    input: {
      kernel: "11_autotune",
      variant: "as is",
      hotLoopWhat: "the k loop (`for p < BK`), one k step per trip",
      kStepsPerTrip: 1,
    },
  }];
  for (const bits of [7, 3, 5, 6, 1, 2, 4, 0]) {
    const [unroll, nested, literal] = [(bits >> 2) & 1, (bits >> 1) & 1, bits & 1];
    const on = [unroll && "UNROLL", nested && "NESTED", literal && "LITERAL_BUFFER"].filter(
      Boolean,
    );
    const tilesPerTrip = literal ? 2 : 1;
    out.push({
      args: ["12", String(unroll), String(nested), String(literal)],
      input: {
        kernel: "12_generated",
        variant: bits === 7
          ? "all transforms"
          : on.length
          ? `only ${on.join(" + ")}`
          : "no transform",
        hotLoopWhat: unroll
          ? `the tile loop: ${
            literal ? "two k tiles" : "one k tile"
          } per trip, their k steps written out`
          : "the k loop (`for p < BK`), one k step per trip",
        kStepsPerTrip: unroll ? tilesPerTrip * TILE.BK : 1,
      },
    });
  }
  return out;
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
const denoBinary = (await sh([...deno, "eval", "console.log(Deno.execPath())"])).trim();
const strings = await sh(["strings", denoBinary]);
const crate = (name: string) =>
  strings.match(new RegExp(`\\b${name}-(\\d+\\.\\d+\\.\\d+)`))?.[1] ?? "unknown";

let adapter = "unknown";
const kernels: NagaKernelReport[] = [];
for (const { args, input } of variants()) {
  const source = await kernelSource(args[0], args.slice(1).map(Number));
  const got = await capture(args);
  adapter = got.log.match(/^adapter (.*) \(tile/m)?.[1] ?? adapter;
  const fragmentWgsl = source.code.match(/let a0\w* = As\[.*?\];/)![0];
  kernels.push(
    analyse(got.asm, {
      ...input,
      params: source.params,
      sourceSha256: await kernelSha256(source),
      spirvWords: got.words,
      fragmentWgsl,
    }),
  );
  console.log(input.kernel, input.variant, JSON.stringify(kernels.at(-1)!.hotLoop));
}

const report: NagaClamps = {
  source:
    "SPIR-V captured at vkCreateShaderModule by lab/naga/spv_dump_layer.c (the compute pipeline's module), disassembled with spirv-dis --raw-id and counted by lab/naga/analyse.ts",
  deno: DENO_VERSION,
  naga: crate("naga"),
  wgpu: crate("wgpu-core"),
  adapter,
  generated: new Date().toISOString().slice(0, 10),
  kernels,
};
await Deno.mkdir(`${root}data/naga`, { recursive: true });
await Deno.writeTextFile(`${root}data/naga/clamps.json`, JSON.stringify(report, null, 2) + "\n");
