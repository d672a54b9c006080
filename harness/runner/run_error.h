// The error of a run that could not be made: a selection that runs nothing,
// an engine that is not there, a dump folder that cannot be created. The
// program prints it and exits 2 (not 1: nothing was checked).
#pragma once

#include <stdexcept>

namespace samebits::runner {

class RunError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace samebits::runner
