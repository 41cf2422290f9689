/**
 * Install the kernelspec "deno" for your Jupyter: Deno's own kernel, started by the Deno that runs
 * this script, by its absolute path (under `npx -y deno@2.9.6 task kernel` that is the pinned
 * Deno in npm's cache, which a Jupyter started from another shell could not find on PATH), with
 * the environment tools/execute_notebook.ts starts it with.
 *
 *   deno task kernel      # into Jupyter's user data folder (JUPYTER_DATA_DIR to choose another)
 */
import { kernelArgv, kernelEnv } from "./kernel_client.ts";

const NAME = "deno";

/** Jupyter's user data folder, as jupyter_core.paths.jupyter_data_dir finds it. */
function jupyterDataDir(): string {
  const env = (name: string) => Deno.env.get(name) || undefined;
  const given = env("JUPYTER_DATA_DIR");
  if (given) return given;
  const home = env("HOME") ?? env("USERPROFILE");
  if (!home) throw new Error("no HOME: set JUPYTER_DATA_DIR");
  if (Deno.build.os === "darwin") return `${home}/Library/Jupyter`;
  if (Deno.build.os === "windows") {
    const appData = env("APPDATA");
    return appData ? `${appData}\\jupyter` : `${home}\\.jupyter\\data`;
  }
  return `${env("XDG_DATA_HOME") ?? `${home}/.local/share`}/jupyter`;
}

/** Write the kernelspec into `dataDir`/kernels/deno; returns its folder. */
async function installKernel(dataDir: string): Promise<string> {
  const folder = `${dataDir}/kernels/${NAME}`;
  await Deno.mkdir(folder, { recursive: true });
  const spec = {
    argv: kernelArgv("{connection_file}"),
    display_name: "Deno",
    language: "typescript",
    env: kernelEnv(),
  };
  await Deno.writeTextFile(`${folder}/kernel.json`, JSON.stringify(spec, null, 1) + "\n");
  return folder;
}

if (import.meta.main) {
  try {
    const folder = await installKernel(jupyterDataDir());
    console.log(`installed ${folder} (kernel: ${Deno.execPath()})`);
  } catch (e) {
    console.error(`install_kernel: ${(e as Error).message}`);
    Deno.exit(1);
  }
}
