/**
 * The one Jupyter display adapter: MIME bundles shown through Deno's kernel, one output updated
 * in place for progress, and plain text on the console outside a kernel (tests, CLI).
 */

/** A Jupyter MIME bundle: "text/plain" is always present, the rest are richer renderings. */
export type DisplayBundle = { "text/plain": string } & Record<string, unknown>;

/** Per-MIME display metadata, e.g. `{ "image/png": { width: 800 } }` to size a 2x image. */
export type DisplayMetadata = Record<string, Record<string, unknown>>;

type JupyterDisplay = (obj: unknown, opts: Record<string, unknown>) => Promise<void>;

/** Deno.jupyter.display inside `deno jupyter`; undefined elsewhere (where touching it throws). */
function jupyterDisplay(): JupyterDisplay | undefined {
  try {
    return (Deno as unknown as { jupyter: { display: JupyterDisplay } }).jupyter.display;
  } catch {
    return undefined;
  }
}

/** True inside a Jupyter kernel. */
export function inJupyter(): boolean {
  return jupyterDisplay() !== undefined;
}

/** Show a bundle as a new output; outside Jupyter its plain text goes to the console. */
export async function showBundle(
  bundle: DisplayBundle,
  metadata: DisplayMetadata = {},
): Promise<void> {
  await publish(bundle, {}, metadata);
}

async function publish(
  bundle: DisplayBundle,
  opts: { display_id?: string; update?: boolean },
  metadata: DisplayMetadata = {},
): Promise<void> {
  const display = jupyterDisplay();
  if (!display) {
    console.log(bundle["text/plain"]);
    return;
  }
  if (!Object.keys(metadata).length) {
    await display(bundle, { raw: true, ...opts });
    return;
  }
  // Deno.jupyter.display always sends empty metadata; the message it sends, with ours.
  const { broadcast } = (Deno as unknown as { jupyter: { broadcast: JupyterBroadcast } }).jupyter;
  await broadcast(opts.update ? "update_display_data" : "display_data", {
    data: bundle,
    metadata,
    transient: opts.display_id ? { display_id: opts.display_id } : {},
  });
}

type JupyterBroadcast = (type: string, content: Record<string, unknown>) => Promise<void>;

/** One notebook output replaced in place: progress lines first, then a table or a chart. */
export interface LiveDisplay {
  readonly id: string;
  /**
   * Replace the output with a bundle, or with a line of progress (plain text). Updates land in
   * the order they were made even when a caller does not await them (a progress callback), so
   * a late progress line can never overwrite the final result.
   */
  update(content: DisplayBundle | string, metadata?: DisplayMetadata): Promise<void>;
}

/** An output that later updates replace (Jupyter's display_id); outside Jupyter each prints. */
export function liveDisplay(id = `gemm-${crypto.randomUUID()}`): LiveDisplay {
  let shown = false;
  let last = Promise.resolve();
  return {
    id,
    update(content, metadata) {
      const bundle = typeof content === "string" ? { "text/plain": content } : content;
      last = last.then(async () => {
        await publish(bundle, { display_id: id, ...(shown ? { update: true } : {}) }, metadata);
        shown = true;
      });
      return last;
    },
  };
}
