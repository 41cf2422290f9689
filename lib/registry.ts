/**
 * The ladder: every step's description (kernels/NN_name/step.ts) in story order, and the lookup.
 * A step's id, number and name come from its folder; the rest of the code names steps by name
 * ("autotune"), so renumbering a step is a folder rename plus its import line here.
 */
import * as naive from "../kernels/02_naive/step.ts";
import * as coalesce from "../kernels/03_coalesce/step.ts";
import * as tiled from "../kernels/04_tiled/step.ts";
import * as blocktile1d from "../kernels/05_blocktile_1d/step.ts";
import * as blocktile2d from "../kernels/06_blocktile_2d/step.ts";
import * as vectorize from "../kernels/07_vectorize/step.ts";
import * as bankConflicts from "../kernels/08_bank_conflicts/step.ts";
import * as subgroupTiling from "../kernels/09_subgroup_tiling/step.ts";
import * as doubleBuffer from "../kernels/10_double_buffer/step.ts";
import * as autotune from "../kernels/11_autotune/step.ts";
import * as generated from "../kernels/12_generated/step.ts";
import * as shapes from "../kernels/13_shapes/step.ts";
import * as f16 from "../kernels/14_f16/step.ts";
import { type KernelSpec, stepName } from "./steps/spec.ts";

export type { CostModel, KernelSpec, Params } from "./steps/spec.ts";
export { numericsOf, stepName } from "./steps/spec.ts";
export { launchModel, naiveModel, tiledModel } from "./steps/launch.ts";

/** The ladder in story order (teaching variants follow the step they belong to). */
export const KERNELS: KernelSpec[] = [
  naive.step,
  coalesce.step,
  coalesce.unrolled,
  coalesce.unrolledRows,
  tiled.step,
  tiled.noRawBarrier,
  tiled.noWarBarrier,
  tiled.fourSums,
  tiled.oneSumByFour,
  tiled.steps,
  tiled.writtenOut,
  blocktile1d.step,
  blocktile2d.step,
  blocktile2d.localArray,
  blocktile2d.loadsFirst,
  blocktile2d.writtenOut,
  vectorize.step,
  vectorize.scalarLoads,
  vectorize.scalarLoadsFirst,
  vectorize.scalarReads,
  vectorize.loadsFirst,
  vectorize.writtenOut,
  vectorize.valueSelect,
  bankConflicts.step,
  subgroupTiling.step,
  subgroupTiling.flat,
  subgroupTiling.loadsFirst,
  subgroupTiling.flatLoadsFirst,
  subgroupTiling.writtenOut,
  subgroupTiling.flatWrittenOut,
  doubleBuffer.step,
  doubleBuffer.flat,
  doubleBuffer.singleBuffer,
  doubleBuffer.stashFirst,
  doubleBuffer.storedInOrder,
  doubleBuffer.twoBarriers,
  autotune.step,
  generated.step,
  shapes.step,
  f16.step,
  f16.storage,
  f16.storageVec4Loads,
  f16.vec4Loads,
  f16.storageU32Loads,
  f16.u32Loads,
];

/**
 * Add a step after the ladder's last (a reader's own step, or a test's, from a folder named
 * `kernels/NN_name/` anywhere): everything that lists steps reads KERNELS, so the bench, the
 * tests' derived lists and the notebook helpers pick it up. Its name and id must be new, its
 * number after every step's. Returns the function that takes it out again.
 */
export function registerStep(spec: KernelSpec): () => void {
  const clash = KERNELS.find((k) => k.name === spec.name || k.id === spec.id);
  if (clash) throw new Error(`a step named ${spec.name} (${clash.id}) is already registered`);
  const last = Math.max(...KERNELS.map((k) => k.number));
  if (spec.number <= last) {
    throw new Error(`${spec.id}: a registered step comes after the ladder's last (${last})`);
  }
  KERNELS.push(spec);
  return () => {
    const at = KERNELS.indexOf(spec);
    if (at >= 0) KERNELS.splice(at, 1);
  };
}

/**
 * Find a kernel by name ("naive"), id ("02_naive", matched by its name, so ids recorded before
 * a renumbering still resolve) or number ("2" or "02").
 */
export function findKernel(key: string, list: KernelSpec[] = KERNELS): KernelSpec | undefined {
  const k = key.trim().toLowerCase();
  if (/^\d+$/.test(k)) return list.find((s) => s.number === Number(k) && !s.demo);
  return list.find((s) => s.name === stepName(k));
}

/** The step a step's kernel builds on: the ladder's step before it, unless its `change` says. */
export function previousStep(spec: KernelSpec): KernelSpec | undefined {
  const named = spec.change?.buildsOn;
  if (named) {
    const built = findKernel(named);
    if (!built) throw new Error(`${spec.name} builds on "${named}", which is not in the registry`);
    return built;
  }
  const ladder = KERNELS.filter((k) => !k.demo);
  const at = ladder.findIndex((k) => k.name === spec.name);
  return at > 0 ? ladder[at - 1] : undefined;
}
