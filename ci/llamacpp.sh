#!/usr/bin/env bash
# The CI step of the llama.cpp adapter: builds libllama and the adapter
# (adapters/llama.cpp/build.sh, cached under ~/.cache/samebits: about 13
# minutes cold on 2 cores, seconds warm), checks that the adapter gives
# llama.cpp's own logits bit for bit (its dump of the shared 48-token
# scenario against ../shared/checkpoints/llamacpp-logits), runs the
# adapter's ctests (configured with -DSAMEBITS_LLAMACPP_TESTS=ON), and a short
# determinism card (ci/card-llamacpp.sh --short: the F32 llama file and the
# Q4_K_M qwen3 file, every axis of engines/llama.cpp.json) into
# BUILD_DIR/reports/; then llama-server, built from the same source
# (adapters/llama.cpp/build.sh --llama-server: about 7 minutes once, cached)
# and its short card (ci/card-llama-server.sh --short: the server started
# per cell, the same two files). Needs npm (the first time) and a built tree.
#
#   ci/llamacpp.sh [BUILD_DIR]     (default: build)
#
# Exit 0: built, identical to llama.cpp's dump, and every difference the
# card found is declared KNOWN; anything else fails the step.
set -euo pipefail
cd "$(dirname "$0")/.."
case ${1:-} in -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
build=${1:-build}
[[ -x $build/bin/samebits ]] || { echo "ci/llamacpp.sh: build samebits first (ci/build.sh)" >&2; exit 2; }
adapter=$(adapters/llama.cpp/build.sh --print-path)
echo "ci/llamacpp.sh: adapter $adapter" >&2

shared=../shared/checkpoints
dump=$(mktemp)
trap 'rm -f "$dump"' EXIT
adapters/llama.cpp/samebits-llamacpp run --checkpoint "gguf:$shared/tiny_dense_llama_f32.gguf" \
  --scenario "$shared/llamacpp48-v512.json" --feed token --dump-logits "$dump" > /dev/null
theirs=$shared/llamacpp-logits/tiny_dense_llama_f32.t1.seq.f32
if ! cmp -s -n "$(stat -c %s "$theirs")" "$dump" "$theirs"; then
  echo "ci/llamacpp.sh: the adapter's logits differ from llama.cpp's own dump $theirs" >&2
  exit 1
fi
echo "ci/llamacpp.sh: logits byte-identical to $theirs" >&2
# The adapter's ctests (tests/harness/llamacpp_adapter_test.cc), which a
# build configures only on request.
cmake -S . -B "$build" -DSAMEBITS_LLAMACPP_TESTS=ON > /dev/null
cmake --build "$build" -j "$(nproc)" --target samebits_llamacpp_tests
ctest --test-dir "$build" -R '^LlamacppAdapter\.' --output-on-failure --no-tests=error
bash ci/check-data-skips.sh "$build"
ci/card-llamacpp.sh "$build" --short
adapters/llama.cpp/build.sh --llama-server
ci/card-llama-server.sh "$build" --short
