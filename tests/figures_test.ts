/**
 * Concept figures (lib/notebook/figures/): every step draws well-formed SVG that rasterises, a
 * figure follows its parameters, the index arithmetic behind the bank and fragment figures is
 * the kernels' own (checked against their WGSL), and unknown steps or bad parameters throw.
 */
import assert from "node:assert/strict";
import { loadKernelSource } from "../lib/gpu.ts";
import { drawnBox, svgToPng } from "../lib/render.ts";
import { conceptFigure, conceptSteps, showConcept } from "../lib/notebook/concept.ts";
import { subgroupAccess } from "../lib/figures/access.ts";
import { textWidth } from "../lib/figures/svg.ts";
import {
  FRAGMENT_SOURCE,
  type FragmentMapping,
  fragmentReads,
  subgroupBanks,
} from "../lib/figures/banks.ts";
import { AUTOTUNE_READ, generatedRead } from "../kernels/12_generated/figure.ts";
import { laneOfFragment } from "../lib/figures/warps.ts";
import { findKernel, KERNELS } from "../lib/registry.ts";
import { generatedParams } from "../kernels/12_generated/step.ts";
import { assertPngNotBlank, decodePng } from "./png.ts";
import { displayed } from "./jupyter_standin.ts";

const LADDER = KERNELS.filter((k) => !k.demo).map((k) => k.name);

/** The step whose kernel has each modelled fragment mapping. */
const MAPPING_STEP: Record<FragmentMapping, string> = {
  adjacent_pairs: "vectorize",
  split_halves: "bank_conflicts",
  warp_tiles: "subgroup_tiling",
};

/**
 * Throws unless `xml` is well-formed for what the figures write: one root, tags nested and
 * closed in order, attributes quoted, only the five predefined entities.
 */
function assertWellFormed(xml: string, what: string) {
  const stack: string[] = [];
  let roots = 0;
  const tag = /<(\/?)([a-zA-Z][\w-]*)((?:\s+[\w:-]+="[^"<]*")*)\s*(\/?)>|<!--[\s\S]*?-->/g;
  let at = 0;
  for (const m of xml.matchAll(tag)) {
    const between = xml.slice(at, m.index);
    assert.doesNotMatch(between, /[<>]/, `${what}: stray markup near offset ${m.index}`);
    assert.doesNotMatch(
      between,
      /&(?!(amp|lt|gt|quot|apos);)/,
      `${what}: bad entity near offset ${m.index}`,
    );
    at = m.index + m[0].length;
    if (m[0].startsWith("<!--")) continue;
    const [, close, name, , selfClose] = m;
    if (close) assert.equal(stack.pop(), name, `${what}: </${name}> closes the wrong element`);
    else if (!selfClose) {
      if (!stack.length) roots++;
      stack.push(name);
    } else if (!stack.length) roots++;
  }
  assert.doesNotMatch(xml.slice(at), /[<>]/, `${what}: unparsed markup at the end`);
  assert.deepEqual(stack, [], `${what}: unclosed elements`);
  assert.equal(roots, 1, `${what}: one root element`);
}

Deno.test("every ladder step has a concept figure", () => {
  assert.deepEqual(conceptSteps(), LADDER);
});

Deno.test("every figure is well-formed SVG of modest size that rasterises to a drawing", async () => {
  for (const step of LADDER) {
    const { svg, caption } = conceptFigure(step);
    assertWellFormed(svg, step);
    assert.match(svg, /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg" width="\d+" height="\d+"/);
    assert.doesNotMatch(svg, /NaN|undefined|Infinity/, `${step}: a value failed to compute`);
    const elements = svg.match(/<(rect|line|path|text|polygon)\b/g)?.length ?? 0;
    assert.ok(elements < 3000, `${step}: ${elements} elements`);
    assert.ok(caption.length > 40, `${step}: caption`);
    const png = await svgToPng(svg, 1);
    await assertPngNotBlank(png, 700);
    const { width } = await decodePng(png);
    assert.ok(width >= 700 && width <= 900, `${step}: ${width} px wide`);
    await Deno.writeFile(`/tmp/concept_${step}.png`, png);
  }
});

/** The shapes a figure is drawn at in the bounds test: the default, a bigger one, odd ones. */
const FIGURE_SHAPES = [
  undefined,
  { m: 8192, k: 8192, n: 8192 },
  { m: 1000, k: 3000, n: 777 },
  { m: 16, k: 4096, n: 4096 },
];

Deno.test("nothing drawn outside a figure: at every knob point and several shapes", async () => {
  let drawn = 0;
  for (const step of LADDER) {
    const spec = findKernel(step)!;
    for (const point of [{}, ...(spec.knob?.points ?? [])]) {
      for (const shape of FIGURE_SHAPES) {
        let svg: string;
        try {
          svg = conceptFigure(step, point, shape).svg;
        } catch (e) {
          // A point the figure does not draw (13's matrix-vector plan) is refused as a range.
          if (e instanceof RangeError) continue;
          throw e;
        }
        const [width, height] = /width="([\d.]+)" height="([\d.]+)"/.exec(svg)!.slice(1)
          .map(Number);
        // The white background covers the whole document: measure what is drawn on it.
        const box = await drawnBox(svg.replace(/<rect x="0" y="0" [^>]*fill="white"\/>/, ""));
        const where = `${step} ${JSON.stringify(point)} at ${JSON.stringify(shape ?? "default")}`;
        assert.ok(box, `${where}: draws nothing`);
        assert.ok(box.x >= 0 && box.y >= 0, `${where}: drawn from (${box.x}, ${box.y})`);
        assert.ok(
          box.x + box.width <= width && box.y + box.height <= height,
          `${where}: drawn to (${box.x + box.width}, ${box.y + box.height}), ` +
            `outside ${width} x ${height}`,
        );
        drawn++;
      }
    }
  }
  assert.ok(drawn > 4 * LADDER.length, `only ${drawn} figures drawn`);
});

Deno.test("textWidth is the width DejaVu Sans draws", async () => {
  const texts = ["16 floats (offsets 0, 4096, 8192, …, 61440)", "Workgroup WxYz · 3×4 → ⌊k/2⌋"];
  for (const text of texts) {
    for (const bold of [false, true]) {
      const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="2000" height="40">` +
        `<text x="0" y="20" font-size="12"${
          bold ? ' font-weight="bold"' : ""
        }>${text}</text></svg>`;
      const inked = (await drawnBox(svg))!.width;
      const estimated = textWidth(text, 12, bold);
      // The advance runs past the ink by a side bearing: at most a few pixels at 12 px.
      assert.ok(
        estimated >= inked && estimated - inked < 4,
        `${text}${bold ? " (bold)" : ""}: ${estimated} estimated, ${inked} drawn`,
      );
    }
  }
});

Deno.test("a figure follows its parameters and shape; defaults are the step's", () => {
  const big = conceptFigure("blocktile_2d", { BM: 128 }).svg;
  const small = conceptFigure("blocktile_2d", { BM: 64 }).svg;
  assert.notEqual(big, small);
  assert.match(small, /BM 64/);
  assert.equal(conceptFigure("blocktile_2d").svg, big, "BM 128 is the step's default");
  assert.equal(conceptFigure("06").svg, big, "a step number works as a key");
  const wide = conceptFigure("shapes", {}, { m: 4096, k: 4096, n: 8192 });
  assert.notEqual(wide.svg, conceptFigure("shapes").svg);
  assert.match(wide.caption, /2048 workgroups/);
  assert.notEqual(conceptFigure("naive", { WG: 8 }).svg, conceptFigure("naive").svg);
});

Deno.test("unknown steps and invalid parameters throw clearly", () => {
  assert.throws(() => conceptFigure("warp_shuffle"), /no concept figure for step "warp_shuffle"/);
  assert.throws(() => conceptFigure("blocktile_2d", { BM: 60 }), /multiples of 8/);
  assert.throws(() => conceptFigure("shapes", { PLAN: 1, BM: 16, BN: 256 }), /tile plans/);
});

Deno.test("02/03: sectors one subgroup touches at one k step", () => {
  const shape = { m: 4096, k: 4096, n: 4096 };
  const sectors = (m: "x_picks_row" | "x_picks_column", wg: number) =>
    subgroupAccess(m, wg, shape).map((a) => a.sectors.length);
  // 02, WG 16: 16 rows x 2 columns of C. A: 16 rows K apart; B: 2 adjacent; C: 16 pairs.
  assert.deepEqual(sectors("x_picks_row", 16), [16, 1, 16]);
  // 03, WG 16: 2 rows x 16 columns. A: 2 rows; B: 16 adjacent floats; C: two runs of 16.
  assert.deepEqual(sectors("x_picks_column", 16), [2, 2, 4]);
  // 03, WG 32: one row of 32: 128 contiguous bytes of B and of C, one float of A.
  assert.deepEqual(sectors("x_picks_column", 32), [1, 4, 4]);
});

Deno.test("08: bank passes of one subgroup's fragment reads, a quarter-warp at a time", () => {
  const p = findKernel("bank_conflicts")!.params;
  const passes = (m: FragmentMapping, f: "a0" | "b0", q = p) => subgroupBanks(m, f, q).wavefronts;
  // 07: each quarter reads every other vec4: banks 0-3, 8-11, ... serve 2 words each.
  assert.equal(passes("adjacent_pairs", "b0"), 8);
  // 08: each quarter reads 8 adjacent vec4s, 128 bytes: one pass each, the fewest.
  assert.equal(passes("split_halves", "b0"), 4);
  // 09: the same, 8 adjacent vec4s per quarter: no fewer passes than 08.
  assert.equal(passes("warp_tiles", "b0"), 4);
  // A reads: one vec4 per quarter in every mapping, broadcast within it; a pass per quarter.
  for (const m of ["adjacent_pairs", "split_halves", "warp_tiles"] as const) {
    assert.equal(passes(m, "a0"), 4, m);
  }
  // BN 64: 8 invocations per row of the subgroup; the quarters read the same words as at 128.
  const narrow = { ...p, BN: 64 };
  assert.equal(passes("adjacent_pairs", "b0", narrow), 8);
  assert.equal(passes("split_halves", "b0", narrow), 4);
  // Broadcast stays inside a quarter: tid 0 and tid 16 (same tx) read word 0 in passes of
  // their own quarters.
  const access = subgroupBanks("split_halves", "b0", p);
  assert.deepEqual(access.phases.map((ph) => ph.lanes), [[0, 7], [8, 15], [16, 23], [24, 31]]);
  assert.deepEqual(access.phases[0].banks[0].words.map((w) => w.lanes), [[0]]);
  assert.deepEqual(access.phases[2].banks[0].words.map((w) => w.lanes), [[16]]);
});

Deno.test("the figures' index arithmetic is the kernels' WGSL", async () => {
  const squash = (s: string) => s.replace(/\s+/g, " ").trim();
  for (const [mapping, step] of Object.entries(MAPPING_STEP)) {
    const source = squash(await loadKernelSource(findKernel(step)!.file));
    for (const line of FRAGMENT_SOURCE[mapping as FragmentMapping]) {
      assert.ok(source.includes(squash(line)), `${step}: ${line}`);
    }
  }
  const eleven = squash(await loadKernelSource(findKernel("autotune")!.file));
  assert.ok(eleven.includes(AUTOTUNE_READ));
  assert.equal(generatedRead(generatedParams({})).trim(), "let a0_0 = As[cur][0][a0At];");
  assert.equal(
    generatedRead(generatedParams({ LITERAL_BUFFER: 1 })).trim(),
    "let a0_0 = As[0][0][a0At];",
  );
  // 08's fragments at k step 1 move by one (padded) A row and one B row.
  const p = findKernel("bank_conflicts")!.params;
  const at0 = fragmentReads("split_halves", 5, p, 0),
    at1 = fragmentReads("split_halves", 5, p, 1);
  assert.equal(at1.a0 - at0.a0, p.BM / 4 + p.PAD);
  assert.equal(at1.b1 - at0.b1, p.BN / 4);
  // 09: the lane drawn on fragment (ly, lx) of warp 0 is the one whose a0At and b0At point there.
  for (let tid = 0; tid < 32; tid++) {
    const f = fragmentReads("warp_tiles", tid, p);
    assert.equal(laneOfFragment(f.a0, f.b0), tid);
  }
});

Deno.test("showConcept prints the caption outside a notebook", async () => {
  const logged: unknown[] = [];
  const log = console.log;
  console.log = (...args: unknown[]) => logged.push(...args);
  try {
    await showConcept("f16");
  } finally {
    console.log = log;
  }
  assert.equal(logged[0], conceptFigure("f16").caption);
});

Deno.test("showConcept in a notebook: the SVG and a PNG of it at the size it is shown", async () => {
  const shown = await displayed(() => showConcept("naive"));
  const { svg, caption } = conceptFigure("naive");
  assert.equal(shown.length, 1);
  assert.equal(shown[0]["image/svg+xml"], svg);
  assert.equal(shown[0]["text/plain"], caption);
  const png = Uint8Array.from(atob(shown[0]["image/png"] as string), (c) => c.charCodeAt(0));
  const { width, height } = await assertPngNotBlank(png, 700);
  assert.deepEqual(
    [width, height],
    /width="(\d+)" height="(\d+)"/.exec(svg)!.slice(1).map(Number),
  );
});
