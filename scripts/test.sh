#!/usr/bin/env bash
# The whole test suite: unit (GoogleTest), lit/FileCheck and end-to-end
# (pytest) tests, all under ctest. Installs and builds what it needs first.
#
#   ./scripts/test.sh            everything (what CI runs)
#   ./scripts/test.sh --quick    the edit-test tier: unit, lit and one
#                                end-to-end test per feature at -O0 and -O3
# Other arguments go to ctest (-R e2e, -L fuzz, --output-on-failure ...).
set -euo pipefail
tier=(-LE quick)
if [ "${1:-}" = "--quick" ]; then
  tier=(-LE slow)
  shift
fi
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
ctest --test-dir "$BUILD" --output-on-failure -j "$(nproc)" "${tier[@]}" "$@"
