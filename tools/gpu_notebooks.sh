#!/usr/bin/env bash
# Execute the notebooks on the GPU host (no package registry, no Jupyter there) with Deno's own
# kernel, stamped with the device and commit, for committing: tools/execute_notebook.ts --stamp.
# Here first:  sh tools/notebook_cache.sh      (writes dist/notebook-deno-dir: the npm code the
#                                               notebooks import; carry dist and .offline)
# There, from the project root:
#   source .offline/activate.sh && GEMM_COMMIT=<sha> bash tools/gpu_notebooks.sh [notebooks/NN.ipynb ...]
# With no arguments: every notebooks/*.ipynb. One notebook at a time, each in a fresh kernel; a
# failure is reported and the next notebook still runs. Notebooks not started before
# GEMM_NOTEBOOKS_TIMEOUT seconds (default 540, under the host's 10-minute limit) are skipped and
# named, so the rest can run in a second call. Files in $OUT (default /tmp/gemm-gpu-notebooks):
# notebooks/NN.ipynb (executed; copy to notebooks/ and commit), notebooks.log, env.txt, and all
# three in notebooks.tar.
# Exit status: 0 when every notebook ran cleanly, 1 otherwise, 3 when tools/gpu_preflight.ts found
# the adapter unable to allocate a large buffer (then no notebook ran).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/gemm-gpu-notebooks}
mkdir -p "$out/notebooks"
case "${XDG_RUNTIME_DIR:-}" in /*) ;; *) export XDG_RUNTIME_DIR=/tmp ;; esac
command -v deno >/dev/null || { echo "gpu_notebooks: no deno on PATH; run: source .offline/activate.sh" >&2; exit 2; }
cache=$PWD/dist/notebook-deno-dir
[ -d "$cache/npm" ] || { echo "gpu_notebooks: $cache missing; run sh tools/notebook_cache.sh before carrying dist" >&2; exit 2; }
# The kernel resolves the notebooks' npm imports from this cache alone.
export DENO_DIR=$cache
# Chart fonts: the system's when installed, else the copies tools/notebook_cache.sh carried.
if [ ! -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] && [ -f dist/fonts/DejaVuSans.ttf ]; then
  export GEMM_FONT_DIR=$PWD/dist/fonts
fi

{
  date -u +%Y-%m-%dT%H:%M:%SZ
  deno --version | head -1
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1
  echo "VK_DRIVER_FILES=${VK_DRIVER_FILES:-unset} GEMM_COMMIT=${GEMM_COMMIT:-unset}"
} >"$out/env.txt" 2>&1
cat "$out/env.txt"

# A machine whose driver refuses large buffers fails every notebook at its first cell: stop now.
deno run --no-config --no-remote --no-npm --allow-env tools/gpu_preflight.ts 2>&1 | tee -a "$out/env.txt"
[ "${PIPESTATUS[0]}" = 0 ] || exit 3

if [ $# -gt 0 ]; then notebooks=("$@"); else notebooks=(notebooks/*.ipynb); fi
budget=${GEMM_NOTEBOOKS_TIMEOUT:-540}
started=$(date +%s)
failed=() skipped=()
for nb in "${notebooks[@]}"; do
  left=$((budget - ($(date +%s) - started)))
  if [ "$left" -le 10 ]; then skipped+=("$nb"); continue; fi
  t0=$(date +%s)
  timeout "$left" deno run -A tools/execute_notebook.ts --stamp --out "$out/notebooks" "$nb" 2>&1 |
    grep -v '^{"runs"' | tee -a "$out/notebooks.log"
  rc=${PIPESTATUS[0]}
  echo "gpu_notebooks: $(basename "$nb") exit $rc in $(($(date +%s) - t0)) s" | tee -a "$out/notebooks.log"
  [ "$rc" = 0 ] || failed+=("$nb")
done
echo "gpu_notebooks: ${#notebooks[@]} notebooks, failed: ${failed[*]:-none}, not started (time): ${skipped[*]:-none}; in $out/notebooks" |
  tee -a "$out/notebooks.log"
# One file to bring back: a reply can leave some of many files behind.
tar -C "$out" -cf "$out/notebooks.tar" notebooks notebooks.log env.txt
[ ${#failed[@]} = 0 ] && [ ${#skipped[@]} = 0 ]
