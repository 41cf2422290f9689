#!/usr/bin/env bash
# On the GPU host: build lab/cuda/port_11.cu, time one set of its variants at 4096 (validated,
# beside cuBLAS: port.txt), then read Nsight Compute's counts for each, the launch after 20
# warm-ups of that variant. $2 picks the set: "11" (default: the whole kernel at 11's fastest
# point, with shared-memory indices clamped as naga clamps them, with every index clamped), "ten"
# (10's tile: 09's order, the prefetch with one copy, two copies stored first, double buffered) or
# "tn" (11's tile at TN 16 and 8, the k loop written out and kept). Results go to $1 (default
# ./port_counters): port.txt and ncu_<variant>.csv (raw page), for lab/cuda/record_port_counters.ts.
set -uo pipefail
out=${1:-port_counters}
set_=${2:-11}
mkdir -p "$out"
bin=$(dirname "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")
lib=/usr/local/cuda-13.0/targets/x86_64-linux/lib
"$bin/nvcc" -O3 -arch=sm_90 -Xptxas -v -o /tmp/port_11 "$(dirname "$0")/port_11.cu" -L"$lib" \
  -l:libcublas.so.13 2>&1 | grep -E "Compiling entry|registers" > "$out/ptxas.txt" || exit 1
# Each variant: the kernel's template arguments up to its ABLATE bits (a regex), then its name.
t11='\(int\)128, \(int\)256, \(int\)16, \(int\)16, \(int\)8'
case "$set_" in
  ten)
    t='\(int\)128, \(int\)128, \(int\)8, \(int\)8, \(int\)1'
    variants=("$t, \(int\)192:a_09_order" "$t, \(int\)64:b_prefetch_one_copy"
      "$t, \(int\)128:c_two_copies_stored_first" "$t, \(int\)0:d_double_buffered")
    args="4096 ten" ;;
  tn)
    t8='\(int\)128, \(int\)256, \(int\)16, \(int\)8, \(int\)8'
    variants=("$t11, \(int\)0:a_tn16_written_out" "$t11, \(int\)256:b_tn16_kept"
      "$t8, \(int\)0:c_tn8_written_out" "$t8, \(int\)256:d_tn8_kept")
    args="4096 tn" ;;
  *)
    variants=("$t11, \(int\)0:whole" "$t11, \(int\)16:shared_clamped" "$t11, \(int\)48:all_clamped")
    args="4096" ;;
esac
# shellcheck disable=SC2086
LD_LIBRARY_PATH=$lib:${LD_LIBRARY_PATH:-} /tmp/port_11 $args > "$out/port.txt" || exit 1
cat "$out/port.txt"
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | tail -1)
for v in "${variants[@]}"; do
  spec=${v%:*} name=${v##*:}
  # shellcheck disable=SC2086
  LD_LIBRARY_PATH=$lib:${LD_LIBRARY_PATH:-} "$ncu" --clock-control none \
    --kernel-name-base demangled --kernel-name "regex:port11<$spec, " \
    --launch-skip 21 --launch-count 1 \
    --section SpeedOfLight --section WarpStateStats --section SchedulerStats \
    --section InstructionStats --section Occupancy \
    --metrics smsp__inst_executed.sum,sm__sass_thread_inst_executed_op_ffma_pred_on.sum,gpu__time_duration.sum \
    --csv --page raw /tmp/port_11 $args > "$out/ncu_$name.csv" 2> "$out/ncu_$name.err"
  echo "ncu $name: exit $? ($(wc -c < "$out/ncu_$name.csv") bytes)"
done
