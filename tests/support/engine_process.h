// Runs the real samebits-engine binary as a child process, for the tests of
// its command line (tests/run), of `tokenize` and of text in scenarios.
#pragma once

#include <string>

namespace samebits::testing {

struct EngineResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs `samebits-engine ARGS` (already shell-quoted) with `input` on stdin
// and captures both output streams. The child is killed after 60 s, so a
// regression that reads or loops forever fails instead of hanging the
// suite (exit code 137 then). Leaves no file behind.
EngineResult RunEngine(const std::string& args, const std::string& input = "");

// Returns the path of llama.cpp's vocabulary `name` in ../shared/vocab.
std::string SharedVocab(const std::string& name);

// Returns the contents of the file at `path` ("" when it cannot be read).
std::string ReadWholeFile(const std::string& path);

}  // namespace samebits::testing
