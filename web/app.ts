/// <reference lib="dom" />
/**
 * The site's script (bundled to site/assets/ladder.js by tools/build_site.ts): mounts the live
 * runner where the page has `<section id="gemm-live">`, a step's (data-step="tiled") or the
 * whole ladder's (data-page="ladder").
 */
import { mountLadderRunner } from "./ladder_runner.ts";
import { mountStepRunner } from "./step_runner.ts";
import { hideWebGpuIfAsked } from "./test_hooks.ts";
import { fill, h } from "./dom.ts";

hideWebGpuIfAsked();
const root = document.getElementById("gemm-live");
if (root) {
  const mount = root.dataset.page === "ladder"
    ? mountLadderRunner(root)
    : mountStepRunner(root, root.dataset.step ?? "");
  mount.catch((e) => {
    root.dataset.state = "error";
    fill(root, h("p", { class: "error" }, `The live runner could not start: ${e?.message ?? e}`));
  });
}
