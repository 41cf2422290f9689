/**
 * Step 13: the workgroups of one launch in waves over the SMs, with the step's own wave model
 * (kernels/13_shapes/plans.ts: the grid the runner launches, workgroups resident per SM, and
 * ceil(W / (SMs x resident)) waves, a partly empty last wave costing a full one).
 */
import { MODEL_DEVICE } from "../../lib/model/device.ts";
import { shapeLabel } from "../../lib/matrix.ts";
import { generatedParams } from "../12_generated/step.ts";
import { PLAN_TILES, planLabel, planLaunchPlan } from "./launch.ts";
import { residentPerSm } from "./predict.ts";
import { deviceModel, waves } from "../../lib/model/device.ts";
import { type FigureContext, stepHeading } from "../../lib/figures/context.ts";
import {
  COLOR,
  type ConceptFigure,
  Drawing,
  finish,
  heading,
  legend,
  MARGIN,
  tint,
  WIDTH,
} from "../../lib/figures/svg.ts";

/** Full waves drawn before the rest are summarised in one line. */
const FULL_WAVES_DRAWN = 2;

export function wavesFigure(ctx: FigureContext): ConceptFigure {
  const p = ctx.params;
  if (p.PLAN !== PLAN_TILES) {
    throw new RangeError(
      "the wave figure draws tile plans (PLAN 0), not the matrix-vector, row-dot or outer ones",
    );
  }
  const model = deviceModel(MODEL_DEVICE);
  const plan = planLaunchPlan(ctx.shape, p);
  const workgroups = plan.grid[0] * plan.grid[1] * plan.grid[2];
  const resident = residentPerSm(generatedParams(p));
  const w = waves(workgroups, model.sms, resident);
  const lastFilled = workgroups - (w.waves - 1) * w.perWave;
  const d = new Drawing(WIDTH, 0);
  let y = heading(
    d,
    `${stepHeading(ctx.spec)}: ${workgroups} workgroups in ${w.waves} wave` +
      `${w.waves > 1 ? "s" : ""} over ${model.sms} SMs`,
    `Plan ${planLabel(p)} at ${shapeLabel(ctx.shape)} (M x K x N): a grid of ` +
      `${plan.grid.join(" x ")} workgroups. The model holds ${resident} per SM at once, so a ` +
      `wave is ${w.perWave}; ${(100 * w.fill).toFixed(1)}% of the launch's slots hold work. ` +
      `Model, not measured: ${model.sms} SMs from the ${model.source}.`,
  );
  y += 12;
  const x0 = MARGIN + 64,
    smW = (WIDTH - MARGIN - x0) / model.sms,
    slotH = Math.max(6, 20 / resident);
  const drawWave = (label: string, filled: number) => {
    const h = resident * slotH;
    d.text(x0 - 8, y + h / 2 + 4, label, { size: 11, anchor: "end" });
    d.rect(x0, y, model.sms * smW, h, { fill: COLOR.faint });
    // Slot r of every SM fills before slot r + 1: one rectangle per slot row.
    for (let r = 0; r < resident; r++) {
      const n = Math.max(0, Math.min(model.sms, filled - r * model.sms));
      if (n) {
        d.rect(x0, y + r * slotH, n * smW, slotH, {
          fill: filled < w.perWave ? COLOR.mark : COLOR.c,
        });
      }
    }
    d.gridLines(x0, y, model.sms * smW, h, model.sms, resident, { stroke: "white", width: 0.6 });
    y += h + 8;
  };
  d.text(x0, y, "SM 0", { size: 10, fill: COLOR.muted });
  d.text(x0 + model.sms * smW, y, `SM ${model.sms - 1}`, {
    size: 10,
    fill: COLOR.muted,
    anchor: "end",
  });
  y += 6;
  const full = w.waves - 1;
  const drawn = Math.min(full, FULL_WAVES_DRAWN);
  for (let i = 0; i < drawn; i++) drawWave(`wave ${i + 1}`, w.perWave);
  if (full > drawn) {
    d.text(
      x0 + (model.sms * smW) / 2,
      y + 12,
      `… ${full - drawn} more full wave` +
        `${full - drawn > 1 ? "s" : ""} …`,
      { size: 12, anchor: "middle", fill: COLOR.muted },
    );
    y += 22;
  }
  drawWave(`wave ${w.waves}`, lastFilled);
  y = d.paragraph(
    MARGIN,
    y + 8,
    `The last wave holds ${lastFilled} of ${w.perWave} workgroups` +
      (lastFilled < w.perWave
        ? `: ${w.perWave - lastFilled} slots idle, yet the wave takes as long as a full one.`
        : ": every slot busy."),
    WIDTH - 2 * MARGIN,
    { size: 12 },
  );
  y = legend(d, y + 2, [
    { color: COLOR.c, label: "slot with a workgroup (full wave)" },
    { color: COLOR.mark, label: "last, partly empty wave" },
    { color: COLOR.faint, label: "idle slot" },
  ]);
  d.text(MARGIN, y + 4, `Rows of a wave: the ${resident} workgroup slots of each SM.`, {
    size: 11,
    fill: tint(COLOR.ink, 0.4),
  });
  return finish(
    d,
    y + 8,
    `${stepHeading(ctx.spec)}: at ${shapeLabel(ctx.shape)}, plan ${planLabel(p)} launches ` +
      `${workgroups} workgroups; with ${resident} resident per SM on ${model.sms} SMs a wave is ` +
      `${w.perWave}, so ${w.waves} wave${w.waves > 1 ? "s" : ""}, the last holding ${lastFilled} (${
        (100 * w.fill).toFixed(1)
      }% ` +
      "of slots used overall). Wave model of kernels/13_shapes/plans.ts, not a measurement.",
  );
}
