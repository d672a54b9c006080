#!/usr/bin/env bash
# Times samebits-engine's cpu pass on one checkpoint exported at several
# weight types, side by side: every round runs each type once, in turn
# (forward, then backward the next round), so a machine whose speed drifts
# slows every type alike. Prints a Markdown table of medians: decode
# tokens/s and the GB/s of weights it reads, prefill tokens/s, and each
# type's decode speed against the first type's (issue 13's "Q8_0 at least
# 1.5x BF16, measured side by side").
#
#   ci/bench-types.sh [--types bf16,q8_0,q4_k] [--threads 1,2] [--repeats 5]
#                     [--checkpoint synthetic:bench] [--out FILE] [--force]
#
# The exported files are kept in SAMEBITS_CACHE (default ~/.cache/samebits)
# under bench-types/, named by checkpoint, type and the engine's weights
# hash, and made again when the engine writes other bytes. Round 0 is a
# warm-up and is discarded. It refuses a busy machine (load average above
# 0.5 per core) unless --force: figures taken beside other work understate
# the engine, and not every type by as much.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
types=bf16,q8_0,q4_k threads=1,2 repeats=5 checkpoint=synthetic:bench out='' force=0
usage() { sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; }
while (($#)); do
  case $1 in
    --types) types=${2:?--types needs a list}; shift 2 ;;
    --threads) threads=${2:?--threads needs a list}; shift 2 ;;
    --repeats) repeats=${2:?--repeats needs a number}; shift 2 ;;
    --checkpoint) checkpoint=${2:?--checkpoint needs a spec}; shift 2 ;;
    --out) out=${2:?--out needs a file}; shift 2 ;;
    --force) force=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "bench-types.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
script=bench-types.sh
# shellcheck source=ci/bench-common.sh
source "$root/ci/bench-common.sh"
require_positive --repeats "$repeats"
require_number_list --threads "$threads"
[[ $types =~ ^[a-z0-9_]+(,[a-z0-9_]+)*$ ]] || { echo "bench-types.sh: --types takes TYPE,TYPE,..." >&2; exit 2; }
IFS=, read -r -a type_list <<<"$types"
IFS=, read -r -a thread_list <<<"$threads"

engine=$root/build/bin/samebits-engine
[[ -x $engine ]] || { echo "bench-types.sh: build samebits first (ci/build.sh)" >&2; exit 2; }

refuse_busy_machine "$force"

cache=${SAMEBITS_CACHE:-$HOME/.cache/samebits}/bench-types
mkdir -p "$cache"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Exports the checkpoint at type $1 (once per engine's bytes); prints the path.
export_type() {
  local name file hash
  name=$(printf '%s' "$checkpoint" | tr -c 'A-Za-z0-9_.-' '_')-$1
  if [[ $1 == bf16 ]]; then "$engine" export "$checkpoint" "$work/$1.gguf" >"$work/export.log" 2>&1
  else "$engine" export --type "$1" "$checkpoint" "$work/$1.gguf" >"$work/export.log" 2>&1; fi ||
    { cat "$work/export.log" >&2; echo "bench-types.sh: samebits-engine cannot export type '$1'" >&2; exit 2; }
  hash=$(grep -o 'weights [0-9a-f]*' "$work/export.log" | cut -d' ' -f2)
  file=$cache/$name-${hash:-unknown}.gguf
  [[ -f $file ]] || mv "$work/$1.gguf" "$file"
  rm -f "$work/$1.gguf"
  echo "$file"
}

# Prints "DECODE_TPS DECODE_GBS PREFILL_TPS" for one bench run of file $1
# at $2 threads.
once() {
  "$engine" bench --checkpoint "gguf:$1" --no-reference --repeats 1 --threads-list "$2" \
    --bandwidth-mib 0 2>/dev/null |
    awk '/^decode at context/ { s = "d"; next } /^prefill of/ { s = "p"; next } /^(ratios|identity)/ { s = "" }
         s != "" && /^  cpu [0-9]+ threads? +[0-9]/ { if (s == "d") { d = $7; g = $8 } else p = $7 }
         END { print d, g, p }'
}

declare -A files
for type in "${type_list[@]}"; do files[$type]=$(export_type "$type"); done

table="| type | threads | decode tok/s | decode GB/s | vs ${type_list[0]} | prefill tok/s |
|---|---|---|---|---|---|"
for t in "${thread_list[@]}"; do
  for type in "${type_list[@]}"; do : >"$work/$type"; done
  for ((r = 0; r <= repeats; r++)); do
    order=("${type_list[@]}")
    if ((r % 2)); then
      order=()
      for ((i = ${#type_list[@]} - 1; i >= 0; i--)); do order+=("${type_list[i]}"); done
    fi
    line=""
    for type in "${order[@]}"; do
      figures=$(once "${files[$type]}" "$t")
      [[ $figures =~ ^[0-9.]+\ [0-9.]+\ [0-9.]+$ ]] ||
        { echo "bench-types.sh: the bench printed no figures for $type at $t threads" >&2; exit 1; }
      ((r == 0)) || echo "$figures" >>"$work/$type"
      line+=" $type $(cut -d' ' -f1 <<<"$figures")"
    done
    echo "  t$t round $r${line} (decode tok/s)$( ((r == 0)) && echo ', warm-up')" >&2
  done
  first=""
  for type in "${type_list[@]}"; do
    d=$(cut -d' ' -f1 "$work/$type" | median)
    g=$(cut -d' ' -f2 "$work/$type" | median)
    p=$(cut -d' ' -f3 "$work/$type" | median)
    [[ -n $first ]] || first=$d
    table+=$'\n'"| $type | $t | $d | $g | $(awk -v a="$d" -v b="$first" 'BEGIN { printf "%.2fx", a / b }') | $p |"
  done
done

report="## samebits-engine by weight type, $checkpoint, medians of $repeats interleaved rounds

decode: 16 tokens after a 128-token context; prefill: 128 tokens (the bench's defaults).
$(uname -m), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $cores cores, load $load at start;
samebits $(git -C "$root" rev-parse --short HEAD).

$table"
echo "$report"
if [[ -n $out ]]; then mkdir -p "$(dirname "$out")"; printf '%s\n' "$report" >"$out"; fi
