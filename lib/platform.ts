/**
 * The one place the library reads project files (kernels' WGSL, tuning files): in Deno from
 * disk, in a browser over HTTP. Paths are relative to the project root, which is one folder
 * above this module; a bundle (dist/bench.js in Deno, site/assets/ladder.js in the browser)
 * sits one folder below the root it reads, so the same relative paths resolve there too. Also
 * where the library asks the system a question (a command's output), which only Deno can.
 */

/** How the library reads a project file on the platform it runs on. */
export interface Platform {
  /** The file's text; throws when it cannot be read. */
  readText(path: string): Promise<string>;
  /**
   * The file's text, synchronously, or undefined when it is absent, may not be read, or the
   * platform cannot read synchronously (a browser): callers then use their defaults.
   */
  readTextSyncIfPresent(path: string): string | undefined;
  /** The names in a project folder, synchronously; undefined where readTextSyncIfPresent is. */
  listSyncIfPresent(path: string): string[] | undefined;
}

/** The project root (or the site folder, in the browser bundle). */
const ROOT = new URL("../", import.meta.url);

/** A project file's URL: file: in Deno, http(s): in the browser. */
export function projectUrl(path: string): URL {
  return new URL(path, ROOT);
}

/** `read()`, or undefined when the file is absent or may not be read. */
function ifPresent<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch (e) {
    const denied = e instanceof Deno.errors.NotCapable ||
      e instanceof Deno.errors.PermissionDenied;
    if (e instanceof Deno.errors.NotFound || denied) return undefined;
    throw e;
  }
}

const denoFiles: Platform = {
  readText: (path) => Deno.readTextFile(projectUrl(path)),
  readTextSyncIfPresent: (path) => ifPresent(() => Deno.readTextFileSync(projectUrl(path))),
  listSyncIfPresent: (path) =>
    ifPresent(() => [...Deno.readDirSync(projectUrl(path))].map((e) => e.name).sort()),
};

const fetchedFiles: Platform = {
  async readText(path) {
    const response = await fetch(projectUrl(path));
    if (!response.ok) throw new Error(`${path}: HTTP ${response.status} ${response.statusText}`);
    return await response.text();
  },
  readTextSyncIfPresent: () => undefined,
  listSyncIfPresent: () => undefined,
};

/** Deno reads the disk; a browser (no `Deno` global) fetches from the site. */
export const platform: Platform = "Deno" in globalThis ? denoFiles : fetchedFiles;

/**
 * A command's standard output, or why there is none: a browser, no permission to run it, not
 * installed, no output.
 */
export function commandOutput(command: string, args: string[]): { text?: string; why?: string } {
  try {
    // A clean environment: Deno refuses to pass LD_LIBRARY_PATH (which a bundled Deno's loader
    // may set) to a command it is only allowed to run by name.
    const out = new Deno.Command(command, { args, stdout: "piped", stderr: "null", clearEnv: true })
      .outputSync();
    const text = new TextDecoder().decode(out.stdout);
    return text ? { text } : { why: `${command} printed nothing (exit ${out.code})` };
  } catch (e) {
    return { why: `${command}: ${(e as Error).message}` };
  }
}
