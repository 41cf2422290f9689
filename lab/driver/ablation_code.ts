/**
 * The machine code of every stage of the ladder ablation (lab: not part of the product).
 * lab/ablate_ladder.ts ran on the GPU host with the NVIDIA shader disk cache pointed at an empty
 * folder (as lab/driver/sass.ts describes); the cache then holds wgpu's and the runner's own
 * programs and, in the order the ablation created them, one program per stage. The stages'
 * programs are the ones with multiply-adds; each is disassembled, and its instructions per
 * multiply-add and issue ceiling counted as lab/driver/issue_ceiling.ts counts the ladder's. A
 * stage whose code lost multiply-adds (the compiler merged some) is marked: its GFLOP/s-equivalent
 * counts work that did not run.
 *
 *   deno run -A lab/driver/ablation_code.ts --ablation ABLATION.json --cache CACHE \
 *     --nvdisasm NVDISASM --ceiling GFLOPS --out data/ablation/ladder/DEVICE.json
 */
import type { AblationFile, StageCode } from "../../lib/ablation.ts";
import { findKernel } from "../../lib/registry.ts";
import { requiredFlag } from "../flags.ts";
import { perMultiplyAdd } from "./issue_ceiling.ts";
import { analyse, cacheFiles, disassemble, isMultiplyAdd, programs } from "./sass.ts";

/** The multiply-adds a stage may lose outside its loops (a constant folded in the epilogue). */
const STRAY = 2;

const usage = "usage: ablation_code.ts --ablation FILE --cache DIR --nvdisasm PATH " +
  "--ceiling GFLOPS --out FILE";
const file = JSON.parse(Deno.readTextFileSync(requiredFlag("--ablation", usage))) as AblationFile;
const nvdisasm = requiredFlag("--nvdisasm", usage);
const ceiling = Number(requiredFlag("--ceiling", usage));
const listings = cacheFiles(requiredFlag("--cache", usage))
  .flatMap((f) => programs(Deno.readFileSync(f)))
  .map((p) => analyse(disassemble(nvdisasm, p.code)))
  .filter((a) => a.body.some(isMultiplyAdd));
const stages = file.ablations.reduce((n, a) => n + a.stages.length, 0);
if (listings.length !== stages) {
  throw new Error(`${listings.length} programs with multiply-adds for ${stages} stages`);
}

let next = 0;
for (const a of file.ablations) {
  const spec = findKernel(a.kernel!);
  if (!spec) throw new Error(`no kernel ${a.kernel}`);
  const invocations = spec.workgroupSize(a.params).reduce((x, y) => x * y, 1);
  let whole: { multiplyAdds: number; loads?: { loads: number; loadWidth: number }[] } | undefined;
  for (const stage of a.stages) {
    const { body, summary } = listings[next++];
    const multiplyAdds = body.filter(isMultiplyAdd).length;
    const tile = summary.tileLoopOutsideIt;
    // A tile-load loop without its loads runs as many trips as it did with them.
    if (whole?.loads && tile) {
      if (whole.loads.length !== tile.innerLoops.length) {
        throw new Error(`${a.kernel}: loops differ`);
      }
      tile.innerLoops = tile.innerLoops.map((l, i) => ({ ...l, ...whole!.loads![i] }));
    }
    whole ??= { multiplyAdds, loads: tile?.innerLoops };
    const code: StageCode = { instructions: body.length, multiplyAdds };
    const perFma = perMultiplyAdd({
      label: a.kernel!,
      kernel: a.kernel!,
      params: a.params,
      invocations,
      multiplyAddLoop: summary.multiplyAddLoop,
      tileLoopOutsideIt: tile,
    });
    if (multiplyAdds < whole.multiplyAdds - STRAY) {
      code.notCounted = `the compiler merged multiply-adds (${multiplyAdds} of ` +
        `${whole.multiplyAdds} left): the time is not the kernel's work`;
    } else if (typeof perFma === "string") code.notCounted = perFma;
    else {
      code.instructionsPerMultiplyAdd = perFma;
      code.issueCeilingGflops = ceiling / perFma;
    }
    stage.machineCode = code;
  }
}
Deno.writeTextFileSync(requiredFlag("--out", usage), JSON.stringify(file, null, 1) + "\n");
