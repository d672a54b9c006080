#!/usr/bin/env bash
# Regenerates llama-server's determinism card (reports/cards/llama-server.md
# and .html) from engines/llama-server.json: llama.cpp's own server, built
# from the same source as the llama.cpp adapter (adapters/llama.cpp/build.sh
# --llama-server: cached, seconds when warm) and started by the openai-http
# bridge for each cell on a Unix socket, on the shared files of every weight
# type, with adapters/openai-http/tokens.json. Each row varies one axis of
# the baseline t1 (threads 2, the prompt cache off, 8 repeats, 4 filler
# requests in flight, and the logit-bias control). Then the same weights
# through other front doors (PREFIX-front-doors.md, by
# adapters/openai-http/front_doors.py): on each file, the server's baseline
# read-back against samebits-engine's reference pass and the llama.cpp
# adapter, at its card's baseline (K/V F32, no flash attention) and with the
# server's defaults (K/V F16, flash attention on). Builds samebits first
# when BUILD_DIR is build/ and holds none (ci/build.sh samebits: from a
# fresh clone, this one command does everything).
#
#   ci/card-llama-server.sh [BUILD_DIR] [--short] [--out PREFIX]
#
# Writes PREFIX.md, PREFIX.html and PREFIX-front-doors.md (default PREFIX
# reports/cards/llama-server).
# --short: two shared files only (F32 llama and Q4_K_M qwen3), for CI
# (ci/llamacpp.sh); its default PREFIX is BUILD_DIR/reports/llama-server-short.
# Exit 0: every difference found is declared KNOWN; 1: something else.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=ci/card-args.sh
source ci/card-args.sh
read_card_args "$@"
if ((short)); then
  files=(tiny_dense_llama_f32.gguf small_dense_qwen3_q4_k_m.gguf)
  out=${out:-$build/reports/llama-server-short}
else
  files=(tiny_dense_llama_f32.gguf tiny_dense_qwen2_f32.gguf small_dense_qwen3_f32.gguf
    tiny_moe_mixtral_f32.gguf stories260K.gguf llama-2-tiny-random.gguf
    tiny_dense_llama_bf16.gguf tiny_dense_qwen2_bf16.gguf
    small_dense_qwen3_q8_0.gguf small_dense_qwen3_q4_0.gguf small_dense_qwen3_q4_k_m.gguf
    small_dense_qwen3_q6_k.gguf)
  out=${out:-reports/cards/llama-server}
fi
checkpoints=()
add_shared_checkpoints "${files[@]}"
if [[ ! -x $build/bin/samebits ]]; then
  [[ $build == build ]] || { echo "$0: no $build/bin/samebits: build it first" >&2; exit 2; }
  bash ci/build.sh samebits samebits-engine
fi
adapters/llama.cpp/build.sh --llama-server >/dev/null
mkdir -p "$(dirname "$out")"
status=0
# No conformance row: a served engine returns its top 20 log-probabilities,
# not a logit dump (adapters/openai-http/README.md).
"$build/bin/samebits" card --engine llama-server --checkpoint "${checkpoints[@]}" \
  --scenario adapters/openai-http/tokens.json --no-reference \
  --report-md "$out.md" --report-html "$out.html" > /dev/null || status=$?
echo "ci/card-llama-server.sh: exit $status; wrote $out.md and .html" >&2

# The same weights through other front doors: one run each of the scenario,
# the server's (as the card's baseline t1 runs it), samebits-engine's
# reference pass and the adapter's, compared by front_doors.py.
adapters/llama.cpp/build.sh >/dev/null
scenario=adapters/openai-http/tokens.json
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
doors=$out-front-doors.md
cat >"$doors" <<'HEADER'
## llama-server through other front doors

The card's baseline t1 (llama-server on one thread, its defaults otherwise:
the prompt cache on, K/V cache F16, flash attention on) on
adapters/openai-http/tokens.json, held against engines that dump whole
logit rows for the same scenario: samebits-engine's reference pass, and
llama.cpp's library through the adapter at its card's baseline t1 (K/V F32,
no flash attention) and with the server's defaults (t1-kvf16-fa_on). Per
step, while both fed the same context: the same chosen token; the server's
top 20 the engine's top 20 (as a set, and in order); the absolute
difference of each of the server's log-probabilities from the log of the
softmax of the engine's float32 row (computed in float64). Steps whose
probabilities the server withheld (a byte token, adapters/openai-http/README.md)
compare the chosen token alone. A measurement, not a verdict. Made by
ci/card-llama-server.sh.

HEADER
for checkpoint in "${checkpoints[@]}"; do
  name=$(basename "${checkpoint#gguf:}" .gguf)
  adapters/openai-http/openai_http_bridge.py run --api llama --launch ../llama.cpp/llama-server \
    --launch-arg=--model --launch-arg=%model% --launch-arg=--host --launch-arg=%socket% \
    --launch-arg=--threads --launch-arg=1 --checkpoint "$checkpoint" --scenario "$scenario" \
    --dump-topk "$work/served.jsonl" >/dev/null 2>"$work/served.err" ||
    { cat "$work/served.err" >&2; status=1; continue; }
  "$build/bin/samebits-engine" run --kernels reference --checkpoint "$checkpoint" \
    --scenario "$scenario" --dump-logits "$work/reference.f32" >"$work/reference.jsonl"
  adapters/llama.cpp/samebits-llamacpp run --threads 1 --checkpoint "$checkpoint" \
    --scenario "$scenario" --dump-logits "$work/llamacpp.f32" >"$work/llamacpp.jsonl"
  adapters/llama.cpp/samebits-llamacpp run --threads 1 --kv f16 --flash-attn on \
    --checkpoint "$checkpoint" --scenario "$scenario" --dump-logits "$work/defaults.f32" \
    >"$work/defaults.jsonl"
  adapters/openai-http/front_doors.py --title "$name" --served "llama-server=$work/served.jsonl" \
    --engine "samebits reference=$work/reference.jsonl,$work/reference.f32" \
    --engine "llama.cpp t1=$work/llamacpp.jsonl,$work/llamacpp.f32" \
    --engine "llama.cpp t1-kvf16-fa_on=$work/defaults.jsonl,$work/defaults.f32" \
    --markdown "$doors" >/dev/null || status=1
done
echo "ci/card-llama-server.sh: wrote $doors" >&2
exit "$status"
