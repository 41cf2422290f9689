/**
 * Notebook 12's displays: what naga puts into the SPIR-V of 11 and 12 (data/naga/clamps.json),
 * 11's k loop beside the generated one, and each transform of the generator measured on a GPU
 * host (data/transforms/<device>.json).
 */
import { loadKernelSource } from "../gpu.ts";
import { loadNagaClamps } from "../naga.ts";
import { driverStatistic, loadDriverRecord } from "../driver_registers.ts";
import { loadTransforms } from "../transforms.ts";
import {
  type GeneratedParams,
  STEP_TRANSFORMS,
  tileBody,
} from "../../kernels/12_generated/generate.ts";
import { escapeHtml, showTable } from "./format.ts";
import { showBundle } from "./jupyter.ts";
import { kernel } from "./steps.ts";
import { previousStep } from "../registry.ts";

/** A titled block of code, as Markdown, HTML and plain text. */
export async function showCode(title: string, code: string, language = "wgsl"): Promise<void> {
  await showBundle({
    "text/plain": `${title}\n\n${code}`,
    "text/markdown": `**${title}**\n\n\`\`\`${language}\n${code}\n\`\`\``,
    "text/html": `<p><b>${escapeHtml(title)}</b></p><pre><code class="language-${language}">` +
      `${escapeHtml(code)}</code></pre>`,
  });
}

/** The block of `source` that opens on the first line matching `opening`, to its closing brace. */
export function blockAt(source: string, opening: RegExp): string {
  const lines = source.split("\n");
  const start = lines.findIndex((l) => opening.test(l));
  if (start < 0) throw new Error(`no line matches ${opening}`);
  let depth = 0;
  for (let i = start; i < lines.length; i++) {
    depth += (lines[i].match(/{/g) ?? []).length - (lines[i].match(/}/g) ?? []).length;
    if (depth === 0) {
      const indent = lines[start].match(/^\s*/)![0].length;
      return lines.slice(start, i + 1).map((l) => l.slice(indent)).join("\n");
    }
  }
  throw new Error(`the block at ${opening} does not close`);
}

/**
 * The k loop of the step `step` builds on, as its file has it, then the first k step of the
 * loop `step`'s generator writes out for the same tile, reading the buffer its kernel reads
 * (`cur`, or the literal 0 with LITERAL_BUFFER; the other BK - 1 steps differ only in the
 * literal row).
 */
export async function showKLoops(
  step: string,
  params: Partial<GeneratedParams> = {},
): Promise<void> {
  const generated = kernel(step);
  const before = previousStep(generated)!;
  const loop = blockAt(
    await loadKernelSource(before.file),
    /for \(var p = 0u; p < BK; p\+\+\)/,
  );
  await showCode(`${before.id}: the k loop (kernels/${before.file})`, loop);
  const p = { ...generated.params, ...params } as unknown as GeneratedParams;
  const buffer = p.LITERAL_BUFFER ? 0 : "cur";
  const steps = tileBody(p, buffer, "").split("\n");
  const perStep = steps.length / p.BK;
  const reads = p.LITERAL_BUFFER
    ? "buffer 0 (a literal: two tiles per trip)"
    : "buffer cur = t % 2 (one tile per trip)";
  await showCode(
    `${generated.id}: k step 0 of ${p.BK}, written out, reading ${reads} (BK=${p.BK}, ` +
      `TN=${p.TN}; steps 1..${p.BK - 1} read rows 1..${p.BK - 1})`,
    steps.slice(0, perStep).join("\n"),
  );
}

/** What naga emitted for 11 and for each combination of 12's transforms, per k step. */
export async function showNagaReport(): Promise<void> {
  const report = await loadNagaClamps();
  await showTable(
    [
      "kernel",
      "variant",
      "clamps / k step",
      "of which change in the loop",
      "distinct clamps / k step",
      "distinct that change in the loop",
      "loop-counter updates / k step",
      "SPIR-V instructions / k step",
    ],
    report.kernels.map((k) => [
      k.kernel,
      k.variant,
      k.hotLoop.clampsPerKStep,
      k.hotLoop.loopVariantClampsPerKStep,
      k.hotLoop.distinctClampsPerKStep,
      k.hotLoop.distinctLoopVariantClampsPerKStep,
      k.hotLoop.counterUpdatesPerKStep,
      k.hotLoop.instructionsPerKStep,
    ]),
    `SPIR-V from naga ${report.naga} (wgpu ${report.wgpu}, Deno ${report.deno}) as the Vulkan ` +
      `driver (${report.adapter}) received it, tile ${paramsOf(report.kernels[0].params)}`,
  );
  const eleven = report.kernels.find((k) => k.variant === "as is");
  // The step's own kernel: the variant with exactly the step's transforms.
  const stepTransforms = Object.keys(STEP_TRANSFORMS)
    .filter((name) => STEP_TRANSFORMS[name as keyof typeof STEP_TRANSFORMS]).join(" + ");
  const twelve = report.kernels.find((k) =>
    k.kernel !== eleven?.kernel &&
    Object.entries(STEP_TRANSFORMS).every(([name, on]) => k.params[name] === on)
  );
  if (eleven) await showCode("11: one fragment read in the k loop", eleven.excerpts.fragmentRead);
  if (eleven) await showCode("11: naga's loop counter", eleven.excerpts.loopCounter);
  if (twelve) {
    await showCode(
      `12 (the step's kernel: ${stepTransforms}): the same read, written out`,
      twelve.excerpts.fragmentRead,
    );
  }
  if (twelve?.excerpts.clampedIndexDefinition) {
    await showCode(
      "12: where its one clamped index is computed (before the loop)",
      twelve.excerpts.clampedIndexDefinition,
    );
  }
}

const paramsOf = (p: Record<string, number>) =>
  Object.entries(p).map(([k, v]) => `${k}=${v}`).join(" ");

/**
 * Each combination of 12's transforms at one tile configuration, measured on a GPU host beside
 * 11 and cuBLAS in the same run. Says so when no such measurement is committed.
 */
export async function showTransforms(device = "nvidia-h200"): Promise<void> {
  const t = await loadTransforms(device);
  if (!t) {
    await showTable(["note"], [[`no transform measurement committed for ${device}`]]);
    return;
  }
  const on = (x: Record<string, number>) =>
    [
      x.UNROLL ? "k loop written out" : "",
      x.NESTED ? "nested tiles" : "",
      x.LITERAL_BUFFER ? "literal buffer" : "",
      x.AHEAD ? "AHEAD" : "",
    ].filter(Boolean).join(" + ") || "none (loop, flat tiles, t % 2)";
  const ref = t.autotune[0];
  const cublas = t.cublas.find((c) => c.shape.n === ref?.shape.n);
  // The driver's register count for the same tile and transforms, where a capture has it.
  const driver = await loadDriverRecord(device);
  const pipelineOf = (transforms: Record<string, number>) => {
    const want: Record<string, number> = { ...t.params, ...transforms };
    return driver?.rows.find((r) =>
      r.label.startsWith("generated ") &&
      Object.entries(want).every(([k, v]) => r.params[k] === v)
    );
  };
  const pipelines = t.variants.map((v) =>
    pipelineOf(v.transforms as unknown as Record<string, number>)
  );
  const withRegisters = pipelines.some((p) => p?.driver?.registers !== undefined);
  await showTable(
    [
      "transforms",
      "shape",
      "GFLOP/s",
      "x 11",
      "of cuBLAS",
      "rel. error",
      ...(withRegisters ? ["registers (driver)", "machine code KB"] : []),
    ],
    [
      ...t.variants.map((v, i) => [
        on(v.transforms as unknown as Record<string, number>),
        `${v.shape.m}^3`,
        v.gflops,
        ref ? v.gflops / ref.gflops : undefined,
        cublas ? v.gflops / cublas.gflops : undefined,
        v.relErr,
        ...(withRegisters
          ? [
            pipelines[i]?.driver?.registers,
            pipelines[i] && driverStatistic(pipelines[i], /binary size/i)! / 1024,
          ]
          : []),
      ]),
      ...t.autotune.map((
        a,
      ) => [
        "11 as it is",
        `${a.shape.m}^3`,
        a.gflops,
        1,
        cublas ? a.gflops / cublas.gflops : undefined,
        a.relErr,
      ]),
      ...t.cublas.map((
        c,
      ) => [
        "cuBLAS SGEMM",
        `${c.shape.m}^3`,
        c.gflops,
        ref ? c.gflops / ref.gflops : undefined,
        1,
        c.relErr,
      ]),
    ],
    `${t.device.description}, ${t.date.slice(0, 10)}, commit ${t.commit}: 12 at ` +
      `${paramsOf(t.params)} with each transform on (1) or off (0)` +
      (withRegisters && driver
        ? `; registers per invocation and the size of the machine code, as the driver reports ` +
          `them for the same generated text, at ` +
          `commit ${driver.commit}, ${driver.started.slice(0, 10)} (data/driver/${device}.json)`
        : ""),
  );
}
