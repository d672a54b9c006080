# shellcheck shell=bash
# llama.cpp's source, shared by ci/compare-llamacpp.sh and
# adapters/llama.cpp/build.sh: source it after setting `script` (the
# caller's name for messages) and `root` (the repository), then call
# `llamacpp_source`.
#
# llama.cpp comes from the npm package `node-llama-cpp`, whose `llama/`
# folder holds llama.cpp's source as a git bundle (3.22.x pins v0.5.0). The
# package is taken from NODE_LLAMA_CPP_DIR, ./node_modules, or `npm pack`
# into the cache folder (SAMEBITS_CACHE, default ~/.cache/samebits); the
# bundle is cloned once into $cache/llama.cpp. Nothing else is downloaded.
# shellcheck disable=SC2154,SC2034  # `script` and `root` are the caller's; what it sets is theirs

# Prints the folder of the node-llama-cpp package, fetching it with
# `npm pack` into $cache when no other copy is found.
llamacpp_package_dir() {
  local d
  for d in "${NODE_LLAMA_CPP_DIR:-}" "$root/node_modules/node-llama-cpp" "$cache/node-llama-cpp/package"; do
    [[ -n $d && -f $d/llama/gitRelease.bundle ]] && { echo "$d"; return; }
  done
  command -v npm >/dev/null || { echo "$script: npm is needed to fetch node-llama-cpp (apt-get install npm)" >&2; exit 2; }
  mkdir -p "$cache/node-llama-cpp"
  (cd "$cache/node-llama-cpp" && npm pack --silent node-llama-cpp >pack.txt && tar xzf "$(tail -n1 pack.txt)")
  [[ -f $cache/node-llama-cpp/package/llama/gitRelease.bundle ]] ||
    { echo "$script: node-llama-cpp's package holds no llama/gitRelease.bundle" >&2; exit 2; }
  echo "$cache/node-llama-cpp/package"
}

# Sets `cache`, `llama_pkg` (the package folder), `llama_src` (llama.cpp's
# source tree, cloned from the bundle once) and `llama_rev` (the tag the
# package pins, else `git describe`).
llamacpp_source() {
  cache=${SAMEBITS_CACHE:-$HOME/.cache/samebits}
  mkdir -p "$cache"
  llama_pkg=$(llamacpp_package_dir)
  llama_src=$cache/llama.cpp
  if [[ ! -d $llama_src/.git ]]; then
    git clone -q "$llama_pkg/llama/gitRelease.bundle" "$llama_src" 2>/dev/null ||
      { echo "$script: cannot clone $llama_pkg/llama/gitRelease.bundle" >&2; exit 2; }
  fi
  llama_rev=$(git -C "$llama_src" describe --tags --always 2>/dev/null || echo unknown)
  if [[ -f $llama_pkg/llama/llama.cpp.info.json ]]; then
    llama_rev=$(grep -o '"tag": *"[^"]*"' "$llama_pkg/llama/llama.cpp.info.json" | cut -d'"' -f4)
  fi
}

# The CMake options of a CPU-only llama.cpp build that every machine of the
# x86-64 AVX-512 kind runs alike: no -march=native (GGML_NATIVE=OFF), the
# AVX-512 family on, the GGML_AMX_* options off (the native build's AMX
# path crashes on quantized files on some machines), no curl or OpenSSL.
llamacpp_cmake_options=(
  -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=OFF
  -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON
  -DGGML_AVX512=ON -DGGML_AVX512_VBMI=ON -DGGML_AVX512_VNNI=ON -DGGML_AVX512_BF16=ON
  -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF
  -DLLAMA_BUILD_SERVER=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_CURL=OFF
)

# The CPU flags (as /proc/cpuinfo names them) that llamacpp_cmake_options'
# AVX-512 family compiles for: a build made with them dies of SIGILL in
# ggml_cpu_init on a CPU without them (an x86-64 machine without AVX-512
# ran CI once), so nothing is built or run there.
llamacpp_cpu_flags=(avx2 fma f16c bmi2 avx512f avx512cd avx512vl avx512dq avx512bw avx512vbmi
  avx512_vnni avx512_bf16)

# Prints the flags of `$@` (default llamacpp_cpu_flags) this CPU lacks,
# space separated; nothing when it has them all.
llamacpp_missing_cpu_flags() {
  local have flag missing=() wanted=("$@")
  ((${#wanted[@]})) || wanted=("${llamacpp_cpu_flags[@]}")
  have=" $(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null | cut -d: -f2) "
  for flag in "${wanted[@]}"; do
    [[ $have == *" $flag "* ]] || missing+=("$flag")
  done
  echo "${missing[*]}"
}

# A second kind, for timing only (ci/compare-llamacpp.sh): the x86-64 AVX2
# kind, for a CPU without AVX-512 (an AMD Zen 3 ran the project once). Its
# numbers are not the adapter's (which stays on the pinned kind above, where
# its cards' known differences were measured), but a speed comparison on such
# a CPU is only fair against llama.cpp built for what the CPU has, as
# samebits-engine picks its kernels by what the CPU has.
llamacpp_avx2_cmake_options=(
  -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=OFF
  -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON
  -DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF -DGGML_AVX512_VNNI=OFF -DGGML_AVX512_BF16=OFF
  -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF
  -DLLAMA_BUILD_SERVER=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_CURL=OFF
)
llamacpp_avx2_cpu_flags=(avx2 fma f16c bmi2)

# For a build that only times llama.cpp: sets `llama_kind` ("avx512", the
# pinned kind, where the CPU has it; else "avx2"), `llama_kind_options` (its
# CMake options) and `llama_kind_build` (its build folder's name under the
# source: "build" for the pinned kind, as before, "build-avx2" for the
# other). Exits 3, saying what is missing, on a CPU with neither.
llamacpp_timing_kind() {
  local missing
  if [[ -z $(llamacpp_missing_cpu_flags) ]]; then
    llama_kind=avx512 llama_kind_build=build
    llama_kind_options=("${llamacpp_cmake_options[@]}")
    return
  fi
  missing=$(llamacpp_missing_cpu_flags "${llamacpp_avx2_cpu_flags[@]}")
  if [[ -n $missing ]]; then
    echo "$script: this CPU lacks $missing: neither llama.cpp build kind (AVX-512, AVX2) runs on it" >&2
    exit 3
  fi
  llama_kind=avx2 llama_kind_build=build-avx2
  llama_kind_options=("${llamacpp_avx2_cmake_options[@]}")
}
