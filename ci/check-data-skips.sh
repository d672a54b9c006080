#!/usr/bin/env bash
# Fails when a test skipped for a missing file of the data folder (../shared,
# beside the clone) although ../shared/checkpoints exists. A clone without
# the folder skips those tests (tests/support/data_folder.h; every such skip
# says "data folder absent: PATH ..."); CI has the folder, and a test that
# skips there (a file renamed, a path mistyped) would pass without having
# run. Reads the log of the last ctest run in BUILD_DIR.
#
#   ci/check-data-skips.sh [BUILD_DIR]     (default: build)
#
# Exit 0: the folder is absent, or no test skipped for it; 1: some did (each
# is named with its message); 2: there is no ctest log to read.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
marker='data folder absent:'  # data_folder::kAbsentMarker
if [[ ! -d ../shared/checkpoints ]]; then
  echo "== data folder: ../shared/checkpoints is absent; the tests that need it skipped"
  exit 0
fi
log=$build/Testing/Temporary/LastTest.log
if [[ ! -f $log ]]; then
  echo "ci/check-data-skips.sh: no ctest log at $log (run ctest in $build first)" >&2
  exit 2
fi
# The log holds each test's output after a line "N/M Test: NAME".
skipped=$(awk -v marker="$marker" '
  /^[0-9]+\/[0-9]+ Test: / { sub(/^[0-9]+\/[0-9]+ Test: /, ""); test = $0; next }
  index($0, marker) > 0 { print "  " test ": " $0 }' "$log")
if [[ -n $skipped ]]; then
  echo "ci/check-data-skips.sh: ../shared/checkpoints exists, yet these tests skipped for a" >&2
  echo "missing data-folder file (expected every file they need to be there; $log):" >&2
  echo "$skipped" >&2
  exit 1
fi
echo "== data folder: present, and no test skipped for a missing file of it"
