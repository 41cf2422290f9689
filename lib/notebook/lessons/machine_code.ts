/**
 * The machine code behind a step's speed, on the page: a kernel's multiply-add loop as NVIDIA's
 * driver compiled it (lib/machine_code.ts), each instruction labelled with its role, and the roles
 * counted per multiply-add side by side for several kernels. The code is the committed capture
 * of a GPU host, named in each caption; a reader's own GPU compiles its own.
 */
import {
  countRoles,
  type Instruction,
  loadMachineLoop,
  loadSassIndex,
  type MachineLoop,
  type Role,
  ROLES,
  type SassIndex,
} from "../../machine_code.ts";
import { showBundle } from "../jupyter.ts";
import { type Cell, escapeHtml, fmt, showNote, showTable } from "../format.ts";

const ROLE_COLOURS: Partial<Record<Role, string>> = {
  "multiply-add": "#e6ffec",
  "read workgroup memory": "#ddf4ff",
  "store workgroup memory": "#ddf4ff",
  "load global memory": "#fbefff",
  "local memory": "#ffebe9",
  "index clamp": "#fff3c4",
};

/** A run of instructions shorter than this is listed whole; a longer one keeps its first line. */
const RUN_SHOWN_WHOLE = 4;
/** A listing longer than this shows its head and tail, the whole of it folded below. */
const MAX_LISTING_LINES = 34;
const HEAD_LINES = 12;

/** The loops of these pipelines, or undefined (after a note) when the device has no capture. */
async function machineLoops(
  labels: string[],
  device: string,
): Promise<MachineLoop[] | undefined> {
  const index = await loadSassIndex(device);
  if (!index) {
    await showNote(`No machine code is committed for ${device} (\`data/driver/sass/\`).`);
    return undefined;
  }
  return await Promise.all(labels.map((label) => loadMachineLoop(index, device, label)));
}

/** Where the code came from, for a caption: the capture's GPU, commit and date, and its path. */
const captured = (index: SassIndex, path: string) =>
  `${index.device.description}'s Vulkan driver, captured at commit ${index.commit} on ` +
  `${index.captured.slice(0, 10)} (${path})`;

/** The loop's instructions in runs of consecutive instructions of one role. */
function runs(loop: Instruction[]): Instruction[][] {
  const found: Instruction[][] = [];
  for (const i of loop) {
    const last = found.at(-1);
    if (last && last[0].role === i.role) last.push(i);
    else found.push([i]);
  }
  return found;
}

/**
 * One kernel's multiply-add loop, one instruction per line with its role beside it; a run of
 * RUN_SHOWN_WHOLE or more instructions of one role shows its first and a count of the rest. The
 * caption sums the roles per multiply-add.
 */
export async function showMachineLoop(label: string, device = "nvidia-h200"): Promise<void> {
  const [l] = (await machineLoops([label], device)) ?? [];
  if (!l) return;
  const width = Math.max(...l.loop.map((i) => i.text.length));
  const lines: { text: string; role?: Role }[] = [];
  for (const run of runs(l.loop)) {
    const shown = run.length >= RUN_SHOWN_WHOLE ? run.slice(0, 1) : run;
    for (const i of shown) {
      lines.push({ text: `${i.address}  ${i.text.padEnd(width)}  ${i.role}`, role: i.role });
    }
    if (shown.length < run.length) {
      lines.push({
        text: `${"".padEnd(6)}... ${run.length - 1} more ${run[0].role}`,
        role: run[0].role,
      });
    }
  }
  const counts = [...countRoles(l.loop)].map(([role, n]) => `${n} ${role}`).join(", ");
  const summary = `${l.label}'s multiply-add loop: ${l.loop.length} instructions a trip for ` +
    `${l.multiplyAdds} multiply-add${l.multiplyAdds === 1 ? "" : "s"}, ` +
    `${fmt(l.loop.length / l.multiplyAdds)} per multiply-add (${counts}). ` +
    `Machine code from ${captured(l.index, `data/driver/sass/${device}/${l.entry.file}`)}.`;
  const pre = (shown: { text: string; role?: Role }[]) =>
    `<pre style="font-size:12px;line-height:1.35;text-align:left">` +
    shown.map((line) => {
      const colour = line.role && ROLE_COLOURS[line.role];
      const style = colour ? ` style="background:${colour}"` : "";
      return `<span${style}>${escapeHtml(line.text)}</span>`;
    }).join("\n") + "</pre>";
  let html = `<p>${escapeHtml(summary)}</p>`;
  if (lines.length <= MAX_LISTING_LINES) html += pre(lines);
  else {
    const tail = MAX_LISTING_LINES - HEAD_LINES - 1;
    const cut = lines.length - HEAD_LINES - tail;
    html += pre([
      ...lines.slice(0, HEAD_LINES),
      { text: `      ... ${cut} lines more (the whole loop is folded below)` },
      ...lines.slice(-tail),
    ]) + `<details><summary>The whole loop, ${lines.length} lines</summary>${pre(lines)}</details>`;
  }
  await showBundle({
    "text/plain": [summary, ...lines.map((line) => line.text)].join("\n"),
    "text/html": html,
  });
}

/**
 * The roles of several kernels' multiply-add loops counted per multiply-add, one column per
 * kernel, with each loop's total: where one step's instructions went.
 */
export async function compareMachineLoops(
  labels: string[],
  device = "nvidia-h200",
): Promise<void> {
  const loops = await machineLoops(labels, device);
  if (!loops) return;
  const counts = loops.map((l) => countRoles(l.loop));
  const perFma = (l: MachineLoop, n: number | undefined) => (n ?? 0) / l.multiplyAdds;
  const rows: Cell[][] = ROLES.filter((role) => counts.some((c) => c.has(role)))
    .map((role) => [role, ...loops.map((l, i) => perFma(l, counts[i].get(role)))]);
  rows.push(["all, per multiply-add", ...loops.map((l) => l.loop.length / l.multiplyAdds)]);
  rows.push(["instructions a trip", ...loops.map((l) => l.loop.length)]);
  rows.push(["multiply-adds a trip", ...loops.map((l) => l.multiplyAdds)]);
  await showTable(
    ["per multiply-add, by role", ...loops.map((l) => l.label)],
    rows,
    `Instructions of each multiply-add loop per multiply-add, by role: machine code from ` +
      captured(loops[0].index, `data/driver/sass/${device}/`),
  );
}
