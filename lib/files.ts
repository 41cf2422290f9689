/**
 * Writing a file so that a reader, or a run stopped mid-write, never sees half of it.
 */

/** Write a temporary file beside `path` (a path or a file URL), then rename it over `path`. */
export async function writeWhole(path: string | URL, text: string): Promise<void> {
  const target = typeof path === "string" ? path : decodeURIComponent(path.pathname);
  const cut = target.lastIndexOf("/") + 1;
  const tmp = `${target.slice(0, cut)}.${target.slice(cut)}.${Deno.pid}.tmp`;
  await Deno.writeTextFile(tmp, text);
  await Deno.rename(tmp, target);
}
