// The two ways a run of the adapter ends early (PROTOCOL.md): a
// configuration or checkpoint llama.cpp cannot run here (`unsupported`, a
// cell the harness reports UNSUPPORTED) and bad input (`error`, exit 2).
#pragma once

#include <stdexcept>

namespace samebits::llamacpp {

// This configuration, checkpoint or scenario cannot run in llama.cpp here:
// the message says which, for a person.
class Unsupported : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Bad input (a missing file, a scenario that does not fit the checkpoint):
// the message names the file and the problem.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace samebits::llamacpp
