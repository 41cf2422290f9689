/**
 * What notebook helpers display, without a Jupyter kernel: a stand-in for the kernel's display
 * (`Deno.jupyter`, which lib/notebook/jupyter.ts looks up at each call) collects every bundle
 * `show` publishes, and is removed after it.
 */
export async function displayed(show: () => Promise<void>): Promise<Record<string, string>[]> {
  const bundles: Record<string, string>[] = [];
  const deno = Deno as unknown as { jupyter: unknown };
  deno.jupyter = { display: (bundle: Record<string, string>) => void bundles.push(bundle) };
  try {
    await show();
  } finally {
    deno.jupyter = undefined;
  }
  return bundles;
}
