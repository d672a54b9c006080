// The one way the harness reads JSON it did not write itself: engine
// profiles, scenarios, suites, equivalences, bundles, stored axis values.
// Every such document is untrusted, so:
//   - a file is read up to a limit and no further (`--engine-profile
//     /dev/zero` once grew past 5 GB and never returned), and a failed
//     allocation is an error, never an empty document;
//   - its nesting, value count and memory are checked by a first pass that
//     builds nothing (a bundle of ten million `{}`, 30 MB, once took over
//     1 GB while parsed), and both passes take time linear in the text;
//   - a key that appears twice in one object is refused: nlohmann keeps the
//     last, so a profile with two `command` keys ran the second while a
//     reviewer read the first, and a signed bundle with two `signature` keys
//     verified.
// tests/harness/json_inputs_test.cc holds every kind of input to these
// rules, and harness.OneJsonReader keeps every parse of the harness here.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

namespace samebits::harness {

struct JsonLimits {
  int max_depth = 64;                      // nesting of arrays and objects
  uint64_t max_values = 50'000'000;        // values, arrays and objects together
  uint64_t max_memory_bytes = 1ull << 30;  // an estimate of what the document takes
};

// The most bytes of each kind of JSON file the harness reads. A profile,
// suite or equivalence list is a page of hand-written text; a scenario may
// list a long prompt's token ids (the engine's own limit is 2^20 of them).
inline constexpr uint64_t kMaxProfileBytes = 1ull << 20;
inline constexpr uint64_t kMaxSuiteBytes = 1ull << 20;
inline constexpr uint64_t kMaxEquivalencesBytes = 1ull << 20;
inline constexpr uint64_t kMaxScenarioBytes = 16ull << 20;

// Returns the limits for a document of `text_bytes` bytes: the memory cap
// is eight times its size (a samebits bundle takes about four), at least
// 64 MiB and at most the default's.
JsonLimits LimitsForSize(uint64_t text_bytes);

// Returns `text` parsed. Throws std::runtime_error with a message (no file
// name: the caller adds it) when the text is not JSON, holds a number out
// of range (1e400), repeats a key within one object (naming the key and
// the object's JSON pointer), exceeds `limits`, or cannot be held in memory.
nlohmann::json ParseBoundedJson(const std::string& text, const JsonLimits& limits);

// Returns the bytes of the file at `path`, read up to `max_bytes` and no
// further, whatever the file is (a regular file, a pipe, a device). Throws
// std::runtime_error without the file's name ("N bytes is larger than the
// M-byte limit ...", "cannot be read: ...", "is a folder").
std::string ReadBoundedFile(const std::string& path, uint64_t max_bytes);

// Returns the file at `path` parsed by ParseBoundedJson, read by
// ReadBoundedFile. Throws std::runtime_error "<what> <path>: <why>"
// (`what` names the kind: "engine profile", "scenario").
nlohmann::json ReadJsonFile(const std::string& path, const std::string& what, uint64_t max_bytes);

}  // namespace samebits::harness
