// Feeds arbitrary bytes to the safetensors parser, then binds what parses
// against a config.json. The input is split: the first byte gives the
// length of the config.json text that follows (0: a fixed tiny llama),
// the rest is the .safetensors file.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/formats/checkpoint.h"
#include "engine/formats/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace samebits::formats;
  if (size < 1) return 0;
  size_t config_len = data[0];
  if (1 + config_len > size) return 0;
  std::string config(reinterpret_cast<const char*>(data + 1), config_len);
  if (config_len == 0) {
    config =
        R"({"architectures":["LlamaForCausalLM"],"vocab_size":4,"hidden_size":2,"num_hidden_layers":1,)"
        R"("num_attention_heads":1,"intermediate_size":2,"rms_norm_eps":1e-5,"tie_word_embeddings":true})";
  }
  const uint8_t* file = data + 1 + config_len;
  std::vector<std::byte> bytes(reinterpret_cast<const std::byte*>(file),
                               reinterpret_cast<const std::byte*>(file) + (size - 1 - config_len));
  try {
    TensorTable table;
    ParseSafetensors(bytes, "fuzz.safetensors", table);
    BindSafetensors(config, table, "fuzz", std::make_shared<LoadedStorage>());
  } catch (const CheckpointError&) {
  }
  return 0;
}
