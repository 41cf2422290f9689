#!/usr/bin/env bash
# On the GPU host (project root, .offline/ and dist/ carried; sh tools/bundle.sh lab/clock/probe.ts
# here first): the clock probe with nvidia-smi logging the SM clock every 50 ms beside it.
set -uo pipefail
out=${OUT:-/tmp/clock-probe}
mkdir -p "$out"
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,utilization.gpu,power.draw,pstate \
  --format=csv -lms 50 >"$out/clocks.csv" 2>&1 &
smi=$!
deno run --no-config --no-remote --no-npm --cached-only --allow-all dist/lab_clock_probe.js \
  "$out/clock-probe.json" 2>&1 | tee "$out/clock-probe.log"
rc=${PIPESTATUS[0]}
kill "$smi"
exit "$rc"
