/**
 * Steps 06-09: the banks' passes per warp read, measured on the reader's adapter (lib/banks.ts),
 * beside the two ways of counting them.
 */
import { type BankOptions, type BankPatternName, measureBankPasses } from "../../banks.ts";
import { liveDisplay } from "../jupyter.ts";
import { fmt, spreadCell, tableBundle } from "../format.ts";
import type { Session } from "../session.ts";

/**
 * Time one warp read of each named pattern (validated first) and show, per pattern, the passes
 * counted a quarter-warp at a time (the step model's rule) and a whole warp at a time, and the
 * passes measured: its time over a 32-way conflict's, times 32.
 */
export async function showBankPasses(
  s: Session,
  names: BankPatternName[],
  opts: BankOptions = {},
): Promise<void> {
  const live = liveDisplay(`banks-${crypto.randomUUID()}`);
  await live.update(`timing ${names.length} read patterns and the 32-way calibration`);
  const results = await measureBankPasses(s.gpu, names, opts);
  await live.update(tableBundle(
    [
      "one warp's read",
      "whose",
      "validated",
      "passes, by quarter-warps",
      "passes, whole warp",
      "passes measured",
      "spread, runs",
    ],
    results.map((r) => [
      r.pattern.label,
      r.pattern.where,
      r.validated,
      r.quarterWarp,
      r.wholeWarp,
      fmt(r.passes),
      spreadCell(r.timing),
    ]),
    `Bank passes per warp read on ${s.summary.description}${s.software ? " (software)" : ""}, ` +
      "live: each pattern's time over a 32-way conflict's, times 32",
  ));
}
