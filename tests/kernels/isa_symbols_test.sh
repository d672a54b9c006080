#!/bin/sh
# Every ISA-flagged source (engine/kernels/kernels.cmake's list) must
# export only its own entry points: no weak symbol at all. A weak symbol is
# an inline or template function (std::fma, std::min<long>, numerics::Dot,
# ...) that other objects also define; the linker keeps one copy of it for
# the whole program, and if it keeps the one compiled with -mavx512f,
# baseline code calls AVX-512 instructions and faults on an older CPU.
# Optimised builds usually inline such functions away and hide the problem,
# so each file is compiled here at -O0, where nothing is inlined.
#
# Usage: isa_symbols_test.sh CXX SOURCE_DIR GENERATED_INCLUDE_DIR
# The files and their flags are engine/kernels/kernels.cmake's, which it
# writes to GENERATED_INCLUDE_DIR/isa_sources.txt ("path<TAB>flags" lines,
# paths relative to engine/).
set -eu
cxx=$1
src=$2
gen=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
list="$gen/isa_sources.txt"
if [ ! -f "$list" ]; then
  echo "FAIL: $list is missing (engine/kernels/kernels.cmake writes it at configure time)"
  exit 1
fi
if [ ! -s "$list" ]; then
  echo "no ISA-flagged sources on $(uname -m)"
  exit 0
fi

checked=0
failed=0
tab=$(printf '\t')
while IFS="$tab" read -r path flags; do
  file="$src/engine/$path"
  # shellcheck disable=SC2086  # the flags are several words
  "$cxx" -std=c++20 -O0 -ffp-contract=off $flags -I"$src" -I"$gen" -c "$file" -o "$tmp/o.o"
  weak=$(nm -C "$tmp/o.o" | awk '$(NF > 2 ? 2 : 1) ~ /^[WVvw]$/')
  checked=$((checked + 1))
  if [ -n "$weak" ]; then
    echo "FAIL: engine/$path exports weak symbols the linker may share with baseline code:"
    echo "$weak"
    failed=$((failed + 1))
  else
    echo "ok: engine/$path ($flags)"
  fi
done <"$list"
if [ "$checked" -eq 0 ]; then
  echo "FAIL: no ISA-flagged source read from $list"
  exit 1
fi
[ "$failed" -eq 0 ]
