/**
 * WGSL that every generated product kernel declares the same way: the Dims uniform and the four
 * bindings the runner binds (A, B, C, dims), so a generator writes only its own loop.
 */

/** How a generated kernel reads A and B, and what the runner padded. */
export interface ProductInterface {
  /**
   * The element A and B are read as: one f32 or f16, a vec4 of them, or a vec2<u32> holding four
   * f16 (C: f16 for the f16 forms, else f32).
   */
  element: "f32" | "vec4<f32>" | "f16" | "vec4<f16>" | "vec2<u32>";
  /** B's rows are padded to whole vec4s when N is not a multiple of 4 (C's stride stays N). */
  paddedB: boolean;
}

/** The Dims struct and the four bindings, with the comments a reader of the text needs. */
export function productInterface({ element, paddedB }: ProductInterface): string {
  const c = element === "f32" || element === "vec4<f32>" ? "f32" : "f16";
  const zero = element.startsWith("vec")
    ? "the zero vec4"
    : element === "f16"
    ? "a zero"
    : "the zero";
  return `struct Dims {
  M: u32,
  K: u32,
  N: u32,
  // Row stride of C: ${
    paddedB
      ? "the real N (B's rows are padded to whole vec4s when N is not)."
      : "N (nothing is padded for this kernel)."
  }
  ldc: u32,
}

// Out-of-bounds loads read ${zero} the runner keeps after A's and B's data.
@group(0) @binding(0) var<storage, read> A: array<${element}>;
@group(0) @binding(1) var<storage, read> B: array<${element}>;
@group(0) @binding(2) var<storage, read_write> C: array<${c}>;
@group(0) @binding(3) var<uniform> dims: Dims;`;
}

/**
 * Scalar loads of A and B at any element index: an index outside the matrix (inside false) reads
 * the last element of the binding, the zero the runner keeps after the data.
 */
export const SCALAR_LOADS = `fn loadA(i: u32, inside: bool) -> f32 {
  return A[select(arrayLength(&A) - 1u, i, inside)];
}

fn loadB(i: u32, inside: bool) -> f32 {
  return B[select(arrayLength(&B) - 1u, i, inside)];
}`;

/** `n` copies of `line(i)`, joined as lines: the generators' unrolled statements. */
export const lines = (n: number, line: (i: number) => string): string =>
  Array.from({ length: n }, (_, i) => line(i)).join("\n");

/**
 * A kernel generator that refuses a configuration `invalid` rules out (a RangeError naming it by
 * `name`) and writes each configuration's text once.
 */
export function cachedKernel<C>(
  name: (c: C) => string,
  invalid: (c: C) => string | undefined,
  emit: (c: C) => string,
): (c: C) => string {
  const cache = new Map<string, string>();
  return (c) => {
    const key = JSON.stringify(c);
    let text = cache.get(key);
    if (text === undefined) {
      const why = invalid(c);
      if (why) throw new RangeError(`${name(c)}: ${why}`);
      text = emit(c);
      cache.set(key, text);
    }
    return text;
  };
}
