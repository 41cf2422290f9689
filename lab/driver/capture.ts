/**
 * What the Vulkan driver compiled each kernel into (lab: not part of the product). Creates each
 * kernel's pipeline as the runner does at 4096 x 4096 x 4096 (the parameters the bench uses there)
 * while lab/driver/pipeline_stats_layer.c records what the driver reports for it through
 * VK_KHR_pipeline_executable_properties: registers per invocation among the statistics on NVIDIA.
 * Beside each, the step model's register estimate and the workgroups per SM that each count
 * allows (lib/model/device.ts `occupancy`). Run under the layer, built with gcc from
 * pipeline_stats_layer.c into a folder beside pipeline_stats_layer.json:
 *
 *   PIPELINE_STATS_FILE=STATS.jsonl VK_LAYER_PATH=FOLDER \
 *     VK_INSTANCE_LAYERS=VK_LAYER_GEMM_LADDER_pipeline_stats \
 *     deno run -A lab/driver/capture.ts --stats STATS.jsonl --out OUT.json
 */
import { type DriverExecutable, type DriverRow, statisticOf } from "../../lib/driver_registers.ts";
import { acquireGpu } from "../../lib/gpu.ts";
import { gpuModel, occupancy } from "../../lib/model/device.ts";
import { stepModel } from "../../lib/model/bounds.ts";
import type { Shape } from "../../lib/matrix.ts";
import { currentCommit } from "../../lib/record.ts";
import { KERNELS, type KernelSpec, type Params } from "../../lib/registry.ts";
import { kernelParams, prepareKernel } from "../../lib/runner.ts";
import { requiredFlag } from "../flags.ts";
import { probeRecord } from "../probe_record.ts";

const arg = (name: string) => requiredFlag(name, "usage: capture.ts --stats FILE --out FILE");
const statsFile = arg("--stats");
const outFile = arg("--out");
const SHAPE: Shape = { m: 4096, n: 4096, k: 4096 };

/** A row of the record: the library's, plus what the capture alone knows. */
interface Row extends DriverRow {
  kernel: string;
  modelError?: string;
  /** Pipelines the driver was asked for before this kernel's (wgpu's own), by entry point. */
  others?: string[];
}

const gpu = await acquireGpu();
const device = gpuModel(gpu.summary);
const started = new Date().toISOString();
const { rows, save } = probeRecord<Row>(outFile, {
  device: gpu.summary,
  started,
  commit: await currentCommit(),
  shape: SHAPE,
  source: "lab/driver/pipeline_stats_layer.c (VK_KHR_pipeline_executable_properties), " +
    "pipelines created by lab/driver/capture.ts as lib/runner.ts prepareKernel does",
});

let linesSeen = 0;
function newPipelines(): { entryPoint: string; executables: DriverExecutable[] }[] {
  let text = "";
  try {
    text = Deno.readTextFileSync(statsFile);
  } catch {
    return [];
  }
  const lines = text.split("\n").filter((l) => l.trim());
  const fresh = lines.slice(linesSeen).map((l) => JSON.parse(l));
  linesSeen = lines.length;
  return fresh;
}

async function capture(label: string, spec: KernelSpec, overrides?: Params): Promise<void> {
  const params = kernelParams(gpu, spec, overrides, SHAPE);
  const [x, y, z] = spec.workgroupSize(params);
  const invocations = x * y * z;
  const workgroupBytes = spec.workgroupStorageBytes(params);
  const row: Row = { label, kernel: spec.id, params, invocations, workgroupBytes };
  try {
    const m = stepModel(spec, params, SHAPE, device);
    row.model = {
      registersEstimate: m.registersEstimate,
      residentPerSm: m.occupancy.resident,
      limitedBy: m.occupancy.limitedBy,
    };
  } catch (e) {
    row.modelError = (e as Error).message;
  }
  newPipelines();
  try {
    await prepareKernel(gpu, spec, params);
    const fresh = newPipelines();
    const mine = fresh.at(-1);
    if (!mine) throw new Error("the layer recorded no pipeline (is it loaded?)");
    const registers = statisticOf(mine.executables, /regist/i);
    const occ = registers === undefined
      ? undefined
      : occupancy(device.sm, invocations, registers, workgroupBytes);
    row.driver = {
      executables: mine.executables,
      ...(registers !== undefined ? { registers } : {}),
      ...(occ ? { residentPerSm: occ.resident, limitedBy: occ.limitedBy } : {}),
    };
    if (fresh.length > 1) row.others = fresh.slice(0, -1).map((p) => p.entryPoint);
  } catch (e) {
    row.error = (e as Error).message;
  }
  rows.push(row);
  save();
  console.error(
    `${label}: driver ${row.driver?.registers ?? "?"} registers (model ${
      row.model?.registersEstimate ?? "-"
    }), ${row.driver?.residentPerSm ?? "?"} per SM (model ${row.model?.residentPerSm ?? "-"})${
      row.error ? ` ERROR ${row.error}` : ""
    }`,
  );
}

const byName = (name: string) => KERNELS.find((k) => k.name === name)!;
for (const spec of KERNELS) {
  // 13's plan at 4096 is 12's kernel, captured below with 12's.
  if (spec.name === "shapes") continue;
  await capture(spec.name, spec);
}
for (const STEPS of [1, 2, 4, 8, 16]) {
  await capture(`tiled_steps STEPS=${STEPS}`, byName("tiled_steps"), { STEPS });
}
for (let bits = 0; bits < 8; bits++) {
  const t = {
    UNROLL: (bits >> 2) & 1,
    NESTED: (bits >> 1) & 1,
    LITERAL_BUFFER: bits & 1,
    AHEAD: 0,
  };
  await capture(`generated ${JSON.stringify(t)}`, byName("generated"), t);
}
// 11's search corners: the 256 x 256 cell that runs 2.6x slower (spills?), and TN 8 at the winner.
const winner = kernelParams(gpu, byName("autotune"), undefined, SHAPE);
// (BK 8: at 16 the tiles need 66 KB of workgroup memory, over the 48 KB WebGPU allows.)
await capture("autotune 256x256 BK=8", byName("autotune"), {
  ...winner,
  BM: 256,
  BN: 256,
  BK: 8,
  TN: 16,
});
await capture("autotune TN=8 at the winner's tile", byName("autotune"), { ...winner, TN: 8 });
// 10's knob points: the loads in flight differ, and so may the registers.
for (const [BM, BN] of [[64, 64], [64, 128], [128, 128]]) {
  await capture(`double_buffer ${BM}x${BN}`, byName("double_buffer"), { BM, BN });
}
// 12's machine code per k step: at the 4096 tile, BK 8 against 16 (the difference in binary size
// is 8 k steps' code when the loop is written out), with and without AHEAD.
const generatedTile = kernelParams(gpu, byName("generated"), undefined, SHAPE);
for (const BK of [8, 16]) {
  for (const t of [[0, 0, 0], [1, 0, 0], [1, 1, 0], [1, 1, 1]]) {
    const [UNROLL, NESTED, AHEAD] = t;
    await capture(
      `generated BK=${BK} ${JSON.stringify({ UNROLL, NESTED, AHEAD })}`,
      byName("generated"),
      { ...generatedTile, BK, UNROLL, NESTED, AHEAD, LITERAL_BUFFER: 0 },
    );
  }
  const { BM, BN, TN, PAD, GROUP_M } = generatedTile;
  await capture(`autotune BK=${BK} at 12's tile`, byName("autotune"), {
    BM,
    BN,
    BK,
    TN,
    PAD,
    GROUP_M,
  });
}
// 14's control: every f16 variant at step 12's own tile, as notebook 14 runs them side by side.
const tile = kernelParams(gpu, byName("generated"), undefined, SHAPE);
for (
  const [name, f16] of [
    ["f16_storage", { F16: 1 }],
    ["f16_storage_vec4", { F16: 1, F16_VEC4: 1 }],
    ["f16_storage_u32", { F16: 1, F16_VEC4: 2 }],
    ["f16", { F16: 2 }],
    ["f16_vec4", { F16: 2, F16_VEC4: 1 }],
    ["f16_u32", { F16: 2, F16_VEC4: 2 }],
  ] as const
) {
  await capture(`${name} at 12's tile`, byName(name), { ...tile, ...f16 });
}
// Every knob point, laid over the step's defaults as the notebooks' knob cells run them, so the
// code behind each knob row can be read (lab/driver/sass.ts). 12's transforms are captured above.
for (const spec of KERNELS) {
  if (!spec.knob || spec.name === "shapes" || spec.name === "generated") continue;
  for (const point of spec.knob.points) {
    await capture(`${spec.name} knob ${JSON.stringify(point)}`, spec, { ...spec.params, ...point });
  }
}
console.error(`wrote ${outFile}`);
