// Checkpoint specs on the command line: `synthetic:NAME[-DTYPE]`,
// `gguf:PATH`, `safetensors:DIR`, `llama2c:PATH`, or a bare path whose
// format is recognised from its contents.
#pragma once

#include <stdexcept>
#include <string>

#include "engine/model/weights.h"

namespace samebits::formats {

// A checkpoint that cannot be loaded: the message names the file (or spec)
// and what is wrong with it.
class CheckpointError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Returns the loaded weights. Throws CheckpointError with a message a
// person can act on (unknown spec, unreadable or malformed file,
// unsupported architecture or tensor type).
model::ModelWeights LoadCheckpoint(const std::string& spec);

}  // namespace samebits::formats
