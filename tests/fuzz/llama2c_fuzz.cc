// Feeds arbitrary bytes to the llama2.c `.bin` loader.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/formats/checkpoint.h"
#include "engine/formats/llama2c.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace samebits::formats;
  std::vector<std::byte> bytes(reinterpret_cast<const std::byte*>(data),
                               reinterpret_cast<const std::byte*>(data) + size);
  try {
    LoadLlama2cBytes(bytes, nullptr, "fuzz.bin");
  } catch (const CheckpointError&) {
  }
  return 0;
}
