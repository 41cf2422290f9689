#!/usr/bin/env bash
# On the GPU host: build lab/cuda/port_11.cu, run it (validated, then timed, beside cuBLAS),
# and keep the SASS of the kernels that compute C. Results go to $1 (default ./port_out).
set -euo pipefail
out=${1:-port_out}
mkdir -p "$out"
bin=$(dirname "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")
lib=/usr/local/cuda-13.0/targets/x86_64-linux/lib
"$bin/nvcc" -O3 -arch=sm_90 -Xptxas -v -o /tmp/port_11 "$(dirname "$0")/port_11.cu" \
  -L"$lib" -l:libcublas.so.13 2>&1 | grep -E "Compiling entry|registers" | tee "$out/ptxas.txt"
LD_LIBRARY_PATH=$lib:${LD_LIBRARY_PATH:-} /tmp/port_11 "${2:-4096}" | tee "$out/port.txt"
"$bin/cuobjdump" -sass /tmp/port_11 > "$out/port_11.sass"
