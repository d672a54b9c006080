#!/usr/bin/env bash
# Regenerates the PyTorch adapter's determinism card (reports/cards/pytorch.md
# and .html) from engines/pytorch.json: each axis the profile's `card` lists,
# varied alone from its baseline t1, on synthetic:tiny (BF16 weights) and
# synthetic:tiny-f32 and the dense shared files the adapter loads, F32 and
# BF16, each also measured against samebits' reference pass. Needs
# python3-torch and python3-numpy (ci/install-deps.sh) and a built tree (the
# adapter exports checkpoints with build/bin/samebits-engine).
#
#   ci/card-pytorch.sh [BUILD_DIR] [--short] [--out PREFIX]
#
# Writes PREFIX.md and PREFIX.html (default reports/cards/pytorch).
# --short: one shared file only (the F32 llama), for CI (.ci/run); its
# default PREFIX is BUILD_DIR/reports/pytorch-short, outside the tree.
# Exit 0: every difference found is declared KNOWN; 1: something else.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=ci/card-args.sh
source ci/card-args.sh
read_card_args "$@"
if ((short)); then
  checkpoints=()
  files=(tiny_dense_llama_f32.gguf)
  out=${out:-$build/reports/pytorch-short}
else
  checkpoints=(synthetic:tiny synthetic:tiny-f32)
  files=(tiny_dense_llama_f32.gguf tiny_dense_llama_bf16.gguf tiny_dense_qwen2_f32.gguf
    small_dense_qwen3_f32.gguf)
  out=${out:-reports/cards/pytorch}
fi
add_shared_checkpoints "${files[@]}"
mkdir -p "$(dirname "$out")"
status=0
"$build/bin/samebits" card --engine pytorch --checkpoint "${checkpoints[@]}" --scenario classic \
  --report-md "$out.md" --report-html "$out.html" > /dev/null || status=$?
# 0: as expected (every difference the card found is declared KNOWN).
echo "ci/card-pytorch.sh: exit $status; wrote $out.md and .html" >&2
exit "$status"
