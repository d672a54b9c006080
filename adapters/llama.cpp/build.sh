#!/usr/bin/env bash
# Builds the llama.cpp adapter (samebits-llamacpp) and the libllama it
# links, both outside the tree and cached, so a second run takes seconds.
#
#   adapters/llama.cpp/build.sh [--print-path] [--help]
#
# llama.cpp's source comes from the npm package node-llama-cpp, as in
# ci/compare-llamacpp.sh (ci/llamacpp-source.sh fetches it once into
# SAMEBITS_CACHE, default ~/.cache/samebits). libllama and ggml are built
# CPU-only and static (-DGGML_NATIVE=OFF, AVX-512 on, GGML_AMX_* off, no
# curl, no common/tools/examples/tests/server), only the `llama` target,
# with ccache, into $cache/llama.cpp-lib, and installed into
# $cache/llama.cpp-prefix; the adapter, its own CMake project (the product
# never links llama.cpp), into $cache/llama.cpp-adapter_<this tree's path>,
# where adapters/llama.cpp/samebits-llamacpp (the profile's command) finds
# it. Compiler output goes to build.log in each build folder, shown when a
# step fails. The adapter's path is printed last (alone with --print-path).
#
# --llama-server builds llama.cpp's own server instead (tools/server, the
# served engine of engines/llama-server.json) from the same source and
# options, plus llama-common and no web UI (LLAMA_BUILD_UI and
# LLAMA_USE_PREBUILT_UI off: nothing is downloaded), into
# $cache/llama-server-build (about 7 minutes on 2 cores once libllama's
# objects are in ccache), and prints its path.
# Jobs: SAMEBITS_JOBS, default 2. Exit 3, with nothing built, on a CPU
# without the instructions its options compile for (the x86-64 AVX-512
# kind: ci/llamacpp-source.sh's llamacpp_cpu_flags).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
script=adapters/llama.cpp/build.sh
print_path=0
server=0
while (($#)); do
  case $1 in
    --print-path) print_path=1; shift ;;
    --llama-server) server=1; shift ;;
    -h|--help) sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "$script: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
# shellcheck source=ci/llamacpp-source.sh
source "$root/ci/llamacpp-source.sh"
missing=$(llamacpp_missing_cpu_flags)
if [[ -n $missing ]]; then
  echo "$script: this CPU lacks $missing, which the llama.cpp build's options" \
    "(ci/llamacpp-source.sh, the x86-64 AVX-512 kind) compile for: what it built would die of" \
    "SIGILL; nothing built" >&2
  exit 3
fi
llamacpp_source
jobs=${SAMEBITS_JOBS:-2}
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
log() { ((print_path)) || echo "$script: $*" >&2; }
# Runs a build step with its output in $1/build.log; on failure shows the
# log's end and exits 1.
quiet() {
  local folder=$1; shift
  mkdir -p "$folder"
  "$@" >>"$folder/build.log" 2>&1 || {
    tail -n 40 "$folder/build.log" >&2
    echo "$script: failed: $* (whole log: $folder/build.log)" >&2
    exit 1
  }
}

# llama-server: a build folder of its own, stamped like libllama's. The
# later -D options win over llamacpp_cmake_options' LLAMA_BUILD_SERVER=OFF.
if ((server)); then
  server_build=$cache/llama-server-build
  stamp="$(git -C "$llama_src" rev-parse HEAD) ${llamacpp_cmake_options[*]} server"
  if [[ ! -f $server_build/stamp || $(cat "$server_build/stamp") != "$stamp" ||
        ! -x $server_build/bin/llama-server ]]; then
    log "building llama-server $llama_rev (once; cached in $server_build)"
    start=$(date +%s)
    rm -f "$server_build/build.log" "$server_build/stamp"
    quiet "$server_build" cmake -S "$llama_src" -B "$server_build" "${llamacpp_cmake_options[@]}" \
      "${launcher[@]}" -DBUILD_SHARED_LIBS=OFF -DLLAMA_BUILD_COMMON=ON -DLLAMA_BUILD_TESTS=OFF \
      -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_EXAMPLES=OFF \
      -DLLAMA_BUILD_APP=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF
    quiet "$server_build" cmake --build "$server_build" -j "$jobs" --target llama-server
    printf '%s\n' "$stamp" >"$server_build/stamp"
    log "llama-server built in $(($(date +%s) - start)) s"
  fi
  echo "$server_build/bin/llama-server"
  exit 0
fi

lib_build=$cache/llama.cpp-lib
prefix=$cache/llama.cpp-prefix
# The stamp names the source commit and the options: a different llama.cpp
# or option list builds again, the same one is reused.
stamp="$(git -C "$llama_src" rev-parse HEAD) ${llamacpp_cmake_options[*]}"
if [[ ! -f $prefix/stamp || $(cat "$prefix/stamp") != "$stamp" ]]; then
  log "building libllama $llama_rev (once; cached in $lib_build)"
  start=$(date +%s)
  rm -f "$lib_build/build.log"
  quiet "$lib_build" cmake -S "$llama_src" -B "$lib_build" "${llamacpp_cmake_options[@]}" \
    "${launcher[@]}" -DBUILD_SHARED_LIBS=OFF -DLLAMA_BUILD_COMMON=OFF -DLLAMA_BUILD_TESTS=OFF \
    -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_APP=OFF \
    -DCMAKE_INSTALL_PREFIX="$prefix"
  quiet "$lib_build" cmake --build "$lib_build" -j "$jobs" --target llama
  rm -rf "$prefix"
  quiet "$lib_build" cmake --install "$lib_build"
  printf '%s\n' "$stamp" >"$prefix/stamp"
  log "libllama built in $(($(date +%s) - start)) s"
fi

# One adapter build per source tree (worktrees share the cache).
adapter_build=$cache/llama.cpp-adapter${root//\//_}
rm -f "$adapter_build/build.log"
quiet "$adapter_build" cmake -S "$root/adapters/llama.cpp" -B "$adapter_build" \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" -DLLAMA_CPP_REV="$llama_rev" \
  "${launcher[@]}"
quiet "$adapter_build" cmake --build "$adapter_build" -j "$jobs"
echo "$adapter_build/samebits-llamacpp"
