#!/bin/sh
# Bundle the bench into one file for GPU hosts with no package registry: dist/bench.js holds
# lib/ and the npm code (TF.js); the WGSL stays in kernels/, which the bundle reads at run time
# as ../kernels/ relative to itself. Then checks that the bundle starts with an empty Deno cache
# and no network; with --smoke it also runs it (64 x 64, this machine's adapter) that way.
# Other entry points (a lab probe, say) are bundled the same way to dist/<path with _>.js:
#   sh tools/bundle.sh [--smoke] [lab/generated/probe.ts ...]
# On the GPU host (project root, with dist/ and .offline/ carried along):
#   source .offline/activate.sh && GEMM_COMMIT=<sha> bash tools/gpu_bench.sh
set -eu
cd "$(dirname "$0")/.."
mkdir -p dist
smoke=""
if [ "${1:-}" = --smoke ]; then smoke=1; shift; fi

# bundle ENTRY OUT, then give each step module its own import.meta.url (tools/step_urls.awk).
bundle() {
  deno bundle --quiet --platform deno --output "$2" "$1"
  awk -f tools/step_urls.awk "$2" >"$2.tmp" && mv "$2.tmp" "$2"
}
bundle lib/bench.ts dist/bench.js
# The CPU threads' module, loaded by URL beside the bundle (lib/cpu_threads.ts).
bundle lib/cpu_worker.ts dist/cpu_worker.js
for entry in "$@"; do
  out="dist/$(printf %s "$entry" | sed 's/\.ts$//; s|/|_|g').js"
  bundle "$entry" "$out"
  echo "bundle: $out" >&2
done
empty=$(mktemp -d)
trap 'rm -rf "$empty"' EXIT
offline="deno run --no-config --no-remote --no-npm --cached-only"
DENO_DIR="$empty" $offline --allow-read=dist,kernels dist/bench.js --help >/dev/null
echo "bundle: dist/bench.js ($(wc -c <dist/bench.js) bytes) starts with an empty cache, offline" >&2
if [ -n "$smoke" ]; then
  # No network at all when unshare can make a network namespace; otherwise only --cached-only.
  isolate=""
  if unshare -rn true 2>/dev/null; then isolate="unshare -rn"; fi
  DENO_DIR="$empty" XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp} $isolate $offline \
    --allow-read --allow-write="$empty" --allow-env --allow-ffi --allow-run=git \
    dist/bench.js --sizes 64 --no-ceilings --no-cpu --out "$empty/run.json"
  echo "bundle: smoke run passed${isolate:+ with no network (unshare -rn)}" >&2
fi
