#!/usr/bin/env bash
# Installs what pyddc needs on Debian 12 and builds it. Sourced by
# scripts/examples.sh and scripts/test.sh; quick when all is in place.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${PYDD_BUILD_DIR:-$ROOT/build}"

# Debian packages, each for what it is made for (see README.md).
PACKAGES=(
  cmake ninja-build g++ pkg-config
  libtree-sitter-dev            # the parser runtime
  llvm-14-dev llvm-14-tools     # LLVM Support; FileCheck and lit for tests
  libgtest-dev libbenchmark-dev
  pybind11-dev python3-dev      # the Python bridge (built once)
  python3-numpy python3-pytest python3-scipy
  python3-numba cython3 python3-matplotlib   # the benchmark suite's other versions
  python3-nbclient python3-ipykernel         # the %%pydd magic's notebook, run in a real kernel
  python3-dask python3-distributed           # kernels on a Dask cluster (examples/dask_scaleout.py)
  libomp-14-dev libopenblas-dev
  clang-14 libclang-rt-14-dev   # the libFuzzer target (tests/fuzz/libfuzzer)
  python3-torch                 # gradients checked against autograd (tests/e2e/test_grad.py, bench/grad.py)
)

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# npm fetches the tree-sitter-python grammar at configure time.
command -v npm >/dev/null 2>&1 || missing+=(npm)
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# Debian's interpreter, never whichever python3 is first on PATH.
if [ ! -f "$BUILD/build.ninja" ]; then
  cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPYDD_PYTHON=/usr/bin/python3 >/dev/null
fi
ninja -C "$BUILD" >/dev/null || ninja -C "$BUILD"

# pyddc, the runtime and the CMake package (find_package(pydd)) installed
# under $PYDD_PREFIX (/usr/local), and `import pydd` for Debian's Python,
# pointing into this checkout (like `pip install -e`).
PREFIX="${PYDD_PREFIX:-/usr/local}"
if [ -w "$PREFIX/bin" ] || [ "$(id -u)" = 0 ]; then
  # Earlier set-ups linked pyddc into the build tree: never install through that link.
  if [ -L "$PREFIX/bin/pyddc" ]; then rm -f "$PREFIX/bin/pyddc"; fi
  cmake --install "$BUILD" --prefix "$PREFIX" >/dev/null
  site="$(/usr/bin/python3 -c 'import site; print(site.getsitepackages()[0])')"
  mkdir -p "$site"
  echo "$ROOT/python" > "$site/pydd-dev.pth"
fi
export PATH="$BUILD/bin:$PATH"
export PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}"
