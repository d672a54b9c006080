#!/usr/bin/env bash
# Other platforms on one machine: builds the engine for other compilers,
# ISAs and architectures, runs each build as the engine the host's harness
# drives (`samebits gate --engine WRAPPER`, through qemu-user for another
# architecture), and gates every one against references/portable.txt, then
# in the int8 profile for quantized weights (`--quant-dot int8`) against
# references/portable-int8.txt. The portable math profile promises the same
# bits on every platform in both dot-product profiles, so every cell of
# every platform must pass; a difference is a bug in the engine.
#
# Platforms (engine-only builds under build-cross/PLATFORM/):
#   x86_64-gcc       g++ -march=native (every ISA this machine has)
#   x86_64-clang     clang++, default x86-64 flags (runtime-dispatched kernels)
#   x86_64-baseline  g++ -march=x86-64, also run with the scalar kernels alone
#   aarch64          g++-aarch64-linux-gnu under qemu-aarch64 (NEON kernels)
#   s390x            g++-s390x-linux-gnu under qemu-s390x (big-endian, scalar)
#
# It installs the Debian packages it needs (apt-get, by name), and unpacks
# the target's own libraries (PCRE2) into DIR/target-libs/PLATFORM rather
# than installing them as multiarch packages: those must match the host's
# versions exactly (Debian's security archive carries no s390x, so
# libpcre2-8-0:s390x cannot follow the host's), and they pull in a multiarch
# libc6 of another version than the cross toolchain's, with which qemu-user
# ran the toolchain's loader and hung in the engine's first pthread_create.
# When the packages cannot be had it says so and exits 77 (skipped: nothing
# was checked, which is not a pass); with --require that is exit 2 instead.
# Exit codes: 0 every platform bit-identical, 1 a platform differs or its
# children failed, 2 a build or set-up failed, 77 skipped.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
  cat <<'EOF'
Usage: ci/cross.sh [--quick] [--platforms NAME,...] [--suite FILE] [--out DIR] [--require] [-h]

Cross-builds the engine and gates each build against references/portable.txt, then
under --quant-dot int8 against references/portable-int8.txt.

  --quick             CI selection: the x86_64-clang and aarch64 platforms (clang++ so that a
                      change g++ accepts and clang++ rejects fails CI), on the pairs of
                      ci/cross-quick-suite.json (every synthetic checkpoint, the quantized
                      ones included, and three real files, one of them a k-quant) under
                      reference, cpu-t1 (NEON), cpu-t2 and cpu-scalar, then the int8
                      profile on the pairs of ci/cross-int8-suite.json (every quantized
                      synthetic checkpoint, the k-quants included, and the k-quant real
                      file) under the same configurations' -int8 twins; children time out
                      after 300 s instead of 1800.
  --suite FILE        Gates the pairs of this suite file (see harness/runner/suite.h), such
                      as ci/cross-quantized-suite.json, instead of the whole matrix, in
                      both profiles.
  --platforms LIST    Comma-separated subset of: x86_64-gcc, x86_64-clang,
                      x86_64-baseline, aarch64, s390x (default: all five).
  --out DIR           Build and report folder (default build-cross).
  --require           Fail (exit 2) instead of skipping (exit 77) when the cross
                      packages cannot be installed.
  -h, --help          This text.

Writes DIR/report.md (one row per platform, then each platform's gate reports)
and DIR/PLATFORM.md and DIR/PLATFORM-int8.md, and prints the summary table.

Cost, measured on a 2-core machine busy with other work (load 6 to 10):
--quick took 449 s from a machine without the cross packages: 21 s of
apt-get, 289 s to build the aarch64 engine (no ccache), 135 s of exports and
gate (104 cells then, the slowest 31 s; synthetic:gemma's 8 cells, added
since, took 2.7 s). The s390x platform over
ci/cross-quantized-suite.json (69 cells) took 713 s of gate.

Examples:
  ci/cross.sh                          # all five platforms, full selection
  ci/cross.sh --quick                  # what .ci/run runs
  ci/cross.sh --platforms s390x        # the big-endian platform alone
EOF
}

quick=0
suite=""
require=0
out=build-cross
platforms="x86_64-gcc,x86_64-clang,x86_64-baseline,aarch64,s390x"
while (($#)); do
  case "$1" in
    --quick) quick=1; platforms=x86_64-clang,aarch64 ;;
    --platforms) platforms="${2:?--platforms needs a list}"; shift ;;
    --suite) suite="${2:?--suite needs a file}"; shift ;;
    --out) out="${2:?--out needs a folder}"; shift ;;
    --require) require=1 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "ci/cross.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
IFS=, read -r -a selected <<<"$platforms"
script_start=$(date +%s)

# The Debian packages each platform needs on the host beyond the host build's.
packages_for() {
  case "$1" in
    x86_64-gcc|x86_64-baseline) echo "" ;;
    x86_64-clang) echo "clang" ;;
    aarch64) echo "g++-aarch64-linux-gnu qemu-user" ;;
    s390x) echo "g++-s390x-linux-gnu qemu-user" ;;
    *) echo "ci/cross.sh: unknown platform '$1' (see --help)" >&2; exit 2 ;;
  esac
}
# The Debian architecture of a cross platform (empty for the host's builds).
debian_arch_for() {
  case "$1" in
    aarch64) echo "arm64" ;;
    s390x) echo "s390x" ;;
    *) echo "" ;;
  esac
}
# PCRE2 (the BPE pre-tokenizers) is the one library the engine links that
# is neither header-only nor part of the cross toolchain: the target's own
# packages, unpacked into DIR/target-libs/PLATFORM.
target_packages=(libpcre2-8-0 libpcre2-dev)

skip() {
  echo "ci/cross.sh: SKIPPED, nothing was checked: $*" >&2
  mkdir -p "$out"
  printf '# Other platforms: SKIPPED\n\nNothing was checked: %s\n' "$*" >"$out/report.md"
  if ((require)); then exit 2; fi
  exit 77
}

needed=()
archs=()
for p in "${selected[@]}"; do
  for pkg in $(packages_for "$p"); do needed+=("$pkg"); done
  arch=$(debian_arch_for "$p")
  [[ -z $arch ]] || archs+=("$arch")
done
missing=()
for pkg in "${needed[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
# apt knows another architecture's packages once dpkg knows the
# architecture and apt-get update has read its lists.
unknown_archs=()
for arch in "${archs[@]}"; do
  apt-cache show "libpcre2-8-0:$arch" >/dev/null 2>&1 || unknown_archs+=("$arch")
done
if ((${#missing[@]} + ${#unknown_archs[@]})); then
  sudo_cmd=()
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null || skip "not root and no sudo to run apt-get"
    sudo_cmd=(sudo -n)
  fi
  for arch in "${unknown_archs[@]}"; do
    dpkg --print-foreign-architectures | grep -qx "$arch" ||
      "${sudo_cmd[@]}" dpkg --add-architecture "$arch" ||
      skip "dpkg could not add the architecture $arch"
  done
  # Another apt-get may hold the lock for a while on a shared machine.
  "${sudo_cmd[@]}" apt-get -o DPkg::Lock::Timeout=600 update -qq ||
    skip "apt-get update failed, so the packages cannot be had"
  if ((${#missing[@]})); then
    echo "ci/cross.sh: installing ${missing[*]}" >&2
    DEBIAN_FRONTEND=noninteractive bash ci/quietly.sh "${sudo_cmd[@]}" \
      apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}" ||
      skip "apt-get could not install ${missing[*]}"
  fi
fi
# Unpacks the target's libraries for platform $1 into $2 (once).
unpack_target_libs() {
  local arch dest=$2 debs pkg
  arch=$(debian_arch_for "$1")
  [[ -f $dest/.unpacked ]] && return 0
  rm -rf "$dest" && mkdir -p "$dest/debs"
  debs=()
  for pkg in "${target_packages[@]}"; do debs+=("$pkg:$arch"); done
  # apt's download sandbox user may not write into the caller's folder.
  (cd "$dest/debs" && apt-get -o APT::Sandbox::User=root download -qq "${debs[@]}") ||
    skip "apt-get could not download ${debs[*]}"
  for deb in "$dest"/debs/*.deb; do dpkg-deb -x "$deb" "$dest" || skip "dpkg-deb could not unpack $deb"; done
  touch "$dest/.unpacked"
}

echo "ci/cross.sh: packages ready after $(($(date +%s) - script_start)) s" >&2
# The host's harness (and its own engine), built as ci/build.sh does.
bash ci/install-deps.sh
jobs=$(nproc 2>/dev/null || echo 2)
launcher=()
# The base folder makes cached objects reusable from a clone in another folder.
if command -v ccache >/dev/null; then
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" >/dev/null
cmake --build build -j "$jobs" --target samebits samebits-engine >/dev/null

# Per platform: configure flags, the command that runs the engine, the
# configurations to gate, and a description for the report.
cmake_args_for() {
  case "$1" in
    x86_64-gcc) echo "-DCMAKE_CXX_COMPILER=g++ -DCMAKE_CXX_FLAGS=-march=native" ;;
    x86_64-clang) echo "-DCMAKE_CXX_COMPILER=clang++" ;;
    x86_64-baseline) echo "-DCMAKE_CXX_COMPILER=g++ -DCMAKE_CXX_FLAGS=-march=x86-64" ;;
    aarch64|s390x) echo "-DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-$1-linux-gnu.cmake" ;;
  esac
}
# The loader comes from the cross toolchain's folder (-L); its C library
# must too, so the guest's library path puts that folder first, then the
# unpacked target libraries ($2).
emulator_for() {
  case "$1" in
    aarch64|s390x)
      echo "qemu-$1 -L /usr/$1-linux-gnu -E LD_LIBRARY_PATH=/usr/$1-linux-gnu/lib:$2/usr/lib/$1-linux-gnu" ;;
    *) echo "" ;;
  esac
}
configs_for() {
  if ((quick)); then
    echo "reference,cpu-t1,cpu-t2,cpu-scalar"
    return
  fi
  case "$1" in
    x86_64-baseline) echo "reference,cpu-t2,cpu-scalar" ;;
    *) echo "reference,cpu-t2" ;;
  esac
}
# The same configurations in the int8 profile: their -int8 twins.
int8_configs_for() {
  configs_for "$1" | sed 's/,/-int8,/g; s/$/-int8/'
}
describe() {
  case "$1" in
    x86_64-gcc) echo "g++ -march=native; kernels: best of this CPU" ;;
    x86_64-clang) echo "clang++; kernels: best of this CPU" ;;
    x86_64-baseline) echo "g++ -march=x86-64; kernels: best of this CPU and scalar" ;;
    aarch64) echo "aarch64-linux-gnu-g++ under qemu-aarch64; kernels: NEON" ;;
    s390x) echo "s390x-linux-gnu-g++ under qemu-s390x (big-endian); kernels: scalar" ;;
  esac
}

# The matrix: everything by default; --quick narrows it to what CI affords.
# The int8 profile gates the same selection, but for --quick the quantized
# checkpoints alone (on the others the host's gate holds it to their exact
# bits).
selection=()
int8_selection=()
timeout=1800
if ((quick)); then
  selection=(--suite ci/cross-quick-suite.json)
  int8_selection=(--suite ci/cross-int8-suite.json)
  # Its slowest cell (synthetic:wide, classic) takes about 40 s under qemu
  # on a loaded 2-core machine: a hung child is caught within minutes.
  timeout=300
fi
[[ -z $suite ]] || selection=(--suite "$suite") int8_selection=(--suite "$suite")

# The readers and writers, byte for byte: each platform's engine loads these
# checkpoints and writes them again (GGUF; safetensors for one), and every
# file, with the weights hash `export` prints, must equal the host engine's.
export_specs=(synthetic:tiny-bf16 synthetic:medium gguf:../shared/checkpoints/tiny_moe_mixtral_bf16.gguf
              llama2c:../shared/checkpoints/stories260K.bin)
# Writes $2/N.gguf for each export spec N (and $2/st/ in safetensors) with
# the engine command "$1"; what it prints (the weights hash), minus the
# folder, goes to $2/log.
export_all() {
  local run=$1 dest=$2 i=0
  rm -rf "$dest" && mkdir -p "$dest"
  for spec in "${export_specs[@]}"; do
    $run export "$spec" "$dest/$i.gguf" 2>&1 | sed "s|$dest/||" >>"$dest/log" || return 1
    i=$((i + 1))
  done
  $run export synthetic:tiny "$dest/st" 2>&1 | sed "s|$dest/||" >>"$dest/log" || return 1
}
host_files="$out/files/host"
mkdir -p "$out"
export_all build/bin/samebits-engine "$host_files"

# The gate column of the summary for a gate's exit code.
gate_verdict() {
  case $1 in
    0) echo "bit-identical" ;;
    1) echo "**DIFFERS**" ;;
    *) echo "GATE ERROR ($1)" ;;
  esac
}
summary="$out/summary.md"
{
  echo "| Platform | Build | Gate | int8 gate | Cells passed | Cells failed | Exports equal host | Build s | Exports + gates s |"
  echo "|---|---|---|---|---:|---:|---|---:|---:|"
} >"$summary"
overall=0
for p in "${selected[@]}"; do
  dir="$out/$p"
  echo "ci/cross.sh: $p: building the engine ($(describe "$p"))" >&2
  start=$(date +%s)
  libs=""
  if [[ -n $(debian_arch_for "$p") ]]; then
    # `out` may be relative to the project (the default) or absolute.
    case $out in /*) libs=$out/target-libs/$p ;; *) libs=$PWD/$out/target-libs/$p ;; esac
    unpack_target_libs "$p" "$libs"
  fi
  # shellcheck disable=SC2046
  if ! SAMEBITS_CROSS_LIBS=$libs cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DSAMEBITS_ENGINE_ONLY=ON "${launcher[@]}" \
       $(cmake_args_for "$p") >"$dir.configure.log" 2>&1 ||
     ! SAMEBITS_CROSS_LIBS=$libs cmake --build "$dir" -j "$jobs" --target samebits-engine >"$dir.build.log" 2>&1; then
    echo "ci/cross.sh: $p: the build failed; see $dir.configure.log and $dir.build.log" >&2
    tail -20 "$dir.build.log" >&2 || true
    echo "| $p | $(describe "$p") | BUILD FAILED | | 0 | 0 | | $(($(date +%s) - start)) | |" >>"$summary"
    overall=2
    continue
  fi
  built=$(date +%s)
  # `dir` may be relative to the project (the default) or absolute (--out).
  case $dir in /*) abs_dir=$dir ;; *) abs_dir=$PWD/$dir ;; esac
  wrapper="$abs_dir/engine.sh"
  engine="$abs_dir/bin/samebits-engine"
  printf '#!/bin/sh\n# Runs the %s engine as the harness'"'"'s child.\nexec %s "%s" "$@"\n' \
    "$p" "$(emulator_for "$p" "$libs")" "$engine" >"$wrapper"
  chmod +x "$wrapper"
  # Two threads first, briefly: an engine whose threads cannot start under
  # the emulator would otherwise hang every multi-threaded cell until its
  # timeout.
  if ! timeout 120 "$wrapper" run --checkpoint synthetic:tiny --scenario scenarios/classic.json \
       --kernels cpu --threads 2 >"$out/$p.smoke.log" 2>&1; then
    echo "ci/cross.sh: $p: the engine did not finish a 2-thread run of synthetic:tiny within 120 s" \
      "(see $out/$p.smoke.log and $wrapper)" >&2
    echo "| $p | $(describe "$p") | ENGINE BROKEN (2 threads) | | 0 | 0 | | $(($(date +%s) - start)) | |" >>"$summary"
    overall=2
    continue
  fi
  files="same"
  if ! export_all "$wrapper" "$out/files/$p" || ! diff -r "$host_files" "$out/files/$p" >"$out/$p.files.diff" 2>&1; then
    files="**DIFFER** ($p.files.diff)"
    overall=$((overall == 0 ? 1 : overall))
  fi
  # Emulated children are slow: a generous timeout, and a store of their own
  # so the host's run history stays the host's.
  echo "ci/cross.sh: $p: gating against references/portable.txt" >&2
  rc=0
  build/bin/samebits gate -q --engine "$wrapper" --math portable --config "$(configs_for "$p")" \
    "${selection[@]}" --timeout "$timeout" --db "$out/$p.db" --report-md "$out/$p.md" \
    >"$out/$p.gate.log" 2>&1 || rc=$?
  tail -3 "$out/$p.gate.log" >&2
  echo "ci/cross.sh: $p: gating the int8 profile against references/portable-int8.txt" >&2
  rc_int8=0
  build/bin/samebits gate -q --engine "$wrapper" --math portable --quant-dot int8 \
    --config "$(int8_configs_for "$p")" "${int8_selection[@]}" --timeout "$timeout" \
    --db "$out/$p.db" --report-md "$out/$p-int8.md" >"$out/$p-int8.gate.log" 2>&1 || rc_int8=$?
  tail -3 "$out/$p-int8.gate.log" >&2
  done_at=$(date +%s)
  passed=$(awk -F'|' '$2 ~ /^ PASS $/ {gsub(/ /, "", $3); n += $3} END {print n + 0}' \
    "$out/$p.md" "$out/$p-int8.md" 2>/dev/null)
  failed=$(awk -F'|' '$2 ~ /^ (FAIL|XPASS|UNRESOLVED|TIMEOUT) $/ {gsub(/ /, "", $3); n += $3} END {print n + 0}' \
    "$out/$p.md" "$out/$p-int8.md" 2>/dev/null)
  verdict=$(gate_verdict "$rc")
  verdict_int8=$(gate_verdict "$rc_int8")
  for code in "$rc" "$rc_int8"; do
    case $code in
      0) ;;
      1) overall=$((overall == 0 ? 1 : overall)) ;;
      *) overall=2 ;;
    esac
  done
  echo "| $p | $(describe "$p") | $verdict | $verdict_int8 | ${passed:-0} | ${failed:-0} | $files | $((built - start)) | $((done_at - built)) |" >>"$summary"
done

{
  echo "# Other platforms: every build against references/portable.txt and portable-int8.txt"
  echo
  cat "$summary"
  echo
  for p in "${selected[@]}"; do
    [[ -f "$out/$p.md" ]] || continue
    echo "## $p"
    echo
    sed 's/^## /### /' "$out/$p.md"
    echo
    [[ -f "$out/$p-int8.md" ]] || continue
    echo "## $p, --quant-dot int8"
    echo
    sed 's/^## /### /' "$out/$p-int8.md"
    echo
  done
} >"$out/report.md"
cat "$summary"
echo "ci/cross.sh: report in $out/report.md ($(($(date +%s) - script_start)) s in all)" >&2
exit "$overall"
