#!/usr/bin/env bash
# The main job: compiles the programs in examples/ and runs them from Python
# and from a C++ host, printing their results next to NumPy's.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
echo "== Python host =="
/usr/bin/python3 "$ROOT/examples/run_python.py"
echo
echo "== C++ host =="
"$BUILD/examples/cpp_host"
echo
echo "== Dask: kernels in worker processes =="
/usr/bin/python3 "$ROOT/examples/dask_scaleout.py"
