#!/usr/bin/env bash
# Times samebits-engine against llama.cpp on the same GGUF file, interleaved
# (samebits, llama.cpp, llama.cpp, samebits, ...), at each thread count:
# prefill of --prompt tokens from an empty context, and decode of
# --decode-steps tokens after a --context-token context. Prints a Markdown
# table of medians and ratios (and writes it to --out).
#
#   ci/compare-llamacpp.sh [--types bf16,q8_0,q4_k] [--threads 1,2]
#                          [--repeats 5] [--checkpoint synthetic:bench]
#                          [--batch-list 1,4,8] [--quant-dot exact|int8]
#                          [--wisdom FILE|none] [--out reports/llamacpp.md] [--force]
#
# --quant-dot picks samebits-engine's profile for quantized weights
# (engine/numerics/README.md, C12; default exact); llama.cpp always
# quantizes its activations, as the int8 profile does.
#
# --wisdom is handed to samebits-engine (`samebits-engine tune` writes one;
# default: what the engine reads by itself, $SAMEBITS_WISDOM or
# ~/.cache/samebits/wisdom.json when there); the report says which knobs
# each thread count ran with and where they came from.
#
# With --batch-list, it times batched decoding instead: samebits-engine
# `bench --batch-list` against llama.cpp's `llama-batched-bench` (-npl, one
# prompt per sequence), both decoding --decode-steps steps of every sequence
# after a --context-token context each, and prints aggregate decode tokens/s
# per batch size with each engine's gain over its own batch 1.
#
# llama.cpp comes from the npm package `node-llama-cpp`, whose `llama/`
# folder holds llama.cpp's source as a git bundle: ci/llamacpp-source.sh
# takes it from NODE_LLAMA_CPP_DIR, ./node_modules, or `npm pack` into the
# cache folder (SAMEBITS_CACHE, default ~/.cache/samebits), and the script
# builds `llama-bench` once with its options: -DGGML_NATIVE=OFF, AVX-512 on
# and the GGML_AMX_* options off (the native build's AMX path crashes on
# quantized files on some machines). On a CPU without AVX-512 it builds the
# AVX2 kind instead (AVX-512 off), in its own folder; the report names the
# kind. Nothing else is downloaded. Both programs run the same exported file.
#
# It refuses a busy machine (load average above 0.5 per core) unless
# --force: figures taken beside other work understate both engines.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
types=bf16 threads=1,2 repeats=5 checkpoint=synthetic:bench out='' force=0
prompt=128 context=128 decode_steps=16 batch_list= quant_dot=exact wisdom=
usage() { awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0" | sed 's/^# \{0,1\}//'; }
while (($#)); do
  case $1 in
    --types) types=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    --checkpoint) checkpoint=$2; shift 2 ;;
    --batch-list) batch_list=$2; shift 2 ;;
    --quant-dot) quant_dot=$2; shift 2 ;;
    --wisdom) wisdom=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --force) force=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "compare-llamacpp.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
script=compare-llamacpp.sh
# shellcheck source=ci/bench-common.sh
source "$root/ci/bench-common.sh"
require_positive --repeats "$repeats"
require_number_list --threads "$threads"
[[ -z $batch_list ]] || require_number_list --batch-list "$batch_list"
[[ $quant_dot == exact || $quant_dot == int8 ]] ||
  { echo "compare-llamacpp.sh: --quant-dot must be exact or int8, not '$quant_dot'" >&2; exit 2; }

engine=$root/build/bin/samebits-engine
[[ -x $engine ]] || { echo "compare-llamacpp.sh: build samebits first (ci/build.sh)" >&2; exit 2; }

# --- llama.cpp's source and build -------------------------------------------
# shellcheck source=ci/llamacpp-source.sh
source "$root/ci/llamacpp-source.sh"
llamacpp_source
llamacpp_timing_kind
src=$llama_src
bench=$src/$llama_kind_build/bin/llama-bench
batched_bench=$src/$llama_kind_build/bin/llama-batched-bench
if [[ ! -x $bench || ! -x $batched_bench ]]; then
  echo "== building llama-bench, $llama_kind kind (once; cached in $src/$llama_kind_build)" >&2
  cmake -S "$src" -B "$src/$llama_kind_build" "${llama_kind_options[@]}" >/dev/null
  cmake --build "$src/$llama_kind_build" -j "$(nproc)" --target llama-bench llama-batched-bench >/dev/null
fi

# --- preflight ----------------------------------------------------------------
refuse_busy_machine "$force"

# --- one measurement each -----------------------------------------------------
# Prints "PREFILL_TPS DECODE_TPS" for samebits-engine's cpu pass.
# Its `tuning, ...` line (the knobs and the wisdom they came from) goes to
# $tuning_log for the report.
samebits_once() {  # file threads
  "$engine" bench --checkpoint "gguf:$1" --quant-dot "$quant_dot" --no-reference --repeats 1 --threads-list "$2" \
    --context "$context" --prompt "$prompt" --decode-steps "$decode_steps" --bandwidth-mib 0 \
    ${wisdom:+--wisdom "$wisdom"} 2>/dev/null |
    awk -v tlog="$tuning_log" '/^tuning, / { print >> tlog }
         /^decode at context/ { s = "d"; next } /^prefill of/ { s = "p"; next } /^(ratios|identity)/ { s = "" }
         s != "" && /^  cpu [0-9]+ threads? +[0-9]/ { if (s == "d") d = $7; else p = $7 }
         END { print p, d }'
}
# Prints "PREFILL_TPS DECODE_TPS" for llama-bench (its default F16 KV cache:
# this build's llama-bench refuses -ctk f32; samebits keeps an F32 cache).
llama_once() {  # file threads
  local p d
  p=$("$bench" -m "$1" -t "$2" -p "$prompt" -n 0 -r 1 -o csv 2>/dev/null | tail -n1 | awk -F, '{ gsub(/"/, ""); print $(NF-1) }')
  d=$("$bench" -m "$1" -t "$2" -p 0 -n "$decode_steps" -d "$context" -r 1 -o csv 2>/dev/null | tail -n1 | awk -F, '{ gsub(/"/, ""); print $(NF-1) }')
  printf '%.1f %.1f\n' "$p" "$d"
}
# Prints "B TPS" per batch size of --batch-list: samebits-engine's batched
# decode, aggregate tokens/s.
samebits_batched_once() {  # file threads
  "$engine" bench --checkpoint "gguf:$1" --quant-dot "$quant_dot" --no-reference --repeats 1 --threads-list "$2" \
    --batch-list "$batch_list" --context "$context" --decode-steps "$decode_steps" \
    --bandwidth-mib 0 ${wisdom:+--wisdom "$wisdom"} 2>/dev/null |
    awk '/^batched decode/ { s = 1; next } s && /^ +[0-9]+ +[0-9.]+ +[0-9.]+ / { print $1, $3 }'
}
# The same for llama-batched-bench: pl sequences, each with its own prompt
# of --context tokens, then --decode-steps steps of all of them together.
llama_batched_once() {  # file threads
  local largest ctx
  largest=$(tr , '\n' <<<"$batch_list" | sort -n | tail -n1)
  ctx=$((largest * (context + decode_steps)))
  "$batched_bench" -m "$1" -t "$2" -tb "$2" -c "$ctx" -b "$ctx" -ub 512 -npp "$context" \
    -ntg "$decode_steps" -npl "$batch_list" --output-format jsonl 2>/dev/null |
    sed -n 's/.*"pl": \([0-9]*\),.*"speed_tg": \([0-9.]*\),.*/\1 \2/p' | awk '{ printf "%d %.1f\n", $1, $2 }'
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tuning_log=$work/tuning.txt
if [[ -n $batch_list ]]; then
  table="| type | threads | batch | samebits decode tok/s | vs its batch 1 | llama.cpp decode tok/s | vs its batch 1 | ratio |
|---|---|---|---|---|---|---|---|"
else
  table="| type | threads | samebits prefill tok/s | llama.cpp prefill tok/s | ratio | samebits decode tok/s | llama.cpp decode tok/s | ratio |
|---|---|---|---|---|---|---|---|"
fi
IFS=, read -ra type_list <<<"$types"
IFS=, read -ra thread_list <<<"$threads"
IFS=, read -ra batch_sizes <<<"$batch_list"
# Round 0 is a warm-up (page cache, CPU frequency) and is discarded; then
# A B, B A, A B, ... so that drift hits both sides alike.

# Batched decode at thread count $2 on file $1: appends "B TPS" lines to
# $work/s and $work/l and adds a table row per batch size.
compare_batched() {  # file threads type
  : >"$work/s"; : >"$work/l"
  local r s l b sm lm sb lb
  for ((r = 0; r <= repeats; r++)); do
    if ((r % 2)); then s=$(samebits_batched_once "$1" "$2"); l=$(llama_batched_once "$1" "$2")
    else l=$(llama_batched_once "$1" "$2"); s=$(samebits_batched_once "$1" "$2"); fi
    [[ -n $s && -n $l ]] || { echo "compare-llamacpp.sh: a batched run printed no figures ($3, $2 threads)" >&2; exit 1; }
    ((r == 0)) && continue
    echo "$s" >>"$work/s"; echo "$l" >>"$work/l"
    echo "  $3 t$2 round $r: samebits $(tr '\n' ' ' <<<"$s")| llama.cpp $(tr '\n' ' ' <<<"$l")(batch tok/s)" >&2
  done
  for b in "${batch_sizes[@]}"; do
    sm=$(awk -v b="$b" '$1 == b { print $2 }' "$work/s" | median)
    lm=$(awk -v b="$b" '$1 == b { print $2 }' "$work/l" | median)
    [[ $b == "${batch_sizes[0]}" ]] && { sb=$sm; lb=$lm; }
    table+=$'\n'"| $3 | $2 | $b | $sm | $(awk -v a="$sm" -v c="$sb" 'BEGIN { printf "%.2fx", a / c }') | $lm | $(awk -v a="$lm" -v c="$lb" 'BEGIN { printf "%.2fx", a / c }') | $(awk -v a="$sm" -v c="$lm" 'BEGIN { printf "%.2fx", a / c }') |"
  done
}

for type in "${type_list[@]}"; do
  file=$work/model-$type.gguf
  if [[ $type == bf16 ]]; then
    "$engine" export "$checkpoint" "$file" >/dev/null
  else
    "$engine" export --type "$type" "$checkpoint" "$file" >/dev/null ||
      { echo "compare-llamacpp.sh: samebits-engine export cannot write type '$type'" >&2; exit 2; }
  fi
  for t in "${thread_list[@]}"; do
    if [[ -n $batch_list ]]; then
      compare_batched "$file" "$t" "$type"
      continue
    fi
    : >"$work/s" ; : >"$work/l"
    for ((r = 0; r <= repeats; r++)); do
      if ((r % 2)); then s=$(samebits_once "$file" "$t"); l=$(llama_once "$file" "$t")
      else l=$(llama_once "$file" "$t"); s=$(samebits_once "$file" "$t"); fi
      ((r == 0)) && continue
      echo "$s" >>"$work/s"; echo "$l" >>"$work/l"
      echo "  $type t$t round $r: samebits $s, llama.cpp $l (prefill, decode tok/s)" >&2
    done
    sp=$(cut -d' ' -f1 "$work/s" | median); sd=$(cut -d' ' -f2 "$work/s" | median)
    lp=$(cut -d' ' -f1 "$work/l" | median); ld=$(cut -d' ' -f2 "$work/l" | median)
    rp=$(awk -v a="$sp" -v b="$lp" 'BEGIN { printf "%.2fx", a / b }')
    rd=$(awk -v a="$sd" -v b="$ld" 'BEGIN { printf "%.2fx", a / b }')
    table+=$'\n'"| $type | $t | $sp | $lp | $rp | $sd | $ld | $rd |"
  done
done
if [[ -n $batch_list ]]; then
  what="batched decode: every sequence after its own $context-token context, then $decode_steps steps of all of them together; aggregate tokens/s."
else
  what="prefill: $prompt tokens from an empty context; decode: $decode_steps tokens after a $context-token context."
fi
report="## samebits ($quant_dot) vs llama.cpp ($llama_rev, $llama_kind build), $checkpoint, medians of $repeats interleaved runs

$what
$(uname -m), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $cores cores, load $load at start;
samebits $(git -C "$root" rev-parse --short HEAD).
$(sort -u "$tuning_log" 2>/dev/null | sed 's/^/samebits /')

$table"
echo "$report"
if [[ -n $out ]]; then mkdir -p "$(dirname "$out")"; printf '%s\n' "$report" >"$out"; fi
