#!/usr/bin/env bash
# The store's benchmark (issue 24): how fast runs are written, and how long
# `samebits compare` and `samebits verdict` take over a store of N step rows
# (default 1 million), on SQLite and on PostgreSQL (a throwaway cluster from
# ci/with-postgres.sh). Prints a Markdown table.
#
#   ci/bench-store.sh [--steps N] [--backend sqlite|postgres|both] [--repeats R]
#                     [--out FILE] [--force]
#
# For each backend: a fresh store is filled by build/bin/samebits-store-bench
# (tests/harness/store_bench_main.cc: a 4-shard group on two machines with
# half the rows, then one whole run per machine with a quarter each), which
# prints the step rows per second it wrote; then
#   samebits compare machine:bench-a machine:bench-b   (2 x N/4 step rows read)
#   samebits verdict --group bench --expect-shards 4   (N/2 step rows read)
# are each run R times (default 3) and their median wall time reported. The
# verdict judges against an empty references folder (its exit is 1, "no
# reference": the time is what is measured, not the verdict). The fsync-free
# throwaway cluster writes faster than a production server would.
#
# Take the figures on a quiet machine: it refuses a busy one (load average
# above 0.5 per core) unless --force, as the other benchmarks do.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
steps=1000000 backend=both repeats=3 out='' force=0
usage() { sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; }
while (($#)); do
  case $1 in
    --steps) steps=${2:?--steps needs a number}; shift 2 ;;
    --backend) backend=${2:?--backend needs sqlite, postgres or both}; shift 2 ;;
    --repeats) repeats=${2:?--repeats needs a number}; shift 2 ;;
    --out) out=${2:?--out needs a file}; shift 2 ;;
    --force) force=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "bench-store.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
script=bench-store.sh
# shellcheck source=ci/bench-common.sh
source "$root/ci/bench-common.sh"
require_positive --steps "$steps"
require_positive --repeats "$repeats"
case $backend in sqlite|postgres|both) ;; *)
  echo "bench-store.sh: --backend takes sqlite, postgres or both, not '$backend'" >&2; exit 2 ;;
esac
samebits=${SAMEBITS_BIN:-$root/build/bin}/samebits
filler=${SAMEBITS_BIN:-$root/build/bin}/samebits-store-bench
for program in "$samebits" "$filler"; do
  [[ -x $program ]] || { echo "bench-store.sh: $program is not built (cmake --build build --target samebits samebits-store-bench)" >&2; exit 2; }
done

# Fills the store $2 and prints the table row of backend $1.
bench_one() {
  local name=$1 db=$2 refs tmp
  tmp=$(mktemp -d)
  refs="$tmp/references"
  mkdir -p "$refs"
  "$filler" --db "$db" --steps "$steps" >"$tmp/fill.txt"
  local rate
  rate=$(awk '/^wrote/ {print $(NF-2)}' "$tmp/fill.txt")
  local compare_times=() verdict_times=()
  for ((r = 0; r < repeats; r++)); do
    compare_times+=("$(wall_seconds "$samebits" compare machine:bench-a machine:bench-b --db "$db")")
    verdict_times+=("$(wall_seconds "$samebits" verdict --group bench --expect-shards 4 --db "$db" --references-dir "$refs")")
  done
  printf '| %s | %s | %s | %s | %s |\n' "$name" "$steps" "$rate" \
    "$(printf '%s\n' "${compare_times[@]}" | median)" "$(printf '%s\n' "${verdict_times[@]}" | median)"
  rm -rf "$tmp"
}

# Prints the wall time of CMD in seconds; its output is dropped and its
# exit status (compare's 0/1, verdict's 1 without references) ignored, but
# a status of 2 (the command could not be carried out) stops the benchmark.
wall_seconds() {
  local start end status=0
  start=$(date +%s.%N)
  "$@" >/dev/null 2>"$bench_tmp/stderr" || status=$?
  end=$(date +%s.%N)
  if ((status == 2)); then
    cat "$bench_tmp/stderr" >&2
    echo "bench-store.sh: '$*' could not be carried out" >&2
    exit 2
  fi
  awk -v s="$start" -v e="$end" 'BEGIN { printf "%.2f", e - s }'
}


if [[ ${BENCH_STORE_INNER:-} == 1 ]]; then
  # Re-entered by ci/with-postgres.sh: the server is $SAMEBITS_TEST_PG.
  bench_tmp=$(mktemp -d)
  trap 'rm -rf "$bench_tmp"' EXIT
  psql "$SAMEBITS_TEST_PG" -q -c "CREATE DATABASE samebits_bench" >/dev/null
  bench_one PostgreSQL "$SAMEBITS_TEST_PG dbname=samebits_bench"
  exit 0
fi

refuse_busy_machine "$force"
bench_tmp=$(mktemp -d)
trap 'rm -rf "$bench_tmp"' EXIT
{
  echo "| backend | step rows | written (step rows/s) | compare (s, median of $repeats) | verdict (s, median of $repeats) |"
  echo "|---|---:|---:|---:|---:|"
  if [[ $backend != postgres ]]; then
    bench_one SQLite "$bench_tmp/bench.db"
  fi
  if [[ $backend != sqlite ]]; then
    BENCH_STORE_INNER=1 "$root/ci/with-postgres.sh" "$0" --steps "$steps" --repeats "$repeats"
  fi
} | tee "${out:-/dev/null}"
