// The numeric profile options of `run`, `bench` and `tune`, written once:
// `--math`, where transcendentals come from (engine/numerics/math.h), and
// `--quant-dot`, how quantized matrices meet their activations
// (engine/numerics/int8_dot.h). Both change the bits by design, so each
// profile has its own hashes.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "engine/numerics/int8_dot.h"
#include "engine/numerics/math.h"

namespace samebits::cli {

// Adds `--math portable|libm` to `sub`, stored in `*value`.
void AddMathOption(CLI::App* sub, std::string* value);

// Adds `--quant-dot exact|int8` to `sub`, stored in `*value`.
void AddQuantDotOption(CLI::App* sub, std::string* value);

// Return the profile `name` names. Throw UsageError for any other name.
numerics::MathProfile ResolveMathOption(const std::string& name);
numerics::QuantDot ResolveQuantDotOption(const std::string& name);

}  // namespace samebits::cli
