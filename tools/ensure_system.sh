#!/bin/sh
# Makes sure the system packages a task needs are present. Installs them with apt-get when
# running as root; otherwise stops at once and prints the exact line to run. Never skips silently.
#   tools/ensure_system.sh test   # Vulkan software driver, Jupyter's nbformat, nbconvert and the
#                                 # classic notebook server, Chromium, fonts, OpenBLAS
# Jupyter runs on Debian's /usr/bin/python3 (not a pyenv or venv python), where apt installs it.
#   tools/ensure_system.sh bench  # a Vulkan loader (the GPU driver is the machine's own)
set -eu
mode=${1:-test}
missing=""
need() { # need PACKAGE TEST-COMMAND...
  pkg=$1; shift
  if ! "$@" >/dev/null 2>&1; then missing="$missing $pkg"; fi
}
has_file() { for f in "$@"; do [ -e "$f" ] && return 0; done; return 1; }

need libvulkan1 sh -c 'ldconfig -p | grep -q libvulkan.so.1'
if [ "$mode" = test ]; then
  need mesa-vulkan-drivers has_file /usr/share/vulkan/icd.d/lvp_icd.x86_64.json /usr/share/vulkan/icd.d/lvp_icd.aarch64.json /usr/share/vulkan/icd.d/lvp_icd.json
  # tests/notebook_store_test.ts compares the stored form with what nbformat writes.
  need python3-nbformat /usr/bin/python3 -c 'import nbformat'
  # tools/render_notebooks.ts renders the site's notebook pages with it.
  need jupyter-nbconvert sh -c 'command -v jupyter-nbconvert'
  # The server the README opens notebooks with; tests/jupyter_server_test.ts runs one through it.
  need jupyter-notebook sh -c 'command -v jupyter-notebook'
  need chromium sh -c 'command -v chromium'
  need fonts-dejavu-core has_file /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf
  need libopenblas0-pthread sh -c 'ldconfig -p | grep -q libopenblas.so.0'
  # tests/bench_test.ts builds host stand-ins for libcudart/libcublas to test the cuBLAS FFI.
  need gcc sh -c 'command -v cc'
fi
[ -z "$missing" ] && exit 0

line="apt-get install -y --no-install-recommends$missing"
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "ensure_system: installing$missing" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >&2 && apt-get install -y -q --no-install-recommends $missing >&2 && exit 0
  echo "ensure_system: apt-get failed; run: sudo $line" >&2
  exit 1
fi
echo "ensure_system: missing system packages:$missing" >&2
echo "Run: sudo $line" >&2
exit 1
