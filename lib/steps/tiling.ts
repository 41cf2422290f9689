/**
 * Launch geometry and parameter rules shared by the tiled steps' descriptions
 * (kernels/NN_name/step.ts).
 */
import type { Shape } from "../matrix.ts";
import type { Params } from "./spec.ts";
import { ceilDiv } from "./launch.ts";

/** Bytes of one f32. */
export const F32 = 4;
/** The kernel handles any M, K and N itself. */
export const ANY = { m: 1, n: 1, k: 1 };
/** vec4 rows of A and B need K and N to be multiples of 4; M is free. */
export const VEC4 = { m: 1, n: 4, k: 4 };

/** Launch grid for kernels that tile C into BM x BN blocks (x over columns, y over rows). */
export const blockGrid = (s: Shape, p: Params): [number, number, number] => [
  ceilDiv(s.n, p.BN),
  ceilDiv(s.m, p.BM),
  1,
];

/** Invocations of the kernels where each one owns an 8 x 8 block of C. */
export const threads8x8 = (p: Params): number => (p.BM / 8) * (p.BN / 8);

/** vec4 loads per invocation per tile, of A and of B, when each invocation owns 8 x 8 of C. */
export function loadsPerInvocation(p: Params): [number, number] {
  const t = threads8x8(p);
  return [p.BM * p.BK / 4 / t, p.BK * p.BN / 4 / t];
}

/** The message of the first rule that does not hold, or undefined when all hold. */
export function need(...rules: [boolean, string][]): string | undefined {
  return rules.find(([ok]) => !ok)?.[1];
}

/**
 * A control's switch: parameter `name` is one of `values` (`unset` stands for it when the parameter
 * is not given, as the kernel's override default does).
 */
export function switchRule(p: Params, name: string, values: number[], unset?: number) {
  return need([values.includes(p[name] ?? unset), `${name} is ${values.join(" or ")}`]);
}

/**
 * Workgroup bytes of the A tile (BK x BM, transposed, each row padded by PAD vec4s) and the B
 * tile (BK x BN), `buffers` of each (2 when double-buffered), at `element` bytes per value.
 */
export const tileBytes = (p: Params, buffers = 1, element = F32): number =>
  buffers * (p.BK * (p.BM + 4 * (p.PAD ?? 0)) + p.BK * p.BN) * element;
