#!/usr/bin/env bash
# The test suite under sanitizers, each build in a folder of its own so the
# Release build/ is never touched:
#   build-asan: everything built with AddressSanitizer and
#     UndefinedBehaviorSanitizer (any report fails the test), the whole ctest
#     suite;
#   build-tsan: everything built with ThreadSanitizer, the thread pool's, the
#     runner's and the store's tests (the code that shares memory between
#     threads and processes).
# The children the tests start (samebits-engine, the stand-ins) are the
# sanitized builds too.
#
#   ci/sanitize.sh [asan|tsan|all]      (default all; JOBS=N, default 2)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
which=${1:-all}
jobs=${JOBS:-2}
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi

# Configures and builds `dir` with the compiler and linker flags `flags`
# (only the targets named after them, when any).
build() {
  local dir=$1 flags=$2
  shift 2
  local targets=()
  [ $# -gt 0 ] && targets=(--target "$@")
  cmake -S "$root" -B "$root/$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}" \
    -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" \
    -DCMAKE_SHARED_LINKER_FLAGS="$flags" >/dev/null
  cmake --build "$root/$dir" -j "$jobs" "${targets[@]}"
}

# Sanitizer reports abort the process, so a test (or a child the harness
# judges) cannot pass with one. LD_PRELOAD of the libm stand-in loads ahead
# of the ASan runtime, which is fine for a library that allocates nothing.
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:halt_on_error=1:detect_leaks=1:verify_asan_link_order=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}

if [ "$which" = asan ] || [ "$which" = all ]; then
  build build-asan "-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
  ctest --test-dir "$root/build-asan" --output-on-failure -j "$jobs"
fi
if [ "$which" = tsan ] || [ "$which" = all ]; then
  build build-tsan "-fsanitize=thread -fno-omit-frame-pointer" \
    samebits_threads_tests samebits_harness_tests
  # ThreadSanitizer cannot map its shadow memory under the high address
  # randomisation of recent kernels; setarch -R runs the tests without it.
  norandom=()
  if setarch "$(uname -m)" -R true 2>/dev/null; then norandom=(setarch "$(uname -m)" -R); fi
  "${norandom[@]}" ctest --test-dir "$root/build-tsan" --output-on-failure -j "$jobs" \
    -L 'threads|harness' -R 'ThreadPool|Threads|Runner|Child|Scheduler|Store'
fi
