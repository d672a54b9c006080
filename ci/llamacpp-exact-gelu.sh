#!/usr/bin/env bash
# Measures how far samebits-engine's Gemma logits are from llama.cpp's once
# llama.cpp's GELU table is out of the way. llama.cpp's CPU build computes
# F32 GELU through an F16 table (GGML_GELU_FP16 in ggml-cpu/vec.h: the input
# rounded to F16, the result an F16 entry), which alone keeps the Gemma
# files from the 1e-5 agreement the other families reach
# (tests/formats/windowed_agreement_test.cc). This builds a second libllama
# from the same v0.5.0 source with that one #define commented out (exact
# GELU through tanhf), the llama.cpp adapter against it, and prints, for the
# shared F32 Gemma files and a control (llama, no GELU), the largest
# |samebits reference - llama.cpp| over the largest |llama.cpp logit| and the
# argmax agreement, on all 48 positions of the shared 48-token prompt fed
# token by token, for stock llama.cpp and for the exact-GELU build.
# Not part of CI: the second libllama takes about 10 minutes of one core,
# cached under ~/.cache/samebits/llama.cpp-exact-gelu. Needs a built tree
# and adapters/llama.cpp/build.sh run once (it fetches the source).
#
#   ci/llamacpp-exact-gelu.sh [BUILD_DIR]     (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
case ${1:-} in -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
build=${1:-build}
root=$PWD
script=ci/llamacpp-exact-gelu.sh
# shellcheck source=ci/llamacpp-source.sh
source ci/llamacpp-source.sh
llamacpp_source
stock=$(adapters/llama.cpp/build.sh --print-path)
work=$cache/llama.cpp-exact-gelu
if [[ ! -x $work/adapter/samebits-llamacpp ]]; then
  rm -rf "$work" && mkdir -p "$work/src"
  (cd "$llama_src" && tar --exclude=.git -cf - .) | tar -xf - -C "$work/src"
  vec=$work/src/ggml/src/ggml-cpu/vec.h
  grep -q '^#define GGML_GELU_FP16$' "$vec" || { echo "$0: no GGML_GELU_FP16 in $vec" >&2; exit 2; }
  sed -i 's|^#define GGML_GELU_FP16$|// #define GGML_GELU_FP16  (samebits: exact GELU)|' "$vec"
  cmake -S "$work/src" -B "$work/lib" "${llamacpp_cmake_options[@]}" -DBUILD_SHARED_LIBS=OFF \
    -DLLAMA_BUILD_COMMON=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_TOOLS=OFF \
    -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_APP=OFF -DCMAKE_INSTALL_PREFIX="$work/prefix" >"$work/log" 2>&1
  cmake --build "$work/lib" -j "${SAMEBITS_JOBS:-2}" --target llama >>"$work/log" 2>&1
  cmake --install "$work/lib" >>"$work/log" 2>&1
  cmake -S adapters/llama.cpp -B "$work/adapter" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$work/prefix" -DLLAMA_CPP_REV="$llama_rev" >>"$work/log" 2>&1
  cmake --build "$work/adapter" -j "${SAMEBITS_JOBS:-2}" >>"$work/log" 2>&1
fi
shared=../shared/checkpoints
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for name in tiny_dense_gemma2_f32 tiny_dense_gemma3_f32 tiny_dense_llama_f32; do
  "$build/bin/samebits-engine" run --checkpoint "gguf:$shared/$name.gguf" --kernels reference \
    --scenario "$shared/llamacpp48-v512.json" --dump-logits "$out/$name.ours" >/dev/null
  for side in stock exact; do
    program=$stock
    [[ $side == exact ]] && program=$work/adapter/samebits-llamacpp
    "$program" run --checkpoint "gguf:$shared/$name.gguf" --scenario "$shared/llamacpp48-v512.json" \
      --feed token --dump-logits "$out/$name.$side" >/dev/null
  done
done
python3 - "$out" <<'PY'
import struct, sys
def load(path):
    data = open(path, 'rb').read()
    return struct.unpack('<%df' % (len(data) // 4), data)
folder, vocab = sys.argv[1], 512
for name in ['tiny_dense_gemma2_f32', 'tiny_dense_gemma3_f32', 'tiny_dense_llama_f32']:
    ours = load('%s/%s.ours' % (folder, name))
    for side in ['stock', 'exact']:
        theirs = load('%s/%s.%s' % (folder, name, side))
        rows = len(theirs) // vocab
        diff = max(abs(a - b) for a, b in zip(ours, theirs))
        scale = max(abs(b) for b in theirs)
        same = sum(
            ours[r * vocab:(r + 1) * vocab].index(max(ours[r * vocab:(r + 1) * vocab])) ==
            theirs[r * vocab:(r + 1) * vocab].index(max(theirs[r * vocab:(r + 1) * vocab]))
            for r in range(rows))
        print('%-22s llama.cpp %-5s relative %.3g  argmax equal %d/%d' %
              (name, side, diff / scale, same, rows))
PY
