// The `--quant-dot` option of `run` and `bench`: how quantized matrices
// meet their activations (engine/numerics/int8_dot.h).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace samebits::cli {

// Adds `--quant-dot exact|int8` to `sub`, stored in `*value`.
void AddQuantDotOption(CLI::App* sub, std::string* value);

}  // namespace samebits::cli
