// Checkpoint specs on the command line: `synthetic:NAME[-DTYPE]`,
// `gguf:PATH`, `safetensors:DIR`, `llama2c:PATH`, or a bare path whose
// format is recognised from its contents.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include "engine/model/weights.h"

namespace samebits::formats {

// Returns `text` with NUL, the other control bytes and DEL written as \xNN:
// strings read from a file can be quoted in a message whole, since what()
// ends at the first NUL. Escaping twice changes nothing (messages are
// wrapped and rethrown).
std::string EscapeControlBytes(std::string_view text);

// A checkpoint that cannot be loaded: the message names the file (or spec)
// and what is wrong with it. The message quotes the file's own strings
// (keys, names, values) escaped (EscapeControlBytes).
class CheckpointError : public std::runtime_error {
 public:
  explicit CheckpointError(const std::string& what)
      : std::runtime_error(EscapeControlBytes(what)) {}
};

// Returns the loaded weights. Throws CheckpointError with a message a
// person can act on (unknown spec, unreadable or malformed file,
// unsupported architecture or tensor type).
model::ModelWeights LoadCheckpoint(const std::string& spec);

// Returns the loaded weights as LoadCheckpoint(spec) does; a synthetic
// checkpoint is read from (or, the first time, written to) the cache in
// `synthetic_cache_dir` (synthetic_cache.h) when that is not empty.
model::ModelWeights LoadCheckpoint(const std::string& spec, const std::string& synthetic_cache_dir);

}  // namespace samebits::formats
