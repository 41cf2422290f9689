#!/usr/bin/env bash
# The one command for the GPU host (no package registry there): validates and times every
# kernel, cuBLAS and TF.js with the bundled bench, and leaves the run record plus logs in $OUT.
# Here first:  sh tools/bundle.sh            (writes dist/bench.js; carry dist and .offline)
# There, from the project root:
#   source .offline/activate.sh && GEMM_COMMIT=<sha> bash tools/gpu_bench.sh [extra bench flags]
# Files in $OUT (default /tmp/gemm-gpu-bench): the record this run wrote (<device>-<date>T<hhmm>.json
# for data/runs/, or its .partial.json when the run stopped early), table.txt
# (stdout), bench.log (progress, stderr), env.txt (GPU, driver, Deno) and, after --tune or
# --tune-shapes, tuning-<device>-<step>.json (for data/tuning/<device>/<step>.json), or, when the
# time limit stopped a plan search, tuning-<device>-<step>.partial.json (the trials it measured).
# A run the time limit stopped is finished by a second call: the same flags plus
# --resume <its .partial.json> (committed or carried), which keeps its validated rows.
# Exit status: the bench's (124: stopped at the time limit; 3 also when tools/gpu_preflight.ts
# found the adapter unable to allocate a large buffer, before the bench ran).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/gemm-gpu-bench}
mkdir -p "$out"
# libwayland (loaded by the GPU driver) complains unless this is an absolute path.
case "${XDG_RUNTIME_DIR:-}" in /*) ;; *) export XDG_RUNTIME_DIR=/tmp ;; esac
command -v deno >/dev/null || { echo "gpu_bench: no deno on PATH; run: source .offline/activate.sh" >&2; exit 2; }
[ -f dist/bench.js ] || { echo "gpu_bench: dist/bench.js missing; run sh tools/bundle.sh before carrying dist" >&2; exit 2; }

{
  date -u +%Y-%m-%dT%H:%M:%SZ
  uname -srm
  deno --version
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,temperature.gpu --format=csv 2>&1
  echo "VK_DRIVER_FILES=${VK_DRIVER_FILES:-unset} GEMM_COMMIT=${GEMM_COMMIT:-unset}"
} >"$out/env.txt" 2>&1
cat "$out/env.txt"

# A machine whose driver refuses large buffers fails every row: stop before the bench starts.
deno run --no-config --no-remote --no-npm --allow-env tools/gpu_preflight.ts 2>&1 | tee -a "$out/env.txt"
[ "${PIPESTATUS[0]}" = 0 ] || exit 3

# Stop the bench before the host's 10-minute limit so the partial record still comes back
# (the bench rewrites <record>.partial.json after every result).
started=$(date +%s)
timeout "${GEMM_BENCH_TIMEOUT:-540}" deno run --no-config --no-remote --no-npm --cached-only \
  --allow-read --allow-write=.,/tmp --allow-env --allow-ffi --allow-run=git,getconf,lscpu,uptime \
  dist/bench.js --validate "${GEMM_VALIDATE_SHAPES:-20}" "$@" 2>&1 >"$out/table.txt" | tee "$out/bench.log"
rc=${PIPESTATUS[0]}

# The record this run wrote, as the bench printed it: its final line names the record (or the
# partial one it kept); a run stopped by the time limit printed only where it saved progress.
record=$(sed -n 's/^bench: \(saving progress to\|record written to\|partial record kept at\) \([^ ]*\).*/\2/p' \
  "$out/bench.log" | tail -1)
if [ -n "$record" ] && [ -f "$record" ]; then
  cp "$record" "$out/"
  echo "gpu_bench: record $record copied to $out/" >&2
else
  echo "gpu_bench: no record was written" >&2
fi
for tuning in data/tuning/*/*.json; do
  if [ -f "$tuning" ] && [ "$(stat -c %Y "$tuning")" -ge "$started" ]; then
    cp "$tuning" "$out/tuning-$(basename "$(dirname "$tuning")")-$(basename "$tuning")"
  fi
done
cat "$out/table.txt"
echo "gpu_bench: bench exit status $rc ($([ "$rc" = 124 ] && echo "timed out, partial record" || echo "0 ok, 1 failures, 3 device lost")); in $out: $(ls "$out" | tr '\n' ' ')"
exit "$rc"
