#!/usr/bin/env bash
# Lint: clang-format over every C++ file of the tree (no file may need
# reformatting), then clang-tidy (.clang-tidy's checks, warnings as errors)
# over the C++ sources changed since BASE, so a change is held to the
# checks without asking older code to be rewritten first.
#
#   ci/lint.sh [BASE]     BASE: a revision (default: the merge base with main,
#                         else HEAD~1)
#   SAMEBITS_BUILD_DIR    where compile_commands.json is (default: build;
#                         configured here when missing)
#   CLANG_FORMAT, CLANG_TIDY   the tools (default: clang-format, clang-tidy)
set -euo pipefail
cd "$(dirname "$0")/.."
clang_format=${CLANG_FORMAT:-clang-format}
clang_tidy=${CLANG_TIDY:-clang-tidy}
build=${SAMEBITS_BUILD_DIR:-build}
base=${1:-$(git merge-base HEAD main 2>/dev/null || git rev-parse HEAD~1)}

echo "== clang-format ($("$clang_format" --version | head -1))"
# Tracked files and new ones not yet added (but not ignored ones, such as
# build trees), so a file is held to the format before its first commit.
git ls-files -z --cached --others --exclude-standard '*.cc' '*.h' | xargs -0 "$clang_format" --dry-run -Werror
echo "   clean"

# Sources (not headers: those are checked through the sources that include
# them, .clang-tidy's HeaderFilterRegex) added or changed since BASE that
# the build compiles.
mapfile -t changed < <(git diff --name-only --diff-filter=d "$base" -- '*.cc'
                        git ls-files --others --exclude-standard '*.cc')
if ((${#changed[@]} == 0)); then
  echo "== clang-tidy: no C++ source changed since $base"
  exit 0
fi
if [[ ! -f $build/compile_commands.json ]]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
  # The generated build-info header must exist for the engine's sources.
  cmake --build "$build" --target samebits_build_info >/dev/null
fi
files=()
for f in "${changed[@]}"; do
  grep -q "\"file\": \"$PWD/$f\"" "$build/compile_commands.json" && files+=("$f")
done
echo "== clang-tidy over ${#files[@]} source(s) changed since $(git rev-parse --short "$base")"
status=0
for f in "${files[@]}"; do
  if ! "$clang_tidy" -p "$build" --quiet --warnings-as-errors='*' "$f" 2>/dev/null; then
    echo "   $f: clang-tidy found problems (above)"
    status=1
  fi
done
exit $status
