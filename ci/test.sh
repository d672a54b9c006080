#!/usr/bin/env bash
# The whole test suite: set-up, build, then every test through ctest; then,
# where the data folder ../shared/checkpoints exists, a check that no test
# skipped for a missing file of it (ci/check-data-skips.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/build.sh
jobs=$(nproc 2>/dev/null || echo 2)
status=0
ctest --test-dir build --output-on-failure -j "$jobs" "$@" || status=$?
bash ci/check-data-skips.sh build || status=1
exit "$status"
