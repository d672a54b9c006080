// Feeds arbitrary bytes to the GGUF loader: it must load them or throw
// CheckpointError, and never read outside them.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/formats/checkpoint.h"
#include "engine/formats/gguf.h"
#include "engine/formats/gguf_writer.h"
#include "engine/formats/vocabulary.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace samebits::formats;
  // An exact-size copy, so that a read past the end is a heap overflow.
  std::vector<std::byte> bytes(reinterpret_cast<const std::byte*>(data),
                               reinterpret_cast<const std::byte*>(data) + size);
  try {
    const samebits::model::ModelWeights w = LoadGgufBytes(bytes, nullptr, "fuzz.gguf");
    // What loads must also write back and load again.
    const std::vector<std::byte> again = GgufBytes(w);
    LoadGgufBytes(again, nullptr, "fuzz-again.gguf");
    if (w.vocabulary) {
      const auto ids = w.vocabulary->Tokenize("Hello world, fuzz \xE2\x9C\x93\n", true);
      w.vocabulary->Detokenize(ids);
    }
  } catch (const CheckpointError&) {
  }
  return 0;
}
