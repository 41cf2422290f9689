#!/usr/bin/env bash
# Execute the notebooks on the GPU host (no package registry, no Jupyter there) with Deno's own
# kernel, stamped with the device and commit, for committing: tools/execute_notebook.ts --stamp.
# Here first:  sh tools/notebook_cache.sh      (writes dist/notebook-deno-dir: the npm code the
#                                               notebooks import; carry dist and .offline)
# There, from the project root:
#   source .offline/activate.sh && GEMM_COMMIT=<sha> bash tools/gpu_notebooks.sh [notebooks/NN.ipynb ...]
# With no arguments: every notebooks/*.ipynb. Each notebook runs in a fresh kernel; a failure is
# reported and the next notebook still runs. Notebooks not started before GEMM_NOTEBOOKS_TIMEOUT
# seconds (default 540, under the host's 10-minute limit) are skipped and named, so the rest can
# run in a second call.
#
# On a host with several GPUs (GEMM_GPUS, default: every GPU nvidia-smi lists) one worker per GPU
# takes notebooks from a shared queue in the order given, so name the longest first. Each worker
# runs as a one-GPU machine would: in its own mount namespace whose /dev holds its GPU's device node
# and not the others' (as a container's does), pinned to its share of the CPU cores, so a notebook's
# adapter, timings and CPU peers are those of one GPU with 1/N of the host. Before any notebook runs,
# each worker's view is checked (nvidia-smi inside it must list exactly one GPU, a different one per
# worker); if that fails, or without root, one worker runs everything with every GPU visible, unless
# GEMM_GPUS was given: then the call stops (exit 4) before any notebook runs.
#
# Files in $OUT (default /tmp/gemm-gpu-notebooks): notebooks/NN.ipynb (executed; copy to notebooks/
# and commit), notebooks.log, env.txt, gpu_use.log (each GPU's utilization every 15 s, the record
# that the workers ran apart), and all four in notebooks.tar.
# Exit status: 0 when every notebook ran cleanly, 1 otherwise, 3 when tools/gpu_preflight.ts found
# the adapter unable to allocate a large buffer, 4 when GEMM_GPUS workers could not each be shown one
# GPU (then no notebook ran).
set -uo pipefail
cd "$(dirname "$0")/.."

# Inside one worker's namespace: `--as-gpu NODE CMD...` runs CMD with /dev showing only NODE of
# the GPUs' device nodes (and no /dev/dri, whose render nodes also name GPUs), and the driver's
# /proc/driver/nvidia/gpus only that GPU's entry, as the NVIDIA container runtime does.
if [ "${1:-}" = "--as-gpu" ]; then
  node=$2
  shift 2
  mount --make-rprivate / || exit 4
  real=$(mktemp -d /tmp/gemm-dev.XXXXXX)
  mount --bind /dev "$real" && mount -t tmpfs -o mode=755 tmpfs /dev || exit 4
  for f in "$real"/* "$real"/.[!.]*; do
    [ -e "$f" ] || [ -L "$f" ] || continue
    name=${f##*/}
    case "$name" in
      nvidia[0-9]*) [ "$name" = "$node" ] || continue ;;
      dri) continue ;;
    esac
    if [ -L "$f" ]; then cp -P "$f" "/dev/$name"
    elif [ -d "$f" ]; then mkdir "/dev/$name" && mount --rbind "$f" "/dev/$name"
    else touch "/dev/$name" && mount --bind "$f" "/dev/$name"; fi
  done
  # Read-only, or the driver, run as root, creates the missing nodes again (it mknods any GPU's
  # node it cannot find); the bound nodes and /dev/shm stay writable.
  mount -o remount,ro /dev || exit 4
  gpus=/proc/driver/nvidia/gpus
  if [ -d "$gpus" ]; then
    realgpus=$(mktemp -d /tmp/gemm-gpus.XXXXXX)
    mount --bind "$gpus" "$realgpus" && mount -t tmpfs tmpfs "$gpus" || exit 4
    for g in "$realgpus"/*; do
      if grep -qx "Device Minor:[[:space:]]*${node#nvidia}" "$g/information" 2>/dev/null; then
        mkdir "$gpus/${g##*/}" && mount --bind "$g" "$gpus/${g##*/}"
      fi
    done
  fi
  exec "$@"
fi

# One worker: pop notebooks from the queue until it is empty or the deadline has passed.
if [ "${1:-}" = "--worker" ]; then
  name=$2 queue=$3 deadline=$4
  log=$out_dir/worker-$name.log
  while :; do
    nb=$(flock "$queue.lock" sh -c 'head -n 1 "$1" && sed -i 1d "$1"' _ "$queue")
    [ -n "$nb" ] || break
    left=$((deadline - $(date +%s)))
    if [ "$left" -le 10 ]; then
      echo "gpu_notebooks: $(basename "$nb") not started (time)" | tee -a "$log"
      continue
    fi
    t0=$(date +%s)
    timeout "$left" deno run -A tools/execute_notebook.ts --stamp --out "$out_dir/notebooks" "$nb" 2>&1 |
      grep -v '^{"runs"' | tee -a "$log"
    rc=${PIPESTATUS[0]}
    echo "gpu_notebooks: $(basename "$nb") exit $rc in $(($(date +%s) - t0)) s on $name" | tee -a "$log"
  done
  exit 0
fi

out=${OUT:-/tmp/gemm-gpu-notebooks}
# A second call on a host still warm from the first must not count or pack the first's results.
rm -rf "$out/notebooks" "$out"/worker-*.log
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
  nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version --format=csv,noheader 2>&1
  echo "VK_DRIVER_FILES=${VK_DRIVER_FILES:-unset} GEMM_COMMIT=${GEMM_COMMIT:-unset}"
} >"$out/env.txt" 2>&1
cat "$out/env.txt"

# A machine whose driver refuses large buffers fails every notebook at its first cell: stop now.
deno run --no-config --no-remote --no-npm --allow-env tools/gpu_preflight.ts 2>&1 | tee -a "$out/env.txt"
[ "${PIPESTATUS[0]}" = 0 ] || exit 3

# The workers: one per GPU where each can be shown exactly its own, else one with every GPU.
nodes=()
for f in /dev/nvidia[0-9]*; do [ -c "$f" ] && nodes+=("${f##*/}"); done
want=${GEMM_GPUS:-${#nodes[@]}}
[ "$want" -le "${#nodes[@]}" ] || want=${#nodes[@]}
workers=()
if [ "$want" -gt 1 ] && [ "$(id -u)" = 0 ] && command -v unshare >/dev/null; then
  seen=""
  for node in "${nodes[@]:0:$want}"; do
    view=$(unshare -m bash "$0" --as-gpu "$node" nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader 2>&1 |
      grep -E '^[0-9A-Fa-f]+:[0-9A-Fa-f]+:[0-9A-Fa-f]+\.[0-9]')
    if [ "$(printf '%s\n' "$view" | grep -c .)" != 1 ] || printf '%s' "$seen" | grep -qF "$view"; then
      echo "gpu_notebooks: $node's namespace shows [$view]: not one GPU of its own" | tee -a "$out/env.txt"
      # Asked for by number: stop rather than run N times longer on one GPU.
      [ -z "${GEMM_GPUS:-}" ] || exit 4
      echo "gpu_notebooks: one worker instead" | tee -a "$out/env.txt"
      workers=()
      break
    fi
    seen="$seen $view"
    workers+=("$node")
    echo "gpu_notebooks: worker on $node sees $view" | tee -a "$out/env.txt"
  done
fi

if [ $# -gt 0 ]; then notebooks=("$@"); else notebooks=(notebooks/*.ipynb); fi
queue=$out/queue
printf '%s\n' "${notebooks[@]}" >"$queue"
budget=${GEMM_NOTEBOOKS_TIMEOUT:-540}
deadline=$(($(date +%s) + budget))
export out_dir=$out
nvidia-smi --query-gpu=timestamp,index,utilization.gpu,memory.used --format=csv,noheader -l 15 \
  >"$out/gpu_use.log" 2>&1 &
monitor=$!
if [ ${#workers[@]} -gt 1 ]; then
  cores=$(nproc)
  share=$((cores / ${#workers[@]}))
  echo "gpu_notebooks: ${#workers[@]} workers, $share CPU cores each" | tee -a "$out/env.txt"
  i=0
  for node in "${workers[@]}"; do
    first=$((i * share))
    pin=(taskset -c "$first-$((first + share - 1))")
    [ "$share" -ge 1 ] || pin=()
    unshare -m bash "$0" --as-gpu "$node" "${pin[@]}" bash "$0" --worker "$node" "$queue" "$deadline" &
    i=$((i + 1))
  done
  wait $(jobs -p | grep -vx "$monitor")
else
  bash "$0" --worker all "$queue" "$deadline"
fi
kill "$monitor" 2>/dev/null
cat "$out"/worker-*.log >"$out/notebooks.log"
ran=$(grep -c ' exit 0 in ' "$out/notebooks.log")
skipped=$(grep -c 'not started (time)' "$out/notebooks.log")
# A worker that died takes its notebook's line with it: count those as failed too.
failed=$((${#notebooks[@]} - ran - skipped))
echo "gpu_notebooks: ${#notebooks[@]} notebooks, $failed failed, $skipped not started; in $out/notebooks" |
  tee -a "$out/notebooks.log"
# One file to bring back: a reply can leave some of many files behind.
tar -C "$out" -cf "$out/notebooks.tar" notebooks notebooks.log env.txt gpu_use.log
[ "$failed" = 0 ] && [ "$skipped" = 0 ]
