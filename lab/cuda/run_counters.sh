#!/usr/bin/env bash
# On the GPU host: build lab/cuda/memory_counters.cu, time every configuration (validated first),
# then read each one's counters with Nsight Compute (the launch after the validated one; clocks
# left alone, as the device README asks). Results go to $1 (default ./counters_out):
# times.jsonl, ncu_<config>.csv (the sections' metrics, raw page), ptxas.txt. $2, if given, is an
# extended regular expression: only the configurations it matches are timed and profiled.
# NCU_EXTRA_METRICS, if set, is a comma-separated list of metrics read beside the usual ones.
set -uo pipefail
out=${1:-counters_out}
mkdir -p "$out"
here=$(dirname "$0")
bin=$(dirname "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")
"$bin/nvcc" -O3 -arch=sm_90 -Xptxas -v -o /tmp/memory_counters "$here/memory_counters.cu" \
  -Xcompiler -fopenmp -lgomp 2>&1 | grep -E "Compiling entry|registers" | tee "$out/ptxas.txt"
/tmp/memory_counters only "${2:-.}" | tee "$out/times.jsonl"
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | tail -1)
for name in $(grep -o '"config":"[^"]*"' "$out/times.jsonl" | cut -d'"' -f4); do
  "$ncu" --clock-control none --launch-skip 1 --launch-count 1 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats \
    --section Occupancy \
    --metrics l1tex__t_sector_hit_rate.pct,lts__t_sector_hit_rate.pct,dram__bytes_read.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,lts__t_sectors_srcunit_tex_op_read.sum${NCU_EXTRA_METRICS:+,$NCU_EXTRA_METRICS} \
    --csv --page raw /tmp/memory_counters once "$name" > "$out/ncu_$name.csv" 2> "$out/ncu_$name.err"
  echo "ncu $name: exit $? ($(wc -c < "$out/ncu_$name.csv") bytes)"
done
