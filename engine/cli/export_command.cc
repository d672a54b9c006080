// `samebits-engine export SPEC OUT`: writes any checkpoint (synthetic ones
// included) as GGUF v3 (OUT ending in .gguf) or as a safetensors directory
// with config.json (any other OUT), so that other engines can run the very
// weights whose hashes samebits records; `--type` requantizes the matrices
// first (q8_0 ... q6_k, f32, f16, bf16). Safetensors has no block types: a
// quantized checkpoint is written there as its dequantized F32 values.
#include <cstdio>
#include <string>

#include "engine/cli/commands.h"
#include "engine/formats/checkpoint.h"
#include "engine/formats/gguf_writer.h"
#include "engine/formats/safetensors.h"
#include "engine/model/quantized_weights.h"
#include "engine/model/tensor_spec.h"

namespace samebits::cli {
namespace {

class ExportCommand : public Command {
 public:
  void Define(CLI::App& sub) override {
    sub.add_option("checkpoint", spec_,
                   "The checkpoint to export: synthetic:NAME[-DTYPE], gguf:PATH, safetensors:DIR, "
                   "llama2c:PATH or a path.")
        ->option_text("SPEC")
        ->required();
    sub.add_option("output", out_,
                   "Where to write: a path ending in .gguf writes GGUF v3; any other path is a "
                   "directory that receives config.json and model.safetensors.")
        ->option_text("OUT")
        ->required();
    sub.add_option("--format", format_,
                   "The output format, when the path does not say: gguf or safetensors.")
        ->option_text("FORMAT")
        ->check(CLI::IsMember({"gguf", "safetensors"}));
    sub.add_option("--type", type_,
                   "Store every matrix and the token embedding as TYPE: a ggml block type, "
                   "quantized by ggml's reference quantizers (no importance matrix, as "
                   "llama-quantize without --imatrix), or a plain dtype rounded to nearest even. "
                   "Norms, biases and the MoE router keep their type, as llama-quantize keeps "
                   "them F32. Rows that fit no k-quant block fall back to Q5_0/Q5_1/Q8_0 as "
                   "llama-quantize does (then F16), with a note. Example: --type q4_k.")
        ->option_text(model::WeightTypeChoices())
        ->check([](const std::string& v) {
          model::WeightType t;
          return model::ParseWeightType(v, &t) ? std::string()
                                               : "unknown type '" + v + "' (use " +
                                                     model::WeightTypeChoices() + ")";
        });
    sub.add_option("--shards", shards_,
                   "Split a safetensors export into this many files with an index.")
        ->option_text("N")
        ->check(CLI::Range(1, 1000));
  }

  int Execute() override {
    model::ModelWeights weights = LoadCheckpointForCommand(spec_);
    if (!type_.empty()) {
      model::WeightType type;
      model::ParseWeightType(type_, &type);
      std::vector<std::string> notes;
      weights = model::ConvertWeights(weights, type, &notes);
      for (const std::string& n : notes) std::fprintf(stderr, "note: %s\n", n.c_str());
    }
    const bool gguf = format_.empty()
                          ? out_.size() >= 5 && out_.compare(out_.size() - 5, 5, ".gguf") == 0
                          : format_ == "gguf";
    if (gguf) {
      formats::WriteGguf(weights, out_);
    } else {
      formats::WriteSafetensors(weights, out_, shards_);
    }
    std::fprintf(stderr, "wrote %s (%s, %lld parameters, weights %s)\n", out_.c_str(),
                 gguf ? "GGUF v3" : "safetensors",
                 static_cast<long long>(model::CountParameters(weights)),
                 model::HashWeights(weights).c_str());
    return 0;
  }

 private:
  std::string spec_;
  std::string out_;
  std::string format_;
  std::string type_;
  int shards_ = 1;
};

const bool kRegistered =
    RegisterCommand({"export", "Writes a checkpoint as GGUF v3 or safetensors (for other engines).",
                     50, [] { return MakeCommand<ExportCommand>(); }});

}  // namespace
}  // namespace samebits::cli
