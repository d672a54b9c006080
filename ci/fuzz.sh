#!/usr/bin/env bash
# Builds the libFuzzer targets of the checkpoint loaders with clang
# (-fsanitize=fuzzer,address,undefined) and runs each for SECONDS seconds,
# one after another, seeded from the real checkpoints in ../shared and from
# tiny hand-made files. Crashes are left in BUILD/fuzz-artifacts/TARGET/.
#
#   ci/fuzz.sh [SECONDS] [BUILD_DIR] [TARGET...]
#   (targets: gguf_fuzz llama2c_fuzz safetensors_fuzz vocabulary_fuzz tokenizer_fuzz)
set -euo pipefail
seconds=${1:-60}
root=$(cd "$(dirname "$0")/.." && pwd)
build=${2:-$root/build-fuzz}
shift $(( $# > 2 ? 2 : $# )) || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(gguf_fuzz llama2c_fuzz safetensors_fuzz vocabulary_fuzz tokenizer_fuzz)
shared=${SAMEBITS_CHECKPOINTS:-$root/../shared/checkpoints}
# tokenizer_fuzz also tokenizes with llama.cpp's vocabularies found here.
export SAMEBITS_VOCAB_DIR=${SAMEBITS_VOCAB_DIR:-$root/../shared/vocab}
cxx=${CXX_FUZZ:-clang++-14}

src=${SAMEBITS_SOURCE:-$root}
cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSAMEBITS_FUZZ=ON \
  -DCMAKE_CXX_COMPILER="$cxx" >/dev/null
cmake --build "$build" -j2 --target $(printf 'samebits_%s ' "${targets[@]}")

# Seeds: the real files, and tiny valid files written here so that the
# fuzzer starts from inputs it can mutate cheaply.
seeds=$build/fuzz-seeds
mkdir -p "$seeds"/{gguf_fuzz,llama2c_fuzz,safetensors_fuzz,vocabulary_fuzz,tokenizer_fuzz}
python3 - "$seeds" "$shared" <<'PY'
import os, struct, sys
seeds, shared = sys.argv[1], sys.argv[2]
def put(target, name, data):
    open(os.path.join(seeds, target, name), 'wb').write(data)
def shared_file(name):
    p = os.path.join(shared, name)
    return open(p, 'rb').read() if os.path.exists(p) else None
# A valid tiny llama GGUF: vocab 4, d 2, 1 layer, 1 head, ffn 2, tied output.
def s(x): x = x.encode(); return struct.pack('<Q', len(x)) + x
kv = [s('general.architecture') + struct.pack('<I', 8) + s('llama')]
for k, v in [('block_count', 1), ('embedding_length', 2), ('attention.head_count', 1), ('feed_forward_length', 2)]:
    kv.append(s('llama.' + k) + struct.pack('<II', 4, v))
kv.append(s('llama.attention.layer_norm_rms_epsilon') + struct.pack('<If', 6, 1e-5))
kv.append(s('tokenizer.ggml.model') + struct.pack('<I', 8) + s('llama'))
kv.append(s('tokenizer.ggml.tokens') + struct.pack('<IIQ', 9, 8, 4) + s('<unk>') + s('<s>') + s('</s>') + s('\u2581a'))
tensors = [('token_embd.weight', [2, 4])] + [('blk.0.' + n, d) for n, d in [
    ('attn_norm.weight', [2]), ('attn_q.weight', [2, 2]), ('attn_k.weight', [2, 2]), ('attn_v.weight', [2, 2]),
    ('attn_output.weight', [2, 2]), ('ffn_norm.weight', [2]), ('ffn_gate.weight', [2, 2]), ('ffn_up.weight', [2, 2]),
    ('ffn_down.weight', [2, 2])]] + [('output_norm.weight', [2])]
info, off = b'', 0
for name, dims in tensors:
    n = 1
    for d in dims: n *= d
    info += s(name) + struct.pack('<I', len(dims)) + b''.join(struct.pack('<Q', d) for d in dims) + struct.pack('<IQ', 0, off)
    off += (n * 4 + 31) // 32 * 32
head = b'GGUF' + struct.pack('<IQQ', 3, len(tensors), len(kv)) + b''.join(kv) + info
head += b'\0' * (-len(head) % 32)
put('gguf_fuzz', 'tiny.gguf', head + struct.pack('<f', 0.25) * (off // 4))
# A valid tiny llama2.c file: dim 2, hidden 2, 1 layer, 1 head, vocab 4, seq 8.
dim, hid, vocab = 2, 2, 4
n = vocab*dim + dim + 4*dim*dim + dim + 3*dim*hid + dim
put('llama2c_fuzz', 'tiny.bin', struct.pack('<7i', dim, hid, 1, 1, 1, vocab, 8) + struct.pack('<f', 0.5) * n)
put('llama2c_fuzz', 'tiny-unshared.bin', struct.pack('<7i', dim, hid, 1, 1, 1, -vocab, 8) + struct.pack('<f', 0.5) * (n + 8 + vocab*dim))
# A valid tiny safetensors file for the fuzzer's fixed config (first byte 0).
import json
names = {'model.embed_tokens.weight': [4, 2], 'model.norm.weight': [2],
         'model.layers.0.input_layernorm.weight': [2], 'model.layers.0.post_attention_layernorm.weight': [2]}
for p in ['self_attn.q_proj', 'self_attn.k_proj', 'self_attn.v_proj', 'self_attn.o_proj', 'mlp.gate_proj', 'mlp.up_proj', 'mlp.down_proj']:
    names['model.layers.0.%s.weight' % p] = [2, 2]
hdr, off = {}, 0
for k, shape in names.items():
    n = 1
    for d in shape: n *= d
    hdr[k] = {'dtype': 'F32', 'shape': shape, 'data_offsets': [off, off + 4*n]}; off += 4*n
h = json.dumps(hdr).encode(); h += b' ' * (-len(h) % 8)
put('safetensors_fuzz', 'tiny', b'\0' + struct.pack('<Q', len(h)) + h + struct.pack('<f', 0.25) * (off // 4))
# A tiny tokenizer.bin with a text prefix (first byte: text length).
pieces = ['<unk>', '\n<s>\n', '\n</s>\n', '<0x0A>', ' ', 'a', 'b', ' a', 'ab', ' ab']
tok = struct.pack('<i', 8) + b''.join(struct.pack('<fi', -i, len(p)) + p.encode() for i, p in enumerate(pieces))
put('vocabulary_fuzz', 'tiny', bytes([6]) + b'ab ab\n' + tok)
for name in ['stories260K.gguf', 'tiny_dense_llama_bf16.gguf', 'tiny_moe_mixtral_f32.gguf', 'llama-2-tiny-random.gguf']:
    d = shared_file(name)
    if d: put('gguf_fuzz', name, d)
d = shared_file('stories260K.bin')
if d: put('llama2c_fuzz', 'stories260K.bin', d)
d = shared_file('tokenizer.bin')
if d: put('vocabulary_fuzz', 'tokenizer.bin', bytes([11]) + b'Hello world' + d)
# Text for every tokenizer (first byte: vocabulary and BOS): llama.cpp's test
# inputs, invalid UTF-8 and long runs of one character.
vocab = os.environ.get('SAMEBITS_VOCAB_DIR', '')
texts = [b'Hello world', " \u00c4pfel \u00bd 1314151 \U0001F680 \u200d\n\t".encode(), b'\xff\xfe\xc3(\xe2\x82', b' ' * 4096, b'a' * 4096, b'\n' * 512, b'3' * 600]
inp = os.path.join(vocab, 'ggml-vocab-qwen2.gguf.inp')
if os.path.exists(inp):
    texts += open(inp, 'rb').read().split(b'\n__ggml_vocab_test__\n')
for i, t in enumerate(texts):
    for v in range(7):
        put('tokenizer_fuzz', '%d-%d' % (i, v), bytes([2 * v + (i & 1)]) + t)
PY

status=0
for t in "${targets[@]}"; do
  corpus=$build/fuzz-corpus/$t
  artifacts=$build/fuzz-artifacts/$t
  mkdir -p "$corpus" "$artifacts"
  echo "== $t: ${seconds}s"
  # Real files longer than FUZZ_MAX_LEN are cut to it: their headers and
  # metadata still get fuzzed, and executions stay fast.
  if ! nice -n 19 "$build/bin/samebits_$t" "$corpus" "$seeds/$t" -max_total_time="$seconds" \
      -max_len="${FUZZ_MAX_LEN:-262144}" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
      -artifact_prefix="$artifacts/" 2>"$build/fuzz-$t.log"; then
    echo "   CRASH or failure: see $build/fuzz-$t.log and $artifacts/"
    status=1
  fi
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb|^#[0-9]+ *DONE" "$build/fuzz-$t.log" | sed 's/^/   /' || true
done
exit $status
