#!/usr/bin/env bash
# The whole test suite: unit (GoogleTest), lit/FileCheck and end-to-end
# (pytest) tests, all under ctest. Installs and builds what it needs first.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
ctest --test-dir "$BUILD" --output-on-failure -j "$(nproc)" "$@"
