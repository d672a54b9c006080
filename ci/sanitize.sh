#!/usr/bin/env bash
# The test suite under sanitizers, each build in a folder of its own so the
# Release build/ is never touched:
#   build-asan: everything built with AddressSanitizer and
#     UndefinedBehaviorSanitizer, the ctest suite (without the tests named
#     in asan_slow below unless --full);
#   build-tsan: everything built with ThreadSanitizer, the thread pool's, the
#     runner's and the store's tests (the code that shares memory between
#     threads and processes).
# The children the tests start (samebits-engine, the stand-ins) are the
# sanitized builds too.
#
# No report passes silently. Every sanitizer stops the process at its first
# report (halt_on_error, -fno-sanitize-recover) and writes it to a file under
# BUILD/sanitizer-reports/ (log_path). A test fails when its process dies;
# but a child the harness judges may be expected to fail (a stand-in that
# crashes on purpose), so the script also fails whenever any report file
# was written, and prints them. Exit code: 0 clean, 1 a test failed or a
# sanitizer reported, 2 the build failed.
#
#   ci/sanitize.sh [--full] [asan|tsan|all] [-- CTEST_ARGS...]
#                  (default all; JOBS=N, default 2; CTEST_ARGS, such as
#                  -R Store, narrow each ctest run)
#
# Third-party findings only may be suppressed, in ci/sanitizer-suppressions/
# (one reason per line); none are needed today.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
full=0
which=all
ctest_args=()
while [ $# -gt 0 ]; do
  arg=$1
  shift
  case $arg in
    --)
      ctest_args=("$@")
      break
      ;;
    --full) full=1 ;;
    asan | tsan | all) which=$arg ;;
    -h | --help)
      sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    *)
      echo "ci/sanitize.sh: unknown argument '$arg' (--full, asan, tsan or all)" >&2
      exit 2
      ;;
  esac
done
jobs=${JOBS:-2}
launcher=()
# The base folder makes cached objects reusable from a clone in another folder.
if command -v ccache >/dev/null; then
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$root}
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi

# The slowest tests under ASan (each runs whole matrices of engine children,
# several times slower instrumented): left to --full so that CI's sanitizer
# step stays within its budget. docs/building.md ("Sanitizers") says which
# and why.
asan_slow=(
  '^Identity\.WideClassic$'
  '^Identity\.MediumEveryScenario$'
  'BisectScratch\.'
  # The two largest batch-invariance runs (144 s and 89 s of 600 under ASan
  # at stop 23; 37 s and 18 s in Release, which runs them): the smaller
  # batch tests, MediumMoe's among them, run here.
  '^BatchDriverTest\.WideIsBatchInvariant$'
  '^BatchDriverTest\.QuantizedMediumIsBatchInvariant$'
)

# Configures and builds `dir` with the compiler and linker flags `flags`
# (only the targets named after them, when any).
build() {
  local dir=$1 flags=$2
  shift 2
  local targets=()
  [ $# -gt 0 ] && targets=(--target "$@")
  # -O1 -g1: line tables are all a sanitizer report needs, and the build
  # takes far less time than at RelWithDebInfo's -O2 -g (docs/building.md,
  # "Sanitizers"). The harness and the tests in unity batches
  # (SAMEBITS_UNITY_BUILD): instrumented, each of their files compiled
  # alone spent most of its time on the same headers' inline code
  # (docs/building.md, "What CI runs").
  cmake -S "$root" -B "$root/$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}" \
    -DSAMEBITS_UNITY_BUILD=ON \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
    -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" \
    -DCMAKE_SHARED_LINKER_FLAGS="$flags" >/dev/null &&
    cmake --build "$root/$dir" -j "$jobs" "${targets[@]}"
}

# Returns 1 (after printing them) when the folder holds any report.
check_reports() {
  local reports=$1 found=0 f
  for f in "$reports"/*; do
    [ -e "$f" ] || continue
    found=1
    echo "== sanitizer report: $f" >&2
    head -n 60 "$f" >&2
  done
  if [ "$found" = 1 ]; then
    echo "ci/sanitize.sh: the sanitizers reported (files above, in $reports)" >&2
    return 1
  fi
}

# Runs ctest in build folder `dir` with its arguments after it, the reports
# going to dir/sanitizer-reports. Returns non-zero when a test failed or
# anything was reported.
run_tests() {
  local dir=$1 reports="$root/$1/sanitizer-reports" status=0
  shift
  rm -rf "$reports" && mkdir -p "$reports"
  # LD_PRELOAD of the libm stand-in loads ahead of the ASan runtime, which is
  # fine for a library that allocates nothing (verify_asan_link_order=0).
  ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:halt_on_error=1:detect_leaks=1:verify_asan_link_order=0}:log_path=$reports/asan \
    UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}:log_path=$reports/ubsan \
    TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}:log_path=$reports/tsan \
    "$@" || status=1
  check_reports "$reports" || status=1
  return $status
}

result=0
if [ "$which" = asan ] || [ "$which" = all ]; then
  build build-asan "-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" ||
    exit 2
  skip=()
  if [ "$full" = 0 ]; then
    skip=(-E "$(
      IFS='|'
      echo "${asan_slow[*]}"
    )")
  fi
  run_tests build-asan ctest --test-dir "$root/build-asan" --output-on-failure -j "$jobs" \
    "${skip[@]}" "${ctest_args[@]}" || result=1
fi
if [ "$which" = tsan ] || [ "$which" = all ]; then
  build build-tsan "-fsanitize=thread -fno-omit-frame-pointer" \
    samebits_threads_tests samebits_harness_tests || exit 2
  # ThreadSanitizer cannot map its shadow memory under the high address
  # randomisation of recent kernels; setarch -R runs the tests without it.
  norandom=()
  if setarch "$(uname -m)" -R true 2>/dev/null; then norandom=(setarch "$(uname -m)" -R); fi
  # SharedChildBits compares the engine's bits served and alone (96 engine
  # runs, 199 of the 201 s of this step under TSan); the threads it shares
  # with the harness are SharedChild's, which run here.
  run_tests build-tsan "${norandom[@]}" ctest --test-dir "$root/build-tsan" --output-on-failure \
    -j "$jobs" -L 'threads|harness' -R 'ThreadPool|Threads|Runner|Child|Scheduler|Store' \
    -E 'SharedChildBits' \
    "${ctest_args[@]}" ||
    result=1
fi
exit $result
