#!/usr/bin/env bash
# Regenerates samebits-engine's determinism card (reports/cards/samebits.md
# and .html) from engines/samebits.json: each axis the profile's `card`
# lists, varied alone from cpu-t1, and the prompt fed whole, as one extend
# and token by token (--feed), on synthetic checkpoints and real files from
# ../shared. Usage: ci/card.sh [BUILD_DIR] (default: build).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
shared=../shared/checkpoints
checkpoints=synthetic:tiny,synthetic:medium-q4_k
for file in stories260K.gguf tiny_moe_mixtral_f32.gguf; do
  [[ -f $shared/$file ]] && checkpoints+=",gguf:$shared/$file"
done
mkdir -p reports/cards
status=0
"$build/bin/samebits" card --engine samebits --program "$build/bin/samebits-engine" \
  --checkpoint "$checkpoints" --scenario classic --feed \
  --report-md reports/cards/samebits.md --report-html reports/cards/samebits.html \
  > /dev/null || status=$?
# 0: as expected (libm differs, declared KNOWN); anything else is news.
echo "ci/card.sh: exit $status; wrote reports/cards/samebits.md and .html" >&2
exit "$status"
