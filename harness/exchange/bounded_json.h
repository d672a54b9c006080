// Parsing JSON from an untrusted file within limits: a bundle of ten
// million `{}` (30 MB) once took over 1 GB while parsed and, under a memory
// limit, aborted the program. The limits are checked by a first pass that
// builds nothing, so a hostile file is refused before it costs much, and
// both passes take time linear in the text.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace samebits::exchange {

struct JsonLimits {
  int max_depth = 64;                      // nesting of arrays and objects
  uint64_t max_values = 50'000'000;        // values, arrays and objects together
  uint64_t max_memory_bytes = 1ull << 30;  // an estimate of what the document takes
};

// Returns the limits for a document of `text_bytes` bytes: the memory cap
// is eight times its size (a samebits bundle takes about four), at least
// 64 MiB and at most the default's.
JsonLimits LimitsForSize(uint64_t text_bytes);

// Returns `text` parsed. Throws std::runtime_error with a message (no file
// name: the caller adds it) when the text is not JSON, holds a number out
// of range (1e400), exceeds `limits`, or cannot be held in memory.
nlohmann::json ParseBoundedJson(const std::string& text, const JsonLimits& limits);

}  // namespace samebits::exchange
