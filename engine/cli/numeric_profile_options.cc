#include "engine/cli/numeric_profile_options.h"

#include "engine/cli/commands.h"

namespace samebits::cli {

void AddMathOption(CLI::App* sub, std::string* value) {
  sub->add_option("--math", *value,
                  "Where transcendentals come from: the engine's portable implementations or the "
                  "platform's libm (default: portable).")
      ->option_text("portable|libm")
      ->check(CLI::IsMember({"portable", "libm"}));
}

void AddQuantDotOption(CLI::App* sub, std::string* value) {
  sub->add_option("--quant-dot", *value,
                  "How block-quantized weights (Q8_0 ... Q6_K) meet the activations: exact "
                  "multiplies each weight's exact f32 value; int8 rounds the activations to "
                  "8 bits per block and sums integer products, as llama.cpp does, with its own "
                  "hashes (engine/numerics/README.md, C12). F32/F16/BF16 weights compute the "
                  "same in both (default: exact).")
      ->option_text("exact|int8")
      ->check(CLI::IsMember({"exact", "int8"}));
}

numerics::MathProfile ResolveMathOption(const std::string& name) {
  numerics::MathProfile profile{};
  if (!numerics::ParseMathProfile(name, &profile)) {
    throw UsageError("unknown math profile '" + name + "' (use portable or libm)");
  }
  return profile;
}

numerics::QuantDot ResolveQuantDotOption(const std::string& name) {
  numerics::QuantDot profile{};
  if (!numerics::ParseQuantDot(name, &profile)) {
    throw UsageError("unknown --quant-dot profile '" + name + "' (use exact or int8)");
  }
  return profile;
}

}  // namespace samebits::cli
