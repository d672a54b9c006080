#!/bin/sh
# Cross-compiles the kernel library and the kernel tests for aarch64 as one
# static binary and runs it under qemu-aarch64, so the NEON table is tested
# on an x86 machine. Needs the Debian packages g++-aarch64-linux-gnu,
# qemu-user and googletest (its sources in /usr/src/googletest).
# Usage: tests/kernels/run_aarch64_qemu.sh [WORK_DIR] [gtest flags...]
set -eu
src=$(cd "$(dirname "$0")/../.." && pwd)
work=${1:-/tmp/samebits-aarch64}
[ $# -gt 0 ] && shift
cxx=aarch64-linux-gnu-g++
gtest=/usr/src/googletest/googletest
# The same numeric flags as the main build: no contraction, no fast-math.
flags="-std=c++20 -O2 -ffp-contract=off -fno-fast-math -fno-math-errno -Wall -Wextra -Wno-unused-parameter"
mkdir -p "$work"
if [ ! -f "$work/gtest.o" ]; then
  $cxx -std=c++20 -O2 -I$gtest/include -I$gtest -c $gtest/src/gtest-all.cc -o "$work/gtest.o"
  $cxx -std=c++20 -O2 -I$gtest/include -I$gtest -c $gtest/src/gtest_main.cc -o "$work/gtest_main.o"
fi
# Every kernel source but the x86 ISA files (their names hold "avx"), so a
# new file is built without editing this list, and what the kernels link
# from numerics, platform and threads.
kernel_sources=$(ls "$src"/engine/kernels/*.cc | grep -v avx)
if ! $cxx $flags -I"$src" -static -o "$work/samebits_kernels_tests_aarch64" \
  $kernel_sources \
  "$src"/engine/platform/cpu_features.cc "$src"/engine/platform/weight_memory.cc \
  "$src"/engine/threads/thread_pool.cc "$src"/engine/numerics/half.cc "$src"/engine/numerics/dtype.cc \
  "$src"/engine/numerics/quant_blocks.cc "$src"/engine/numerics/int8_dot.cc \
  "$src"/engine/numerics/portable_math.cc \
  "$src"/tests/kernels/*_test.cc "$src"/tests/kernels/*_helpers.cc \
  "$work/gtest.o" "$work/gtest_main.o" -lpthread >"$work/build.log" 2>&1; then
  cat "$work/build.log"
  echo "run_aarch64_qemu.sh: the aarch64 build failed (log above)" >&2
  exit 1
fi
exec qemu-aarch64 "$work/samebits_kernels_tests_aarch64" "$@"
