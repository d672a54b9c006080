#!/usr/bin/env bash
# Configures and builds samebits into build/ (Release), installing the
# Debian packages it needs first.
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/install-deps.sh
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$jobs"
