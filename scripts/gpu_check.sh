#!/usr/bin/env bash
# The GPU check of issue 46, for a machine with an NVIDIA GPU (sm_90) and the
# CUDA toolkit; at most a few minutes. NEVER RUN YET: no GPU machine has been
# available. Builds tests/cuda/portable_test.cu with nvcc, runs it on the
# device, then under compute-sanitizer memcheck and racecheck, then
# the generated kernels of tests/e2e/kernels/cuda_forms.pydd built by nvcc
# (--target=cuda) against the CPU build, when a pyddc is built in build/,
# then bench/gpu.py (a * x + y on 10^8 float64 against a copy kernel, a
# sum). The machine's Python is 3.12; only that step needs a built pyddc.
set -euo pipefail
cd "$(dirname "$0")/.."
NVCC=${PYDD_NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
SAN=$(dirname "$NVCC")/compute-sanitizer
OUT=${OUT:-$(mktemp -d)}
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv || true
"$NVCC" -arch=sm_90 --fmad=false -std=c++17 -O2 -Xcompiler -fopenmp -Werror all-warnings \
  -Iruntime/include -x cu tests/cuda/portable_test.cu -o "$OUT/portable_test"
"$NVCC" -arch=sm_90 --fmad=false -std=c++17 -Xptxas -v -c -Iruntime/include -x cu \
  tests/cuda/portable_test.cu -o "$OUT/portable_test.o" 2>&1 | tee "$OUT/ptxas.txt"
if grep -E "[1-9][0-9]* bytes spill" "$OUT/ptxas.txt"; then echo "FAIL: register spills"; exit 1; fi
timeout 120 "$OUT/portable_test"
if [ -x "$SAN" ]; then
  timeout 180 "$SAN" --tool memcheck --error-exitcode 1 "$OUT/portable_test"
  timeout 180 "$SAN" --tool racecheck --error-exitcode 1 "$OUT/portable_test"
fi
if [ -x build/bin/pyddc ]; then
  PYDD_CUDA_TARGET=cuda PYDDC="$PWD/build/bin/pyddc" PYTHONPATH="$PWD/python" PYDD_NVCC="$NVCC" \
    timeout 240 python3 -m pytest tests/e2e/test_cuda.py -q -k "sim_"
fi
timeout 240 python3 bench/gpu.py
echo "gpu_check: OK"
