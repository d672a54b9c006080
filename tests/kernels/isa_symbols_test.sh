#!/bin/sh
# Every ISA-flagged source (engine/*/*_avx2.cc, *_avx512.cc, *_neon.cc) must
# export only its own entry points: no weak symbol at all. A weak symbol is
# an inline or template function (std::fma, std::min<long>, numerics::Dot,
# ...) that other objects also define; the linker keeps one copy of it for
# the whole program, and if it keeps the one compiled with -mavx512f,
# baseline code calls AVX-512 instructions and faults on an older CPU.
# Optimised builds usually inline such functions away and hide the problem,
# so each file is compiled here at -O0, where nothing is inlined.
#
# Usage: isa_symbols_test.sh CXX SOURCE_DIR GENERATED_INCLUDE_DIR
# The flags below mirror engine/CMakeLists.txt (samebits_isa_sources).
set -eu
cxx=$1
src=$2
gen=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

case $(uname -m) in
  x86_64|amd64) patterns="_avx2.cc _avx512.cc" ;;
  aarch64|arm64) patterns="_neon.cc" ;;
  *) echo "no ISA-flagged sources on $(uname -m)"; exit 0 ;;
esac

checked=0
failed=0
for pattern in $patterns; do
  for file in "$src"/engine/*/*"$pattern"; do
    [ -e "$file" ] || continue
    case $file in
      *_avx2.cc) flags="-mavx2 -mfma -mf16c" ;;
      *_avx512.cc) flags="-mavx512f -mavx512bw -mavx512vl -mavx2 -mfma -mf16c" ;;
      *) flags="" ;;
    esac
    # shellcheck disable=SC2086  # the flags are several words
    "$cxx" -std=c++20 -O0 -ffp-contract=off $flags -I"$src" -I"$gen" -c "$file" -o "$tmp/o.o"
    weak=$(nm -C "$tmp/o.o" | awk '$(NF > 2 ? 2 : 1) ~ /^[WVvw]$/')
    checked=$((checked + 1))
    if [ -n "$weak" ]; then
      echo "FAIL: ${file#"$src"/} exports weak symbols the linker may share with baseline code:"
      echo "$weak"
      failed=$((failed + 1))
    else
      echo "ok: ${file#"$src"/}"
    fi
  done
done
if [ "$checked" -eq 0 ]; then
  echo "FAIL: no ISA-flagged source found under $src/engine"
  exit 1
fi
[ "$failed" -eq 0 ]
