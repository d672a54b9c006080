#!/usr/bin/env bash
# The whole test suite: set-up, build, then every test through ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/build.sh
jobs=$(nproc 2>/dev/null || echo 2)
ctest --test-dir build --output-on-failure -j "$jobs" "$@"
