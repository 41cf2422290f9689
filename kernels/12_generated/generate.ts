/**
 * The WGSL of step 12, written out by TypeScript for one set of tile parameters.
 *
 * Step 11's kernel is one WGSL file with `override` constants: its k loop is a real loop and its
 * workgroup tiles are flat arrays indexed by `buffer * TILE + p * ROW + column`. WebGPU keeps
 * every shader memory-safe, so naga (the WGSL compiler inside Deno's and Firefox's WebGPU)
 * clamps each dynamic index into a workgroup array, `min(i, length - 1)`, and bounds every loop
 * with a counter. Inside 11's k loop both are dynamic, so every fragment read pays a clamp and
 * every trip pays the counter. This generator hands the compiler constants instead:
 *
 * - the k loop of a tile is written out (`p` is a literal in each of the BK copies);
 * - the tiles are nested arrays `[buffer][k row][vec4 column]`, so in the written-out loop the
 *   buffer and the row are literals (no clamp) and only the column is dynamic, the same in every
 *   copy: naga still clamps it at each read, but with loop-invariant operands, which the driver
 *   can merge and compute once, before the loop;
 * - optionally (LITERAL_BUFFER), the double-buffer loop handles two tiles per trip, so which
 *   buffer a tile reads is a literal too. It doubles the loop's text, which can cost more than
 *   the clamps it removes, so the step leaves it to the search (STEP_TRANSFORMS).
 *
 * Everything else is 11's algorithm: each invocation owns 8 rows x TN columns of C in vec4
 * registers, a 32-invocation subgroup owns a 32 x 8*TN block, the next tile's global loads are
 * issued before the current tile's multiply-adds when there is a next tile, bounds checks select
 * the load's address (an element outside the matrix reads the zero vec4 the runner keeps after A
 * and B), and C is written at its real size. AHEAD 1 reorders the written-out k loop: each step
 * reads the next step's fragments before its own multiply-adds (the search decides). The text is deterministic: the same parameters give the same text.
 */
import { lines, productInterface } from "../../lib/steps/wgsl.ts";

/** The generator's parameters (the step's tile parameters). */
export interface GeneratedParams {
  /** Rows and columns of C per workgroup, and the depth of one k tile. */
  BM: number;
  BN: number;
  BK: number;
  /** Columns of C per invocation: 8 (two vec4s per row) or 16 (four). */
  TN: number;
  /** Extra vec4s at the end of each k row of the A tile (0 or 1). */
  PAD: number;
  /** Tile rows launched together, column by column, so tiles in flight share L2 lines (1 = off). */
  GROUP_M: number;
  /** 1: read the next k row's fragments before the current row's multiply-adds. */
  AHEAD: number;
  /**
   * The three transforms, each 1 (on, the step's kernel) or 0 (off, to measure what it brings):
   * UNROLL writes the k loop out (0 keeps a loop over a dynamic `p`), NESTED lays the tiles out
   * as `[buffer][k row][column]` (0: flat arrays, `buffer * TILE + p * ROW + column`), and
   * LITERAL_BUFFER handles two tiles per trip so the buffer is a literal (0: `t % 2`).
   */
  UNROLL: number;
  NESTED: number;
  LITERAL_BUFFER: number;
  /**
   * 1: split K over the grid's z dimension (step 13's split-K plan). Workgroup z takes one
   * slice of K, whole k tiles long, and writes its partial C to slice z of the C binding (a
   * workspace of grid.z partial products, which the runner sums in slice order). 0 or absent:
   * the whole K, C written directly; the text is then exactly step 12's.
   */
  SPLIT_K?: number;
  /**
   * Precision (step 14 and its storage variant): 0 or absent, f32 throughout (step 12); 1, A, B
   * and C stored as f16, widened to f32 as they are loaded (tiles and multiply-adds in f32);
   * 2, f16 tiles and packed f16 multiply-adds, each tile's BK-long f16 sums added into f32
   * accumulators. f16 matrices are read one element at a time (no padding: any M, K, N).
   */
  F16?: number;
  /**
   * With F16: 1 reads A as `vec4<f16>` where K is a multiple of 4 and B where N is, one load per
   * four values as step 12 reads f32 (elsewhere element by element, as with 0, the default); 2
   * reads the same four values as one `vec2<u32>`, unpacked with `unpack2x16float`: the same 8
   * bytes per load, loaded as 32-bit words instead of as f16.
   */
  F16_VEC4?: number;
}

/** Every transform on. */
export const ALL_TRANSFORMS = { UNROLL: 1, NESTED: 1, LITERAL_BUFFER: 1 } as const;

/**
 * The step's defaults: the loop written out over nested tiles, the buffer a tile reads `t % 2`.
 * The literal buffer takes the last clamps out of the loop but doubles the loop's text (two
 * tiles per trip), so whether it pays is left to the search.
 */
export const STEP_TRANSFORMS = { UNROLL: 1, NESTED: 1, LITERAL_BUFFER: 0 } as const;

/** The step's default parameters: 128 x 128 x 8 tiles, TN 8, STEP_TRANSFORMS. */
export const DEFAULTS: GeneratedParams = {
  BM: 128,
  BN: 128,
  BK: 8,
  TN: 8,
  PAD: 0,
  GROUP_M: 1,
  AHEAD: 0,
  ...STEP_TRANSFORMS,
};

/** The generator's parameters out of the runner's (missing ones take the defaults). */
export const generatedParams = (p: Record<string, number>): GeneratedParams => ({
  ...DEFAULTS,
  ...p,
});

/** Rows of C per invocation: two vec4s of A, at row offsets 0 and 16 of the subgroup's block. */
const ROWS = 8;

export const invocations = (p: GeneratedParams) => (p.BM / ROWS) * (p.BN / p.TN);

/** vec4 loads of A and of B that each invocation issues per k tile. */
export function loadsPerInvocation(p: GeneratedParams): { a: number; b: number } {
  const t = invocations(p);
  return { a: (p.BM * p.BK) / 4 / t, b: (p.BK * p.BN) / 4 / t };
}

/** Why these parameters cannot be generated (undefined when they can). */
export function whyInvalid(p: GeneratedParams): string | undefined {
  const loads = loadsPerInvocation(p);
  const rules: [boolean, string][] = [
    [p.TN === 8 || p.TN === 16, "TN must be 8 or 16"],
    [p.BK % 4 === 0 && p.BK >= 4, "BK must be a multiple of 4 (vec4 rows of A)"],
    [p.BM % 32 === 0, "BM must be a multiple of 32 (one subgroup block is 32 rows)"],
    [p.BN % (8 * p.TN) === 0, "BN must be a multiple of 8 * TN (one subgroup block's columns)"],
    [
      [loads.a, loads.b].every((l) => Number.isInteger(l) && l >= 1 && l <= 8),
      "each invocation must load 1 to 8 whole vec4s of A and of B per tile",
    ],
    [invocations(p) <= 512, "at most 512 invocations (1024 leave 64 registers each on NVIDIA)"],
    [p.PAD === 0 || p.PAD === 1, "PAD must be 0 or 1"],
    [Number.isInteger(p.GROUP_M) && p.GROUP_M >= 1, "GROUP_M must be a whole number >= 1"],
    [
      [p.AHEAD, p.UNROLL, p.NESTED, p.LITERAL_BUFFER].every((v) => v === 0 || v === 1),
      "AHEAD, UNROLL, NESTED and LITERAL_BUFFER must be 0 or 1",
    ],
    [p.UNROLL === 1 || p.AHEAD === 0, "AHEAD reorders the written-out loop: it needs UNROLL"],
    [!p.SPLIT_K || p.SPLIT_K === 1, "SPLIT_K must be 0 or 1"],
    [[undefined, 0, 1, 2].includes(p.F16), "F16 must be 0, 1 or 2"],
    [!(p.F16 && p.SPLIT_K), "split K is written for f32 only"],
    [[undefined, 0, 1, 2].includes(p.F16_VEC4), "F16_VEC4 must be 0, 1 or 2"],
    [!p.F16_VEC4 || !!p.F16, "F16_VEC4 reads f16 matrices: it needs F16"],
  ];
  return rules.find(([ok]) => !ok)?.[1];
}

const cache = new Map<string, string>();

/** The kernel's WGSL for these parameters (cached: one text per parameter set). */
export function generateWgsl(p: GeneratedParams): string {
  const key = JSON.stringify([
    p.BM,
    p.BN,
    p.BK,
    p.TN,
    p.PAD,
    p.GROUP_M,
    p.AHEAD,
    p.UNROLL,
    p.NESTED,
    p.LITERAL_BUFFER,
    p.SPLIT_K ?? 0,
    p.F16 ?? 0,
    p.F16_VEC4 ?? 0,
  ]);
  let text = cache.get(key);
  if (text === undefined) {
    const why = whyInvalid(p);
    if (why) throw new RangeError(`generated kernel ${key}: ${why}`);
    // A zero offset reads as noise, and naga keeps the addition: drop it.
    text = emit(p).replaceAll(" + 0u", "");
    cache.set(key, text);
  }
  return text;
}

/** A buffer index as WGSL: a literal gets its `u`. */
const u = (i: Index) => typeof i === "number" ? `${i}u` : i;

/** A buffer or k row: a literal number, or a WGSL expression. */
type Index = number | string;

/** An expression in parentheses when it is more than a name. */
const group = (e: string) => /^\w+$/.test(e) ? e : `(${e})`;

/**
 * Element `col` of k row `k` in buffer `buf` of tile `tile` ("As" or "Bs"). Nested tiles index
 * each level; flat ones add the parts up, folding literal parts into one number.
 */
function tileIndex(
  p: GeneratedParams,
  tile: "As" | "Bs",
  buf: Index,
  k: Index,
  col: string,
) {
  if (p.NESTED) return `${tile}[${buf}][${k}][${col}]`;
  const row = tile === "As" ? p.BM / 4 + p.PAD : p.BN / 4;
  const size = p.BK * row;
  const literal = (typeof buf === "number" ? buf * size : 0) +
    (typeof k === "number" ? k * row : 0);
  const parts = [
    ...(typeof buf === "string" ? [`${group(buf)} * ${size}u`] : []),
    ...(typeof k === "string" ? [`${group(k)} * ${row}u`] : []),
    ...(literal ? [`${literal}u`] : []),
    col,
  ];
  return `${tile}[${parts.join(" + ")}]`;
}

/**
 * The multiply-adds of one tile read from buffer `buf`: written out (BK copies, `k` a literal in
 * each) or, without UNROLL, a loop over a dynamic `p`.
 */
export function tileBody(p: GeneratedParams, buf: Index, indent = "      "): string {
  const vecs = p.TN / 4;
  // Packed f16 multiply-adds go into the tile's f16 sums `h`, f32 ones into the accumulators.
  const sum = p.F16 === 2 ? "h" : "c";
  const read = (k: Index, tag: string, pad = indent) =>
    [
      `let a0${tag} = ${tileIndex(p, "As", buf, k, "a0At")};`,
      `let a1${tag} = ${tileIndex(p, "As", buf, k, "a1At")};`,
      ...Array.from(
        { length: vecs },
        (_, j) => `let b${j}${tag} = ${tileIndex(p, "Bs", buf, k, `b${j}At`)};`,
      ),
    ].map((s) => pad + s).join("\n");
  const fma = (tag: string, pad = indent) =>
    Array.from({ length: ROWS }, (_, r) => {
      const a = `a${r >> 2}${tag}.${"xyzw"[r & 3]}`;
      return pad + Array.from({ length: vecs }, (_, j) => `${sum}${r}${j} += ${a} * b${j}${tag};`)
        .join(" ");
    }).join("\n");
  if (!p.UNROLL) {
    const inner = indent + "  ";
    return [
      `${indent}for (var p = 0u; p < ${p.BK}u; p++) {`,
      read("p", "", inner),
      fma("", inner),
      `${indent}}`,
    ].join("\n");
  }
  const out: string[] = [];
  if (p.AHEAD) {
    out.push(read(0, "_0"));
    for (let k = 0; k < p.BK; k++) {
      if (k + 1 < p.BK) out.push(read(k + 1, `_${k + 1}`));
      out.push(fma(`_${k}`));
    }
  } else {
    for (let k = 0; k < p.BK; k++) out.push(read(k, `_${k}`), fma(`_${k}`));
  }
  return out.join("\n");
}

/** The header line each precision adds to the kernel's comment. */
const PRECISION_NOTE = {
  1: "// F16=1: A, B and C hold f16; the loads widen them to f32, tiles and multiply-adds are f32.",
  2: "// F16=2: A, B, C and the tiles hold f16; a tile's multiply-adds run on vec4<f16> into f16\n" +
    "// sums, added into the f32 accumulators after each tile, so the rounding does not grow with K.",
} as const;

/** One f16 sum per f32 accumulator, zeroed at the start of each tile (F16=2). */
const f16Sums = (p: GeneratedParams) =>
  lines(ROWS, (r) =>
    "        " +
    Array.from({ length: p.TN / 4 }, (_, j) => `var h${r}${j} = vec4<f16>(0.0h);`).join(" "));

/** The tile's f16 sums added into the f32 accumulators (F16=2). */
const f16Flush = (p: GeneratedParams) =>
  lines(ROWS, (r) =>
    "        " +
    Array.from({ length: p.TN / 4 }, (_, j) => `c${r}${j} += vec4<f32>(h${r}${j});`).join(" "));

/** A vec4<f16> as the tiles hold it: as it is for f16 tiles (F16=2), widened for f32 tiles. */
const asTile = (p: GeneratedParams, tileVec: string, e: string) =>
  p.F16 === 2 ? e : `${tileVec}(${e})`;

/**
 * Four f16 elements read one by one into the tile's vec4: `read(plus)` is the read of element
 * `at + i` (`plus` is "" or " + iu"), shared by both f16 load paths.
 */
const fourF16 = (p: GeneratedParams, tileVec: string, read: (plus: string) => string) =>
  asTile(
    p,
    tileVec,
    `vec4<f16>(\n${lines(4, (i) => `    ${read(i ? ` + ${i}u` : "")},`)}\n  )`,
  );

/**
 * loadA and loadB for f16 matrices: four elements read one by one, so K and N need no padding;
 * an element outside the matrix reads the zero the runner keeps after the data (the address is
 * selected, not the value). `tileVec` is what the tiles hold: the f16 vec4 is widened for f32.
 */
function f16Loads(p: GeneratedParams, tileVec: string): string {
  const four = (m: "A" | "B", inside: (plus: string) => string) =>
    fourF16(p, tileVec, (plus) => `${m}[select(last, at${plus}, ${inside(plus)})]`);
  return `// Four k values of row \`row\` of A, from column \`k\`.
fn loadA(row: u32, k: u32) -> ${tileVec} {
  let at = row * dims.K + k;
  let last = arrayLength(&A) - 1u;
  let inRow = row < dims.M;
  return ${four("A", (plus) => `inRow && k${plus} < dims.K`)};
}

// Four columns of row \`k\` of B, from column \`col\`.
fn loadB(k: u32, col: u32) -> ${tileVec} {
  let at = k * dims.N + col;
  let last = arrayLength(&B) - 1u;
  let inK = k < dims.K;
  return ${four("B", (plus) => `inK && col${plus} < dims.N`)};
}
`;
}

/**
 * loadA and loadB for f16 matrices bound as `vec4<f16>` (F16_VEC4=1), or as `vec2<u32>` words
 * unpacked with `unpack2x16float` (F16_VEC4=2). Where K (for A) or N (for B) is a multiple of 4,
 * the four values a load asks for start on a vec4 (its column is one too) and are all inside the
 * matrix or all outside it: one load, as step 12 reads f32. Otherwise the four are read element
 * by element, as f16Loads does; the branch is on the uniform dims, so every invocation takes the
 * same path. Outside the matrix a load reads the zero vec4 after the data.
 */
function f16Vec4Loads(p: GeneratedParams, tileVec: string): string {
  const words = p.F16_VEC4 === 2;
  const wrap = (e: string) => asTile(p, tileVec, e);
  // Four values at vec4 index i: the f16 vec4 itself, or the two words unpacked (little-endian:
  // the low half of each word is the earlier value), as f32 or as the f16 tiles hold them.
  const quad = (m: "A" | "B", i: string) =>
    words
      ? (tileVec === "vec4<f32>" ? `quad${m}(${i})` : `vec4<f16>(quad${m}(${i}))`)
      : wrap(`${m}[${i}]`);
  const quadOf = (m: "A" | "B") =>
    words
      ? `// Four f16 values of ${m} from vec4 index i, unpacked from two 32-bit words.
fn quad${m}(i: u32) -> vec4<f32> {
  let w = ${m}[i];
  return vec4<f32>(unpack2x16float(w.x), unpack2x16float(w.y));
}

`
      : "";
  const elementOf = (m: "A" | "B") =>
    `${quadOf(m)}// Element i of ${m}, or the zero after its data when inside is false.
fn element${m}(i: u32, inside: bool) -> f16 {
  let at = select(arrayLength(&${m}) * 4u - 4u, i, inside);
  return ${words ? `f16(quad${m}(at / 4u)[at % 4u])` : `${m}[at / 4u][at % 4u]`};
}`;
  const four = (m: "A" | "B", inside: (plus: string) => string) =>
    fourF16(p, tileVec, (plus) => `element${m}(at${plus}, ${inside(plus)})`);
  return `${elementOf("A")}

${elementOf("B")}

// Four k values of row \`row\` of A, from column \`k\` (a multiple of 4).
fn loadA(row: u32, k: u32) -> ${tileVec} {
  let at = row * dims.K + k;
  let inRow = row < dims.M;
  if (dims.K % 4u == 0u) {
    return ${quad("A", "select(arrayLength(&A) - 1u, at / 4u, inRow && k < dims.K)")};
  }
  return ${four("A", (plus) => `inRow && k${plus} < dims.K`)};
}

// Four columns of row \`k\` of B, from column \`col\` (a multiple of 4).
fn loadB(k: u32, col: u32) -> ${tileVec} {
  let at = k * dims.N + col;
  let inK = k < dims.K;
  if (dims.N % 4u == 0u) {
    return ${quad("B", "select(arrayLength(&B) - 1u, at / 4u, inK && col < dims.N)")};
  }
  return ${four("B", (plus) => `inK && col${plus} < dims.N`)};
}
`;
}

function emit(p: GeneratedParams): string {
  const f16 = (p.F16 ?? 0) > 0;
  // What the tiles hold: f16 for packed f16 arithmetic, else f32.
  const tileVec = p.F16 === 2 ? "vec4<f16>" : "vec4<f32>";
  const threads = invocations(p);
  const loads = loadsPerInvocation(p);
  const vecs = p.TN / 4;
  const as = p.BM / 4 + p.PAD;
  const bn4 = p.BN / 4;
  const bk4 = p.BK / 4;
  // Invocation t loads vec4 t + j * threads of each tile: rows advance by a constant per j.
  const aRowStep = threads / bk4;
  const bRowStep = threads / bn4;
  const acc = lines(
    ROWS,
    (r) =>
      "  " + Array.from({ length: vecs }, (_, j) => `var c${r}${j} = vec4<f32>(0.0);`).join(" "),
  );
  const half = (buf: Index, other: Index) =>
    `    {
      // Tile t + 1 into registers while tile t (buffer ${buf}) is multiplied.
      let k1 = (t + 1u) * ${p.BK}u;
      let hasNext = t + 1u < tiles;
${lines(loads.a, (j) => `      var la${j}: ${tileVec};`)}
${lines(loads.b, (j) => `      var lb${j}: ${tileVec};`)}
      if (hasNext) {
${lines(loads.a, (j) => `        la${j} = loadA(m0 + aRow + ${j * aRowStep}u, k1 + aCol);`)}
${lines(loads.b, (j) => `        lb${j} = loadB(k1 + bRow + ${j * bRowStep}u, n0 + bCol);`)}
      }
      if (computes) {
${p.F16 === 2 ? f16Sums(p) + "\n" : ""}${tileBody(p, buf, "        ")}${
      p.F16 === 2 ? "\n" + f16Flush(p) : ""
    }
      }
      if (hasNext) {
${lines(loads.a, (j) => `        stashA(${u(other)}, aRow + ${j * aRowStep}u, aCol, la${j});`)}
${
      lines(
        loads.b,
        (j) => `        ${tileIndex(p, "Bs", other, `bRow + ${j * bRowStep}u`, "bVec")} = lb${j};`,
      )
    }
      }
      workgroupBarrier();
    }`;
  // Two tiles per trip, so each half reads a literal buffer; or one, reading buffer t % 2.
  const twoTilesPerTrip = `  for (var t = 0u; t < tiles; t += 1u) {
${half(0, 1)}
    t += 1u;
    if (t == tiles) {
      break;
    }
${half(1, 0)}
  }`;
  const oneTilePerTrip = `  for (var t = 0u; t < tiles; t += 1u) {
    let cur = t % 2u;
    let other = 1u - cur;
${half("cur", "other")}
  }`;
  const split = p.SPLIT_K === 1;
  const store = (r: number, j: number) =>
    `store(r${r >> 2} + ${r & 3}u, col0 + ${32 * j}u, c${r}${j});`;
  return `${f16 ? "enable f16;\n\n" : ""}// ${
    f16 ? "Step 12's kernel in f16" : "Step 12 (generated)"
  }: ${p.BM} x ${p.BN} tiles of C, k tiles of ${p.BK}, 8 x ${p.TN} outputs
// per invocation, ${threads} invocations. Written by kernels/12_generated/generate.ts for
// BM=${p.BM} BN=${p.BN} BK=${p.BK} TN=${p.TN} PAD=${p.PAD} GROUP_M=${p.GROUP_M} AHEAD=${p.AHEAD}.${
    split ? "\n// Split K: workgroup z sums slice z of K into partial C number z (SPLIT_K=1)." : ""
  }${f16 ? "\n" + PRECISION_NOTE[p.F16 as 1 | 2] : ""}${
    p.F16_VEC4 === 1
      ? "\n// F16_VEC4=1: A and B are read as vec4<f16> where K and N are multiples of 4."
      : p.F16_VEC4 === 2
      ? "\n// F16_VEC4=2: A and B are read as vec2<u32> words (four f16), unpacked, where K and N are\n// multiples of 4."
      : ""
  }

${
    productInterface({
      element: f16
        ? (p.F16_VEC4 === 2 ? "vec2<u32>" : p.F16_VEC4 ? "vec4<f16>" : "f16")
        : "vec4<f32>",
      paddedB: true,
    })
  }
${
    split
      ? `
// This workgroup's slice of K, [kBegin, kEnd), and where its partial C starts in the workspace,
// for the load and store functions (the loop bound uses main's own uniform copies).
var<private> kBegin: u32;
var<private> kEnd: u32;
var<private> cBase: u32;
`
      : ""
  }
// [buffer][k row][vec4 column]: A transposed (its columns are rows of C), B as it is.
${
    p.NESTED
      ? `var<workgroup> As: array<array<array<${tileVec}, ${as}>, ${p.BK}>, 2>;
var<workgroup> Bs: array<array<array<${tileVec}, ${bn4}>, ${p.BK}>, 2>;`
      : `var<workgroup> As: array<${tileVec}, ${2 * p.BK * as}>;
var<workgroup> Bs: array<${tileVec}, ${2 * p.BK * bn4}>;`
  }

${
    f16
      ? (p.F16_VEC4 ? f16Vec4Loads(p, tileVec) : f16Loads(p, tileVec))
      : `// Four k values of row \`row\` of A, from column \`k\`.
fn loadA(row: u32, k: u32) -> vec4<f32> {
${
        split
          ? "  return A[select(arrayLength(&A) - 1u, (row * dims.K + kBegin + k) / 4u, row < dims.M && kBegin + k < kEnd)];"
          : "  return A[select(arrayLength(&A) - 1u, (row * dims.K + k) / 4u, row < dims.M && k < dims.K)];"
      }
}

// Four columns of row \`k\` of B, from column \`col\`.
fn loadB(k: u32, col: u32) -> vec4<f32> {
${
        split
          ? "  return B[select(arrayLength(&B) - 1u, ((kBegin + k) * dims.N + col) / 4u, kBegin + k < kEnd && col < dims.N)];"
          : "  return B[select(arrayLength(&B) - 1u, (k * dims.N + col) / 4u, k < dims.K && col < dims.N)];"
      }
}
`
  }
// Row \`row\`, columns k..k+3 of the A tile go to k rows k..k+3 of the transposed tile.
fn stashA(buf: u32, row: u32, k: u32, v: ${tileVec}) {
  let at = row / 4u;
  let lane = row % 4u;
${
    lines(4, (c) =>
      `  ${tileIndex(p, "As", "buf", c ? `k + ${c}u` : "k", "at")}[lane] = v.${"xyzw"[c]};`)
  }
}

// Four scalar stores: a row of the unpadded C need not start on a 16-byte boundary.
fn store(row: u32, col: u32, ${f16 ? "sum: vec4<f32>" : "v: vec4<f32>"}) {
  if (row >= dims.M) {
    return;
  }${f16 ? "\n  let v = vec4<f16>(sum);" : ""}
  let at = ${split ? "cBase + " : ""}row * dims.ldc + col;
  if (col + 3u < dims.ldc) {
    C[at] = v.x;
    C[at + 1u] = v.y;
    C[at + 2u] = v.z;
    C[at + 3u] = v.w;
    return;
  }
  if (col < dims.ldc) { C[at] = v.x; }
  if (col + 1u < dims.ldc) { C[at + 1u] = v.y; }
  if (col + 2u < dims.ldc) { C[at + 2u] = v.z; }
}

// (tile row, tile column) of workgroup \`wid\`: ${p.GROUP_M} tile rows are walked column by column
// before moving on. The grid, not C's size, says how many tiles there are.
fn tileOf(wid: vec3<u32>, grid: vec3<u32>) -> vec2<u32> {
  let perGroup = ${p.GROUP_M}u * grid.x;
  let linear = wid.y * grid.x + wid.x;
  let first = (linear / perGroup) * ${p.GROUP_M}u;
  let rows = min(grid.y - first, ${p.GROUP_M}u);
  let inGroup = linear % perGroup;
  return vec2<u32>(first + inGroup % rows, inGroup / rows);
}

@compute @workgroup_size(${threads})
fn main(
  @builtin(local_invocation_index) tid: u32,
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) grid: vec3<u32>,
) {
  let tile = tileOf(wid, grid);
${
    split
      ? `  // Slices of whole k tiles; the last ones may be short or empty (they then store zeros).
  // Computed as lets from the workgroup id and the uniform dims, the slice's bounds are uniform,
  // so the tile loop they bound keeps its barriers in uniform control flow.
  let kChunk = (dims.K + grid.z * ${p.BK}u - 1u) / (grid.z * ${p.BK}u) * ${p.BK}u;
  let sliceBegin = min(wid.z * kChunk, dims.K);
  let sliceEnd = min(sliceBegin + kChunk, dims.K);
  kBegin = sliceBegin;
  kEnd = sliceEnd;
  cBase = wid.z * dims.M * dims.ldc;
`
      : ""
  }  let m0 = tile.x * ${p.BM}u;
  let n0 = tile.y * ${p.BN}u;
  // What this invocation loads: row aRow (+ ${aRowStep} per further load), k columns aCol..+3
  // of the A tile; k row bRow (+ ${bRowStep} per further load), vec4 column bVec of the B tile.
  let aRow = tid / ${bk4}u;
  let aCol = (tid % ${bk4}u) * 4u;
  let bRow = tid / ${bn4}u;
  let bVec = tid % ${bn4}u;
  let bCol = bVec * 4u;
  // What it computes: its subgroup owns 32 rows x ${8 * p.TN} columns; its 4 x 8 lanes own rows
  // 4*ly and 16 + 4*ly (+0..3) and columns 4*lx + 32*j, j < ${vecs}.
  let warp = tid / 32u;
  let lane = tid % 32u;
  let wx = warp % ${p.BN / (8 * p.TN)}u;
  let wy = warp / ${p.BN / (8 * p.TN)}u;
  let lx = lane % 8u;
  let ly = lane / 8u;
  let a0At = wy * 8u + ly;
  let a1At = a0At + 4u;
${lines(vecs, (j) => `  let b${j}At = wx * ${2 * p.TN}u + lx + ${8 * j}u;`)}
  let computes = m0 + wy * 32u < dims.M && n0 + wx * ${8 * p.TN}u < dims.N;
${acc}
  let tiles = (${split ? "sliceEnd - sliceBegin" : "dims.K"} + ${p.BK - 1}u) / ${p.BK}u;
${
    lines(loads.a, (j) =>
      `  stashA(0u, aRow + ${j * aRowStep}u, aCol, loadA(m0 + aRow + ${j * aRowStep}u, aCol));`)
  }
${
    lines(loads.b, (j) =>
      `  ${tileIndex(p, "Bs", 0, `bRow + ${j * bRowStep}u`, "bVec")} = loadB(bRow + ${
        j * bRowStep
      }u, n0 + bCol);`)
  }
  workgroupBarrier();
${p.LITERAL_BUFFER ? twoTilesPerTrip : oneTilePerTrip}
  let r0 = m0 + a0At * 4u;
  let r1 = m0 + a1At * 4u;
  let col0 = n0 + (wx * ${2 * p.TN}u + lx) * 4u;
${lines(ROWS, (r) => "  " + Array.from({ length: vecs }, (_, j) => store(r, j)).join(" "))}
}
`;
}
