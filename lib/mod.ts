/**
 * gemm-ladder: the one library every notebook, test and the bench import.
 * Each section below is a small module; this file only re-exports.
 */
export * from "./errors.ts";
export * from "./matrix.ts";
export * from "./reference.ts";
export * from "./accuracy.ts";
export * from "./gpu.ts";
export * from "./platform.ts";
export * from "./registry.ts";
export * from "./timing.ts";
export * from "./runner.ts";
export * from "./measure.ts";
export * from "./record.ts";
export * from "./tuning.ts";
export * from "./search.ts";
export * from "./cpu.ts";
export * from "./cpu_bench.ts";
export * from "./peers/openblas.ts";
export * from "./ceilings.ts";
export * from "./notebook/mod.ts";
export * from "./ablation.ts";
export * from "./naga.ts";
