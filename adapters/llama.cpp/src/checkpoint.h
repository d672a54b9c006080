// The GGUF file a checkpoint spec names, and its identity for `hello`.
// `gguf:PATH` and a path are read as they are; any other spec samebits loads
// (`synthetic:NAME[-DTYPE]`, `llama2c:PATH`, `safetensors:DIR`) is first
// written as GGUF by `samebits-engine export`, into a cache keyed by the
// spec, the engine binary and the source, so that both engines run the very
// same weights under the same spec.
#pragma once

#include <string>

namespace samebits::llamacpp {

struct CheckpointFile {
  std::string path;          // the GGUF file llama.cpp loads
  std::string weights_xxh3;  // XXH3-64 of the file's bytes, 16 hex digits
};

// Returns the GGUF file for `spec`, exporting it first when needed. Throws
// InputError for a missing file or a failed export, Unsupported for a model
// samebits' GGUF writer cannot describe.
CheckpointFile ResolveCheckpoint(const std::string& spec);

}  // namespace samebits::llamacpp
