/**
 * Notebooks as the Jupyter server stores them, byte for byte: what nbformat.writes produces
 * (Debian's python3-nbformat 5.5, nbformat/v4/nbjson.py and rwbase.py) and nbformat.write adds a
 * newline to. JupyterLab saves through the server, so a notebook written here is left unchanged
 * when JupyterLab opens and saves it. The rules:
 * - multi-line strings become lists of lines (Python's str.splitlines(keepends=True)): cell
 *   sources, stream text, and text/*, image/svg+xml and application/javascript output data;
 * - transient keys are dropped (metadata orig_nbformat, orig_nbformat_minor, signature; each
 *   cell's metadata.trusted);
 * - json.dumps with indent=1, sort_keys=True, ensure_ascii=False, separators (",", ": "), and
 *   Python's float repr (1e-05, not JavaScript's 0.00001).
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

/** A notebook cell as stored (sources and texts already joined by parseNotebook). */
export interface Cell extends JsonObject {
  cell_type: string;
  source: string;
  metadata: JsonObject;
}

export interface Notebook extends JsonObject {
  cells: Cell[];
  metadata: JsonObject;
}

/** Python's str.splitlines(keepends=True) line boundaries (control characters among them). */
// deno-lint-ignore no-control-regex
const LINE_END = /\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]/g;

/** Python's str.splitlines(keepends=True): "" gives [], a final line without an end is kept. */
export function splitLines(text: string): string[] {
  const lines: string[] = [];
  let start = 0;
  for (const match of text.matchAll(LINE_END)) {
    const end = match.index + match[0].length;
    lines.push(text.slice(start, end));
    start = end;
  }
  if (start < text.length) lines.push(text.slice(start));
  return lines;
}

const joined = (value: Json): Json =>
  Array.isArray(value) && value.every((v) => typeof v === "string") ? value.join("") : value;

/** application/json and application/*+json data stay JSON; nbformat never splits or joins it. */
const isJsonMime = (mime: string) =>
  mime === "application/json" || (mime.startsWith("application/") && mime.endsWith("+json"));

const splitMimes = new Set(["application/javascript", "image/svg+xml"]);

function mapBundle(bundle: Json | undefined, split: boolean): void {
  if (!bundle || typeof bundle !== "object" || Array.isArray(bundle)) return;
  for (const [mime, value] of Object.entries(bundle)) {
    if (split) {
      if (typeof value === "string" && (mime.startsWith("text/") || splitMimes.has(mime))) {
        bundle[mime] = splitLines(value);
      }
    } else if (!isJsonMime(mime)) {
      bundle[mime] = joined(value);
    }
  }
}

/** Apply nbformat's split_lines (split) or rejoin_lines (!split) in place. */
function mapLines(nb: Notebook, split: boolean): void {
  for (const cell of nb.cells) {
    const source = cell.source as Json;
    cell.source =
      (split && typeof source === "string" ? splitLines(source) : joined(source)) as string;
    const attachments = cell.attachments as JsonObject | undefined;
    for (const bundle of Object.values(attachments ?? {})) mapBundle(bundle, split);
    if (cell.cell_type !== "code") continue;
    for (const output of (cell.outputs ?? []) as JsonObject[]) {
      const type = output.output_type;
      if (type === "execute_result" || type === "display_data") {
        mapBundle(output.data, split);
      } else if (split ? type === "stream" : type) {
        const text = output.text;
        if (split && typeof text === "string") output.text = splitLines(text);
        if (!split && Array.isArray(text)) output.text = joined(text);
      }
    }
  }
}

/** A notebook from its file text, with multi-line strings joined (nbformat.reads). */
export function parseNotebook(text: string): Notebook {
  const nb = JSON.parse(text) as Notebook;
  mapLines(nb, false);
  return nb;
}

/** The file text the Jupyter server would write for this notebook (nbformat.write). */
export function serializeNotebook(nb: Notebook): string {
  const copy = structuredClone(nb);
  mapLines(copy, true);
  for (const key of ["orig_nbformat", "orig_nbformat_minor", "signature"]) {
    delete copy.metadata[key];
  }
  for (const cell of copy.cells) delete cell.metadata.trusted;
  return pythonJson(copy, "") + "\n";
}

/** Python's repr of a float that is not an integer: scientific below 1e-4 ("1.5e-05"). */
function pythonNumber(x: number): string {
  if (!Number.isFinite(x)) throw new Error(`notebook JSON: ${x} is not a JSON number`);
  if (Number.isInteger(x)) return JSON.stringify(x);
  const [mantissa, exponent] = x.toExponential().split("e");
  const exp = Number(exponent);
  if (exp >= -4) return JSON.stringify(x);
  return `${mantissa}e-${String(-exp).padStart(2, "0")}`;
}

/** json.dumps(value, indent=1, sort_keys=True, ensure_ascii=False, separators=(",", ": ")). */
function pythonJson(value: Json, indent: string): string {
  if (value === null || typeof value === "boolean") return String(value);
  if (typeof value === "number") return pythonNumber(value);
  if (typeof value === "string") return JSON.stringify(value);
  const inner = indent + " ";
  if (Array.isArray(value)) {
    if (value.length === 0) return "[]";
    return `[\n${value.map((v) => inner + pythonJson(v, inner)).join(",\n")}\n${indent}]`;
  }
  const keys = Object.keys(value).filter((k) => value[k] !== undefined).sort();
  if (keys.length === 0) return "{}";
  const items = keys.map((k) => `${inner}${JSON.stringify(k)}: ${pythonJson(value[k], inner)}`);
  return `{\n${items.join(",\n")}\n${indent}}`;
}

/** SHA-256 of a cell's source, hex: what a stamped cell records of the code that ran. */
export async function sourceSha256(source: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(source));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}
