/** Reading Nsight Compute's raw CSV page (`ncu --csv --page raw`), for the lab's CUDA records. */

/** One metric's value from Nsight Compute's raw CSV page (header, units, then the one launch). */
export function metrics(csv: string): Map<string, number> {
  const rows = csv.split("\n").filter((l) => l.startsWith('"')).map((l) =>
    [...l.matchAll(/"((?:[^"]|"")*)"/g)].map((m) => m[1])
  );
  const header = rows.findIndex((r) => r[0] === "ID");
  if (header < 0 || !rows[header + 2]) throw new Error("no profiled launch in the CSV");
  const values = new Map<string, number>();
  rows[header].forEach((name, i) => {
    const v = Number(rows[header + 2][i]?.replace(/,/g, ""));
    if (Number.isFinite(v)) values.set(name, v);
  });
  return values;
}

/** A metric `metrics` read, or an error naming it (and `where`, the CSV it was missing from). */
export function required(m: Map<string, number>, name: string, where = ""): number {
  const v = m.get(name);
  if (v === undefined) throw new Error(`${where ? `${where}: ` : ""}metric ${name} missing`);
  return v;
}
