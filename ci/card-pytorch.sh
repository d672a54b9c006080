#!/usr/bin/env bash
# Regenerates the PyTorch adapter's determinism card (reports/cards/pytorch.md
# and .html) from engines/pytorch.json: each axis the profile's `card` lists,
# varied alone from its baseline t1, on synthetic:tiny (BF16 weights) and
# synthetic:tiny-f32 and the dense shared files the adapter loads, F32 and
# BF16. Needs python3-torch and python3-numpy (ci/install-deps.sh) and a
# built tree (the adapter exports checkpoints with build/bin/samebits-engine).
# Usage: ci/card-pytorch.sh [BUILD_DIR] (default: build).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
shared=../shared/checkpoints
checkpoints=(synthetic:tiny synthetic:tiny-f32)
for file in tiny_dense_llama_f32.gguf tiny_dense_llama_bf16.gguf tiny_dense_qwen2_f32.gguf \
  small_dense_qwen3_f32.gguf; do
  [[ -f $shared/$file ]] && checkpoints+=("gguf:$shared/$file")
done
mkdir -p reports/cards
status=0
"$build/bin/samebits" card --engine pytorch --checkpoint "${checkpoints[@]}" --scenario classic \
  --report-md reports/cards/pytorch.md --report-html reports/cards/pytorch.html \
  > /dev/null || status=$?
# 0: as expected (every difference the card found is declared KNOWN).
echo "ci/card-pytorch.sh: exit $status; wrote reports/cards/pytorch.md and .html" >&2
exit "$status"
