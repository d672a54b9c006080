#!/usr/bin/env bash
# Regenerates llama.cpp's determinism card (reports/cards/llama.cpp.md and
# .html) from engines/llama.cpp.json: each axis the profile's `card` lists,
# varied alone from its baseline t1, on the shared files of every weight
# type llama.cpp and samebits both load (F32, F16, BF16, Q8_0, Q4_0, Q4_K,
# Q6_K), each also measured against samebits' reference pass; then the same
# on the exports of synthetic:bench in those types (llama.cpp-bench.md), and
# flash attention's thread dependence on a long K/V cache
# (llama.cpp-flash-threads.md, llama.cpp-long-kv-threads.md). Builds the
# adapter first (adapters/llama.cpp/build.sh: cached, seconds when warm)
# and needs a built tree (samebits, samebits-engine).
#
#   ci/card-llamacpp.sh [BUILD_DIR] [--short] [--out PREFIX]
#
# Writes PREFIX.md and PREFIX.html (default reports/cards/llama.cpp).
# --short: two shared files only (F32 and Q4_K_M), for CI (ci/llamacpp.sh);
# its default PREFIX is BUILD_DIR/reports/llama.cpp-short, outside the tree.
# Exit 0: every difference found is declared KNOWN; 1: something else.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=ci/card-args.sh
source ci/card-args.sh
read_card_args "$@"
shared=../shared/checkpoints
if ((short)); then
  files=(tiny_dense_llama_f32.gguf small_dense_qwen3_q4_k_m.gguf)
  out=${out:-$build/reports/llama.cpp-short}
else
  files=(tiny_dense_llama_f32.gguf tiny_dense_qwen2_f32.gguf small_dense_qwen3_f32.gguf
    tiny_moe_mixtral_f32.gguf stories260K.gguf llama-2-tiny-random.gguf
    tiny_dense_llama_bf16.gguf tiny_dense_qwen2_bf16.gguf
    small_dense_qwen3_q8_0.gguf small_dense_qwen3_q4_0.gguf small_dense_qwen3_q4_k_m.gguf
    small_dense_qwen3_q6_k.gguf)
  out=${out:-reports/cards/llama.cpp}
fi
checkpoints=()
add_shared_checkpoints "${files[@]}"
adapters/llama.cpp/build.sh >/dev/null
mkdir -p "$(dirname "$out")"
status=0
"$build/bin/samebits" card --engine llama.cpp --checkpoint "${checkpoints[@]}" --scenario classic \
  --report-md "$out.md" --report-html "$out.html" > /dev/null || status=$?
# 0: as expected (every difference the card found is declared KNOWN).
echo "ci/card-llamacpp.sh: exit $status; wrote $out.md and .html" >&2
if ((!short)); then
  # The exports of synthetic:bench (a qwen3moe of 8 layers and 8 experts,
  # vocabulary 32000) in every type both engines load: written once by
  # samebits-engine export into the adapter's cache (1.2 GB for F32).
  bench_out=$(dirname "$out")/llama.cpp-bench
  bench_status=0
  "$build/bin/samebits" card --engine llama.cpp --checkpoint synthetic:bench-{f32,f16,bf16,q8_0,q4_0,q4_k,q6_k} \
    --scenario classic --timeout 900 --report-md "$bench_out.md" --report-html "$bench_out.html" \
    > /dev/null || bench_status=$?
  echo "ci/card-llamacpp.sh: exit $bench_status; wrote $bench_out.md and .html" >&2
  ((status)) || status=$bench_status
  # Flash attention's thread dependence on a long K/V cache: the card of
  # adapters/llama.cpp/flash-threads.json (baseline t1-fa_on, threads
  # varied alone) on the qwen3 files, whose context holds long-kv's 504
  # positions. No conformance here (the classic card measures it).
  long=()
  for file in small_dense_qwen3_f32.gguf small_dense_qwen3_q8_0.gguf small_dense_qwen3_q4_0.gguf \
    small_dense_qwen3_q4_k_m.gguf small_dense_qwen3_q6_k.gguf; do
    long+=("gguf:$shared/$file")
  done
  # long-kv-threads.json is the control: the same with flash attention off.
  for variant in flash-threads long-kv-threads; do
    variant_out=$(dirname "$out")/llama.cpp-$variant
    variant_status=0
    "$build/bin/samebits" card --engine-profile "adapters/llama.cpp/$variant.json" \
      --checkpoint "${long[@]}" --scenario adapters/llama.cpp/scenarios/long-kv.json \
      --no-reference --report-md "$variant_out.md" --report-html "$variant_out.html" \
      > /dev/null || variant_status=$?
    echo "ci/card-llamacpp.sh: exit $variant_status; wrote $variant_out.md and .html" >&2
    ((status)) || status=$variant_status
  done
fi
exit "$status"
