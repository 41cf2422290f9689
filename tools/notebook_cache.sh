#!/bin/sh
# Prepare dist/notebook-deno-dir: a Deno cache (DENO_DIR) with the npm code the notebooks import
# (vega, vega-lite, resvg, plotly, TF.js), for GPU hosts with no package registry, where
# tools/gpu_notebooks.sh runs the kernel with it. The npm packages hold far more than the
# notebooks read (TF.js alone is 70 MB: every build format, sources, maps), so the files a run
# reads are traced (strace) and only those, plus each package.json, are kept. Needs strace.
#   sh tools/notebook_cache.sh [notebooks/NN.ipynb ...]   # also trace these notebooks' runs
# Then carry dist/ (and .offline/) to the host. Checked: the notebooks and the warm-up run with
# this cache alone and no network (unshare -rn).
set -eu
cd "$(dirname "$0")/.."
command -v strace >/dev/null || { echo "notebook_cache: needs strace (apt-get install strace)" >&2; exit 2; }
cache=dist/notebook-deno-dir
rm -rf "$cache"
mkdir -p "$cache"
export DENO_DIR="$PWD/$cache" XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp}
deno cache --quiet lib/mod.ts lib/charts/mod.ts lib/cpu_bench.ts lib/record.ts lib/cpu.ts \
  tools/execute_notebook.ts tools/notebook_warmup.ts
echo "notebook_cache: full cache $(du -sh "$cache" | cut -f1)" >&2

trace=$(mktemp -d)
trap 'rm -rf "$trace"' EXIT
strace -f -qq -e trace=openat,open,readlink,stat,newfstatat,statx -o "$trace/warmup" \
  deno run -A tools/notebook_warmup.ts >&2
if [ $# -gt 0 ]; then
  strace -f -qq -e trace=openat,open,readlink,stat,newfstatat,statx -o "$trace/notebooks" \
    deno run -A tools/execute_notebook.ts --out "$trace/out" "$@" >&2
fi
# Paths under the npm cache that some process opened or looked at.
cat "$trace"/warmup "$trace"/notebooks 2>/dev/null |
  grep -o "\"$DENO_DIR/npm/[^\"]*\"" | tr -d '"' | sort -u >"$trace/used"
find "$cache/npm" -type f | while read -r f; do
  case "$f" in */package.json) continue ;; esac
  grep -qxF "$PWD/$f" "$trace/used" || rm -f "$f"
done
find "$cache/npm" -type d -empty -delete
# The transpile caches rebuild themselves; they would only add stale bytes.
rm -rf "$cache/gen" "$cache"/*_cache_v*
# The chart fonts (lib/render.ts), for a host without fonts-dejavu-core.
mkdir -p dist/fonts
cp /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf /usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf dist/fonts/
echo "notebook_cache: $cache $(du -sh "$cache" | cut -f1) (traced: warm-up${1:+, $*}); dist/fonts" >&2
