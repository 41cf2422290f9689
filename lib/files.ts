/**
 * Writing a file so that a reader, or a run stopped mid-write, never sees half of it; reading a
 * committed JSON file that may not exist yet.
 */

/** Write a temporary file beside `path` (a path or a file URL), then rename it over `path`. */
export async function writeWhole(path: string | URL, text: string): Promise<void> {
  const target = typeof path === "string" ? path : decodeURIComponent(path.pathname);
  const cut = target.lastIndexOf("/") + 1;
  const tmp = `${target.slice(0, cut)}.${target.slice(cut)}.${Deno.pid}.tmp`;
  await Deno.writeTextFile(tmp, text);
  await Deno.rename(tmp, target);
}

/** The JSON in `path`, or undefined when no such file is committed (any other error throws). */
export async function readJsonIfPresent<T>(path: string | URL): Promise<T | undefined> {
  try {
    return JSON.parse(await Deno.readTextFile(path)) as T;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return undefined;
    throw e;
  }
}
