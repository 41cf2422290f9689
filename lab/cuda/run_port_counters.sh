#!/usr/bin/env bash
# On the GPU host: build lab/cuda/port_11.cu and read Nsight Compute's counts for three of its
# variants at 4096 (the whole kernel, with shared-memory indices clamped as naga clamps them, with
# every index clamped), each the launch after 20 warm-ups of that variant. Results go to $1
# (default ./port_counters): ncu_<variant>.csv (raw page), for lab/cuda/record_port_counters.ts.
set -uo pipefail
out=${1:-port_counters}
mkdir -p "$out"
bin=$(dirname "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")
lib=/usr/local/cuda-13.0/targets/x86_64-linux/lib
"$bin/nvcc" -O3 -arch=sm_90 -o /tmp/port_11 "$(dirname "$0")/port_11.cu" -L"$lib" \
  -l:libcublas.so.13 || exit 1
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | tail -1)
for v in "0:whole" "16:shared_clamped" "48:all_clamped"; do
  bits=${v%%:*} name=${v#*:}
  LD_LIBRARY_PATH=$lib:${LD_LIBRARY_PATH:-} "$ncu" --clock-control none \
    --kernel-name-base demangled --kernel-name "regex:port11<\\(int\\)128, \\(int\\)256, \\(int\\)16, \\(int\\)16, \\(int\\)8, \\(int\\)$bits>" \
    --launch-skip 21 --launch-count 1 \
    --section SpeedOfLight --section WarpStateStats --section SchedulerStats \
    --section InstructionStats \
    --metrics smsp__inst_executed.sum,sm__sass_thread_inst_executed_op_ffma_pred_on.sum,gpu__time_duration.sum \
    --csv --page raw /tmp/port_11 4096 > "$out/ncu_$name.csv" 2> "$out/ncu_$name.err"
  echo "ncu $name: exit $? ($(wc -c < "$out/ncu_$name.csv") bytes)"
done
