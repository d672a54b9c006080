#!/usr/bin/env bash
# Configures and builds samebits into build/ (Release), installing the
# Debian packages it needs first.
#
#   ci/build.sh [TARGET...]   builds only these targets (and what they need);
#                             default: all of them, the tests included
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/install-deps.sh
jobs=$(nproc 2>/dev/null || echo 2)
# ccache (installed by ci/install-deps.sh) keeps compiled objects under
# ~/.cache/ccache; with the base folder set to this checkout, a fresh clone
# elsewhere (CI's, a bisect worktree) hits the same entries.
launcher=()
if command -v ccache >/dev/null; then
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" >/dev/null
targets=()
(($# > 0)) && targets=(--target "$@")
cmake --build build -j "$jobs" "${targets[@]}"
