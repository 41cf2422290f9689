/**
 * The held-out shapes: products drawn from a fixed, documented distribution that no tuning,
 * search or test of the kernels reads, so a run can show how the kernels do on shapes nobody
 * tuned them for. `deno task bench --heldout N --seed S` draws them with heldoutShapes and keeps
 * their rows in the record's `heldout` section (HeldoutSection), apart from the shape suite; the
 * README's results table sets the two side by side (heldoutSummary).
 *
 * The distribution, version "heldout/1" (change the version with any change that draws other
 * shapes for the same seed):
 * - the generator is mulberry32 (lib/matrix.ts `rng`) seeded with S: 32-bit integer arithmetic,
 *   and the draws below use only integer arithmetic on its outputs, so every machine and every
 *   JavaScript engine draws the same shapes;
 * - first the whole list of model shapes (MODEL_SHAPES, those within the caps and not excluded
 *   below) is shuffled (Fisher-Yates), and the first round(N / 4) of the shuffle are taken:
 *   sampled without replacement;
 * - the rest are random shapes: M, K and N each log-uniform over the integers 1 to 16384 by
 *   octave (an octave j of 0..14 uniformly, then an integer uniformly in (2^(j-1), 2^j]), drawn
 *   in that order; a shape is drawn again while A, B and C in f32 together exceed the memory cap
 *   (1 GiB), while 2MKN exceeds the FLOP cap (2^40, an 8192 cube: about 25 ms for cuBLAS on an
 *   H100 and under 0.3 s for TF.js, so no shape takes minutes), or while it repeats a shape
 *   already drawn, a model shape, or a shape a GPU run measures by default (the shape suite and
 *   the odd-shape pairs, lib/suite.ts and lib/bench_args.ts): those are never drawn.
 * The model shapes come first in the list, then the random ones, each in draw order. Both parts
 * only grow with N, so the shapes of N are the first shapes of a larger N's parts.
 *
 * Held out means chosen after the code is fixed: take a seed that nothing of ours has read (the
 * run's date, say). Seed 1 is the tests' golden seed, so its shapes are not held out.
 */
import { ODD_SHAPE_PAIRS } from "./sizes.ts";
import { flops, rng, sameShape, type Shape, uniqueShapes } from "./matrix.ts";
import type {
  HeldoutDistribution,
  HeldoutSection,
  HeldoutShape,
  ModelShape,
  RunRecord,
} from "./record.ts";

export type { HeldoutDistribution, HeldoutSection, HeldoutShape, ModelShape };
import { geomean } from "./compare.ts";
import { SHAPE_SUITE, type SuiteRow, suiteRows } from "./suite.ts";

const BERT_BASE = "BERT-base (Devlin et al. 2019): hidden 768, MLP 3072, 12 heads of 64";
const BERT_LARGE = "BERT-large (Devlin et al. 2019): hidden 1024, MLP 4096";
const GPT2_SMALL = "GPT-2 small (Radford et al. 2019): hidden 768, MLP 3072, vocabulary 50257";
const GPT2_XL = "GPT-2 XL (Radford et al. 2019): hidden 1600, MLP 6400";
const LLAMA2_7B =
  "Llama 2 7B (Touvron et al. 2023): hidden 4096, MLP 11008, 32 heads of 128, vocabulary 32000";
const LLAMA3_8B = "Llama 3 8B (Meta 2024): hidden 4096, MLP 14336, 8 key/value heads of 128 (1024)";
const MISTRAL_7B = "Mistral 7B (Jiang et al. 2023): hidden 4096, MLP 14336";
const VIT_B16 =
  "ViT-B/16 at 224 x 224 (Dosovitskiy et al. 2021): 197 tokens, hidden 768, MLP 3072, " +
  "16 x 16 x 3 patches";
const RESNET50 = "ResNet-50 (He et al. 2016), convolution as GEMM: M = output pixels x batch, " +
  "K = kernel height x width x input channels, N = output channels";
const SD15 = "Stable Diffusion 1.5 U-Net at 512 x 512 (a 64 x 64 latent, 4096 tokens): " +
  "first level 8 heads of 40, 77 text tokens";

/**
 * Shapes of real models (M x K x N for C = A B: M tokens or output pixels, K the reduction, N
 * the outputs): transformer projections and MLPs at batch x sequence tokens, attention per head,
 * decode (M of 1 to 16), convolutions as im2col GEMMs, a weight gradient and an LSTM layer.
 * None is a shape of the suite.
 */
export const MODEL_SHAPES: readonly ModelShape[] = [
  { name: "BERT-base QKV, 2048 tokens", m: 2048, k: 768, n: 2304, source: BERT_BASE },
  { name: "BERT-base attention out, 2048 tokens", m: 2048, k: 768, n: 768, source: BERT_BASE },
  { name: "BERT-base MLP up, 2048 tokens", m: 2048, k: 768, n: 3072, source: BERT_BASE },
  { name: "BERT-base MLP down, 2048 tokens", m: 2048, k: 3072, n: 768, source: BERT_BASE },
  { name: "BERT-base QK^T, sequence 512", m: 512, k: 64, n: 512, source: BERT_BASE },
  { name: "BERT-base PV, sequence 512", m: 512, k: 512, n: 64, source: BERT_BASE },
  {
    name: "BERT-base MLP up weight gradient, 4096 tokens",
    m: 768,
    k: 4096,
    n: 3072,
    source: BERT_BASE,
  },
  { name: "BERT-large MLP up, 512 tokens", m: 512, k: 1024, n: 4096, source: BERT_LARGE },
  { name: "GPT-2 small LM head, 1024 tokens", m: 1024, k: 768, n: 50257, source: GPT2_SMALL },
  { name: "GPT-2 small MLP up, decode", m: 1, k: 768, n: 3072, source: GPT2_SMALL },
  { name: "GPT-2 XL MLP up, 1024 tokens", m: 1024, k: 1600, n: 6400, source: GPT2_XL },
  { name: "GPT-2 XL attention out, decode batch 4", m: 4, k: 1600, n: 1600, source: GPT2_XL },
  { name: "Llama 2 7B QKV, decode batch 4", m: 4, k: 4096, n: 12288, source: LLAMA2_7B },
  { name: "Llama 2 7B MLP down, decode batch 8", m: 8, k: 11008, n: 4096, source: LLAMA2_7B },
  { name: "Llama 2 7B MLP up, decode batch 2", m: 2, k: 4096, n: 11008, source: LLAMA2_7B },
  { name: "Llama 2 7B MLP down, 512 tokens", m: 512, k: 11008, n: 4096, source: LLAMA2_7B },
  { name: "Llama 2 7B LM head, decode", m: 1, k: 4096, n: 32000, source: LLAMA2_7B },
  { name: "Llama 2 7B QK^T, sequence 2048", m: 2048, k: 128, n: 2048, source: LLAMA2_7B },
  { name: "Llama 2 7B PV, sequence 2048", m: 2048, k: 2048, n: 128, source: LLAMA2_7B },
  { name: "Llama 2 7B QK^T, decode at 4096", m: 1, k: 128, n: 4096, source: LLAMA2_7B },
  { name: "Llama 2 7B PV, decode at 4096", m: 1, k: 4096, n: 128, source: LLAMA2_7B },
  { name: "Llama 3 8B K or V, 2048 tokens", m: 2048, k: 4096, n: 1024, source: LLAMA3_8B },
  { name: "Llama 3 8B MLP gate, 1024 tokens", m: 1024, k: 4096, n: 14336, source: LLAMA3_8B },
  { name: "Mistral 7B MLP up, decode batch 16", m: 16, k: 4096, n: 14336, source: MISTRAL_7B },
  { name: "ViT-B/16 patch embedding, batch 32", m: 6272, k: 768, n: 768, source: VIT_B16 },
  { name: "ViT-B/16 MLP up, batch 8", m: 1576, k: 768, n: 3072, source: VIT_B16 },
  { name: "ResNet-50 conv1 7x7, batch 1", m: 12544, k: 147, n: 64, source: RESNET50 },
  { name: "ResNet-50 conv2 3x3, batch 1", m: 3136, k: 576, n: 64, source: RESNET50 },
  { name: "ResNet-50 conv4 1x1 expand, batch 32", m: 6272, k: 256, n: 1024, source: RESNET50 },
  { name: "ResNet-50 conv5 3x3, batch 32", m: 1568, k: 4608, n: 512, source: RESNET50 },
  { name: "ResNet-50 classifier, batch 32", m: 32, k: 2048, n: 1000, source: RESNET50 },
  {
    name: "MobileNetV2 1x1 expand at 112x112, batch 1",
    m: 12544,
    k: 16,
    n: 96,
    source: "MobileNetV2 (Sandler et al. 2018): 16 channels expanded 6 times at 112 x 112",
  },
  {
    name: "VGG-16 conv1_2 3x3, batch 1",
    m: 50176,
    k: 576,
    n: 64,
    source: "VGG-16 (Simonyan and Zisserman 2015): 64 to 64 channels at 224 x 224",
  },
  { name: "Stable Diffusion self-attention QK^T", m: 4096, k: 40, n: 4096, source: SD15 },
  { name: "Stable Diffusion cross-attention QK^T", m: 4096, k: 40, n: 77, source: SD15 },
  {
    name: "LSTM of 1024 units, batch 64",
    m: 64,
    k: 2048,
    n: 4096,
    source: "an LSTM layer of 1024 units (GNMT, Wu et al. 2016): input and state (2048) to " +
      "four gates (4096)",
  },
];

/** The distribution's version: a change that draws other shapes for a seed needs a new one. */
export const HELDOUT_VERSION = "heldout/1";
/** Dimensions of the random shapes: 1 to 2^OCTAVES. */
const OCTAVES = 14;
export const MAX_DIM = 2 ** OCTAVES;
/** The share of the N shapes taken from MODEL_SHAPES. */
export const MODEL_SHARE = 1 / 4;
/** Default caps: A, B and C in f32 together, and 2MKN. */
export const MAX_BYTES = 2 ** 30;
export const MAX_FLOP = 2 ** 40;

/** Where the bars split the shapes: at least this many FLOP (2MKN) is "large". */
export const LARGE_FLOP = 1e8;
/** The bars a held-out set is held to (on each GPU). */
export const BARS = {
  /** Shapes in the held-out set. */
  minShapes: 40,
  /** Geometric mean over every shape of (best of ours / cuBLAS), in speed. */
  geomean: 0.85,
  /** No large shape under this ratio. */
  worstLarge: 0.6,
  /** The median over the small shapes of (our time - cuBLAS's time), in microseconds. */
  smallGapUs: 10,
} as const;

/** The caps a draw may lower (a software adapter's run, say); the record keeps what was used. */
export interface HeldoutCaps {
  /** A, B and C in f32 together, in bytes. */
  maxBytes?: number;
  /** 2MKN. */
  maxFlop?: number;
}

/** The held-out section of a record, when its run drew one. */
export function heldoutOf(record: RunRecord): HeldoutSection | undefined {
  return record.heldout;
}

/** Every shape a GPU run measures by default: the suite and the odd shapes with their pairs. */
export const EXCLUDED_SHAPES: readonly Shape[] = uniqueShapes([
  ...SHAPE_SUITE,
  ...ODD_SHAPE_PAIRS.flat(),
]);

const bytesOf = ({ m, k, n }: Shape) => 4 * (m * k + k * n + m * n);

/** The distribution heldoutShapes draws from under these caps. */
export function heldoutDistribution(caps: HeldoutCaps = {}): HeldoutDistribution {
  const maxBytes = caps.maxBytes ?? MAX_BYTES;
  const maxFlop = caps.maxFlop ?? MAX_FLOP;
  if (!(maxBytes >= bytesOf({ m: 1, k: 1, n: 1 })) || !(maxFlop >= 2)) {
    throw new RangeError(`caps of ${maxBytes} bytes and ${maxFlop} FLOP leave no shape`);
  }
  const fits = (s: Shape) =>
    bytesOf(s) <= maxBytes && flops(s) <= maxFlop && !EXCLUDED_SHAPES.some((t) => sameShape(s, t));
  const models = MODEL_SHAPES.filter(fits).map((s) => ({ ...s }));
  return {
    version: HELDOUT_VERSION,
    prng: "mulberry32 seeded with the seed (lib/matrix.ts rng), integer arithmetic only",
    dims: { min: 1, max: MAX_DIM, law: `log-uniform by octave (0..${OCTAVES})` },
    maxBytes,
    maxFlop,
    modelShare: MODEL_SHARE,
    models,
    excluded: EXCLUDED_SHAPES.map(({ m, k, n }) => ({ m, k, n })),
    text: `round(N x ${MODEL_SHARE}) model shapes of the ${models.length} within the caps, ` +
      "sampled without replacement (a Fisher-Yates shuffle, first in the list), then random " +
      `shapes: M, K and N in that order, each log-uniform over 1..${MAX_DIM} by octave (an ` +
      `octave j of 0..${OCTAVES} uniformly, then an integer uniformly in (2^(j-1), 2^j]), ` +
      `drawn again while A + B + C in f32 exceed ${maxBytes} bytes, 2MKN exceeds ${maxFlop}, ` +
      "or the shape repeats a drawn shape, a model shape or an excluded shape (the suite and " +
      "the odd-shape pairs a GPU run measures by default); generator mulberry32, integer " +
      "arithmetic only, so every machine draws the same shapes.",
  };
}

/** Random draws in a row that may all fail the caps before the caps are called too tight. */
const MAX_REDRAWS = 100_000;

/**
 * `count` held-out shapes for `seed` (an integer of 0 to 2^32 - 1): the model share first, then
 * the random shapes, each in draw order. Throws a RangeError on a bad count or seed, and when
 * the caps leave too few shapes.
 */
export function heldoutShapes(
  count: number,
  seed: number,
  caps: HeldoutCaps = {},
): HeldoutShape[] {
  if (!Number.isInteger(count) || count < 1) {
    throw new RangeError(`count must be a positive integer, got ${count}`);
  }
  if (!Number.isInteger(seed) || seed < 0 || seed >= 2 ** 32) {
    throw new RangeError(`seed must be an integer of 0 to 2^32 - 1, got ${seed}`);
  }
  const { models, maxBytes, maxFlop } = heldoutDistribution(caps);
  const next = rng(seed);
  const below = (n: number) => Math.floor(next() * n);
  // Fisher-Yates over the whole pool, whatever the count, so the random draws that follow use
  // the same stream for every count.
  const order = models.map((_, i) => i);
  for (let i = order.length - 1; i > 0; i--) {
    const j = below(i + 1);
    [order[i], order[j]] = [order[j], order[i]];
  }
  const modelCount = Math.min(models.length, Math.round(count * MODEL_SHARE));
  const shapes: HeldoutShape[] = order.slice(0, modelCount).map((i) => {
    const { name, m, k, n } = models[i];
    return { m, k, n, from: name };
  });
  const dim = () => {
    const octave = below(OCTAVES + 1);
    if (octave === 0) return 1;
    const width = 2 ** (octave - 1);
    return width + 1 + below(width);
  };
  const taken = (s: Shape) =>
    [...EXCLUDED_SHAPES, ...MODEL_SHAPES, ...shapes].some((t) => sameShape(s, t));
  while (shapes.length < count) {
    let redraws = 0;
    for (;;) {
      const m = dim(), k = dim(), n = dim();
      const shape = { m, k, n };
      if (bytesOf(shape) <= maxBytes && flops(shape) <= maxFlop && !taken(shape)) {
        shapes.push({ ...shape, from: "log-uniform" });
        break;
      }
      if (++redraws >= MAX_REDRAWS) {
        throw new RangeError(
          `${MAX_REDRAWS} draws in a row fell outside ${maxBytes} bytes and ${maxFlop} FLOP ` +
            `or repeated a shape, after ${shapes.length} of ${count} shapes`,
        );
      }
    }
  }
  return shapes;
}

/** Whether a shape is large (at least LARGE_FLOP), where the bars ask for a ratio to cuBLAS. */
export function flopBand(shape: Shape): "large" | "small" {
  return flops(shape) >= LARGE_FLOP ? "large" : "small";
}

/** One shape's speeds in GFLOP/s: the best of our validated kernels, and cuBLAS. */
export interface ShapeSpeeds {
  shape: Shape;
  ours?: number;
  cublas?: number;
}

/** The bars' figures over a set of shapes (held-out or suite). */
export interface HeldoutSummary {
  count: number;
  /** Shapes with a validated speed of ours and of cuBLAS: every figure below is over these. */
  compared: number;
  /** Shapes where none of our kernels validated: each fails the protocol. */
  oursMissing: Shape[];
  /** Shapes without a cuBLAS speed: the bars cannot be judged. */
  cublasMissing: Shape[];
  /** Geometric mean of (best of ours / cuBLAS) in speed. */
  geomean?: number;
  /** The large shapes: how many, their geometric mean of (ours / cuBLAS), the worst of them. */
  large: { count: number; geomean?: number; worst?: { shape: Shape; ratio: number } };
  /** The median over the small shapes of (our time - cuBLAS's time), in microseconds. */
  small: { count: number; medianGapUs?: number };
  /**
   * Each bar: met, missed, or undefined where nothing was compared. A band without shapes meets
   * its bar (no shape falls under it).
   */
  bars: { shapes: boolean; geomean?: boolean; worstLarge?: boolean; smallGap?: boolean };
  /** Every bar met on every shape; undefined while cuBLAS is missing somewhere. */
  met?: boolean;
}

/** A shape's time in microseconds at `gflops`. */
const micros = (shape: Shape, gflops: number) => flops(shape) / gflops / 1e3;

function median(xs: number[]): number | undefined {
  if (!xs.length) return undefined;
  const s = [...xs].sort((a, b) => a - b), mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/** The bars' figures for rows of one run (pure: no I/O). */
export function heldoutSummary(rows: readonly ShapeSpeeds[]): HeldoutSummary {
  const both = rows.filter((r) => r.ours && r.cublas) as Required<ShapeSpeeds>[];
  const ratioOf = (r: Required<ShapeSpeeds>) => r.ours / r.cublas;
  const large = both.filter((r) => flopBand(r.shape) === "large");
  const small = both.filter((r) => flopBand(r.shape) === "small");
  const worst = large.reduce<Required<ShapeSpeeds> | undefined>(
    (w, r) => !w || ratioOf(r) < ratioOf(w) ? r : w,
    undefined,
  );
  const gm = geomean(both.map(ratioOf));
  const medianGapUs = median(
    small.map((r) => micros(r.shape, r.ours) - micros(r.shape, r.cublas)),
  );
  const oursMissing = rows.filter((r) => !r.ours).map((r) => r.shape);
  const cublasMissing = rows.filter((r) => !r.cublas).map((r) => r.shape);
  const judged = both.length > 0;
  const bars = {
    shapes: rows.length >= BARS.minShapes,
    geomean: gm === undefined ? undefined : gm >= BARS.geomean,
    worstLarge: judged ? !worst || ratioOf(worst) >= BARS.worstLarge : undefined,
    smallGap: judged ? medianGapUs === undefined || medianGapUs <= BARS.smallGapUs : undefined,
  };
  return {
    count: rows.length,
    compared: both.length,
    oursMissing,
    cublasMissing,
    geomean: gm,
    large: {
      count: large.length,
      geomean: geomean(large.map(ratioOf)),
      worst: worst && { shape: worst.shape, ratio: ratioOf(worst) },
    },
    small: { count: small.length, medianGapUs },
    bars,
    met: cublasMissing.length || !judged
      ? undefined
      : !oursMissing.length && Object.values(bars).every((b) => b === true),
  };
}

/**
 * The bars a summary misses, each named; the bar on the number of shapes only where
 * `countShapes` (the held-out set: the suite has its own, smaller, fixed count). Undefined while
 * nothing can be judged: no shape has ours and cuBLAS, or cuBLAS is missing at some.
 */
export function missedBars(s: HeldoutSummary, countShapes: boolean): string[] | undefined {
  if (!s.compared || s.cublasMissing.length) return undefined;
  return [
    countShapes && !s.bars.shapes ? `fewer than ${BARS.minShapes} shapes` : "",
    s.oursMissing.length ? "a shape none of ours validated" : "",
    s.bars.geomean ? "" : `mean under ${BARS.geomean}`,
    s.bars.worstLarge ? "" : `a large shape under ${BARS.worstLarge.toFixed(2)}`,
    s.bars.smallGap ? "" : `small-shape gap over ${BARS.smallGapUs} us`,
  ].filter((x) => x);
}

/** Whether every bar is met (missedBars: the count of shapes only where `countShapes`). */
export function barsMet(s: HeldoutSummary, countShapes: boolean): boolean | undefined {
  const missed = missedBars(s, countShapes);
  return missed && !missed.length;
}

/** One held-out shape's row: the suite's figures and where the shape came from. */
export interface HeldoutRow extends SuiteRow {
  from: string;
}

/** The held-out rows of a record's section, in draw order (shapes it did not measure left out). */
export function heldoutRows(record: RunRecord, section: HeldoutSection): HeldoutRow[] {
  return suiteRows({ ...record, results: section.results, peers: section.peers }, section.shapes)
    .map((r) => ({ ...r, from: section.shapes.find((s) => sameShape(s, r.shape))!.from }));
}

/** The speeds heldoutSummary reads, from held-out or suite rows. */
export function speedsOf(rows: readonly SuiteRow[]): ShapeSpeeds[] {
  return rows.map((r) => ({ shape: r.shape, ours: r.best?.gflops, cublas: r.cublas }));
}
