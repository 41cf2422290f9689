import { acquireGpu } from "../../lib/gpu.ts";
import { kernelParams, runKernel } from "../../lib/runner.ts";
import { findKernel } from "../../lib/registry.ts";
import { generateWgsl } from "./variants.ts";
const out = Deno.env.get("OUT") ?? "/tmp";
const gpu = await acquireGpu();
const generated = findKernel("generated")!;
const spec = { ...generated, generate: (p: Record<string, number>) => generateWgsl(p as never) };
const eleven = findKernel("autotune")!;
const sq = { m: 4096, k: 4096, n: 4096 };
const rows: unknown[] = [];
const A = {
  BM: 128,
  BN: 256,
  BK: 16,
  TN: 16,
  PAD: 0,
  GROUP_M: 8,
  AHEAD: 0,
  UNROLL: 1,
  NESTED: 1,
  LITERAL_BUFFER: 1,
};
const B = { ...A, TN: 8, GROUP_M: 1, AHEAD: 1 };
const C = { ...A, BN: 128, BK: 8, TN: 8, GROUP_M: 1 };
const r11 = await runKernel(gpu, eleven, sq, {
  params: kernelParams(gpu, eleven, undefined, sq),
  budgetMs: 300,
});
console.log("11", r11.gflops?.toFixed(0), r11.validated);
const variants: [string, Record<string, number>][] = [
  ["A", A],
  ["A order11", { ...A, ORDER11: 1 }],
  ["A guard", { ...A, GUARD: 1 }],
  ["A fold", { ...A, FOLD: 1 }],
  ["A all", { ...A, ORDER11: 1, GUARD: 1, FOLD: 1 }],
  ["B", B],
  ["B guard", { ...B, GUARD: 1 }],
  ["B fold", { ...B, FOLD: 1 }],
  ["C", C],
  ["C guard", { ...C, GUARD: 1 }],
  ["C fold", { ...C, FOLD: 1 }],
  ["C guard fold", { ...C, FOLD: 1, GUARD: 1 }],
  ["A", A],
];
for (const [name, p] of variants) {
  const r = await runKernel(gpu, spec, sq, { params: p, budgetMs: 300, checkRows: 8 });
  console.log(name, r.validated ? r.gflops!.toFixed(0) : r.error);
  rows.push({
    name,
    params: p,
    gflops: r.gflops,
    validated: r.validated,
    relErr: r.relErr,
    medianMs: r.medianMs,
  });
  Deno.writeTextFileSync(
    `${out}/variants.json`,
    JSON.stringify(
      { device: gpu.summary.description, date: new Date().toISOString(), eleven: r11.gflops, rows },
      null,
      1,
    ),
  );
}
