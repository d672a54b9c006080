#include "engine/cli/quant_dot_option.h"

namespace samebits::cli {

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

}  // namespace samebits::cli
