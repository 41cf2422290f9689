/**
 * A lab probe's record: the rows it measured, written whole to `path` after each one (so a probe
 * the device's time limit stops keeps what it measured), as `{ ...header, rows }`.
 */
export function probeRecord<Row>(
  path: string,
  header: Record<string, unknown>,
): { rows: Row[]; save: () => void } {
  const rows: Row[] = [];
  const save = () => Deno.writeTextFileSync(path, JSON.stringify({ ...header, rows }, null, 1));
  return { rows, save };
}
