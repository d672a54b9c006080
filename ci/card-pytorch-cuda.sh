#!/usr/bin/env bash
# Makes the PyTorch adapter's GPU determinism card (reports/cards/
# pytorch-cuda.md and .html) from engines/pytorch.json, on a machine with a
# CUDA GPU and a CUDA build of torch: the baseline is t1-cuda (one CUDA
# device, F32, eager attention, deterministic algorithms off, TF32 off), and
# each row varies one axis from it: the CPU (device cpu), BF16 and F16,
# token-by-token feeding, 3 batch companions, deterministic algorithms on,
# TF32 on, each SDPA backend, and 8 repeats of the same cell in one process
# (distinct outputs of 8). Every table also measures t1-cuda against
# samebits' reference pass. Needs a built tree (samebits, samebits-engine,
# which exports the checkpoints for the adapter) and the shared checkpoints.
#
#   ci/card-pytorch-cuda.sh [BUILD_DIR] [--short] [--out PREFIX]
#
# Writes PREFIX.md and PREFIX.html (default reports/cards/pytorch-cuda).
# --short: synthetic:tiny-f32 only. On a machine without a GPU every CUDA
# row, the baseline's too, is UNSUPPORTED with the adapter's reason.
# Exit 0: every difference found is declared KNOWN; 1: something else (a
# difference not declared, repeats that disagree, a child that broke).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=ci/card-args.sh
source ci/card-args.sh
read_card_args "$@"
checkpoints=(synthetic:tiny-f32)
if ((short)); then
  files=()
  out=${out:-$build/reports/pytorch-cuda-short}
else
  # Dense F32 llama, a Mixtral-style MoE (its experts are summed with
  # index_add_, which CUDA runs with atomics unless deterministic algorithms
  # are on), and the larger dense Qwen3.
  files=(tiny_dense_llama_f32.gguf tiny_moe_mixtral_f32.gguf small_dense_qwen3_f32.gguf)
  out=${out:-reports/cards/pytorch-cuda}
fi
add_shared_checkpoints "${files[@]}"
mkdir -p "$(dirname "$out")"
status=0
"$build/bin/samebits" card --engine pytorch --baseline t1-cuda --checkpoint "${checkpoints[@]}" \
  --scenario classic --report-md "$out.md" --report-html "$out.html" > /dev/null || status=$?
echo "$0: exit $status; wrote $out.md and .html" >&2
exit "$status"
